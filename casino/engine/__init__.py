"""The pure rule engine: no Django, no I/O, no clock, no randomness of its own.

- `cards`, `rules` (RULESETS), `shoe` (Shoe, StackedShoe, FastShoe): the data.
- `commands` -> `decider.decide/step/expire` -> `events`; `evolve.evolve/replay` fold them
  into `state.RoundState`. `banked` and `duel` hold the play logic, `settle` the payouts.
- `money.ledger_legs(event)`: the money each event moves; `views.view`: what a viewer sees.
- `strategy`, `odds`, `simulator`: basic strategy, exact dealer odds, the RTP simulator.

docs/rules.md maps every rule to its seed sentence and the test proving it.
"""
