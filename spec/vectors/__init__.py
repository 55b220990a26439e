"""Language-neutral conformance vectors: recorded op sequences and the model's answers to them."""
