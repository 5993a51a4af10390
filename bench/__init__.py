"""Benchmarks of the run surface: ``python -m bench run`` (see bench/RESULTS.md)."""
