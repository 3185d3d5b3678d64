"""The rule engine's logic as of commit 2a77ebb, before the issue 3 speed work: the oracle the
optimised engine is compared with (tests/engine/test_equivalence.py).

decider, banked, duel, run and evolve are copied verbatim except their imports of each other;
the data modules (events, commands, state, rules, cards, settle, insurance) are the engine's
own, so events and states compare with ==. This version folds every event one by one with
`evolve`'s handlers: the straightforward reference for the batched folds. Do not edit it to
follow an engine change: an intended change to the events is a change to the event contract.
"""
