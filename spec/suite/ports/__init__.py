"""The port under test: a driver program over a pipe, or a request handler in this process."""
