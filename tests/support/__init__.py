"""Test infrastructure shared by tests and benchmarks (kept out of the installed package)."""
