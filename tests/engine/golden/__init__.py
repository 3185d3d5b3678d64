"""Golden event streams: seeded rounds of every rule set, recorded with the engine as it was
when they were generated (see regenerate.py), replayed by tests/engine/test_golden.py."""
