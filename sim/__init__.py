"""VOPR-style seeded whole-system simulation (issue 9): `python -m sim --seed S`.

One integer seed drives many simulated players through the round service and the HTTP API
(and a few WebSocket clients), in every rule set, with faults injected from the same seed,
and checks the system's invariants after every step. See docs/operations.md, "Seeded
simulation".
"""
