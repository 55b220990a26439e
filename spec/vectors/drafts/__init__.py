"""The drafts of every generated vector, one module per invariant group."""
