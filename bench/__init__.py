"""Benchmarks that print figures (not run as tests): `python -m bench <name> [--quick] [--json]`."""
