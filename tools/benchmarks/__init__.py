"""Benchmarks of the suite's own tools (run as scripts; see ``docs/benchmarks.md``)."""
