/** The kit's public surface: exact-number JSON, JSON equality, payload validation, the protocol loop. */
export * from './json.mjs'
export * from './equality.mjs'
export * from './schemas.mjs'
export * from './loop.mjs'
