"""Today's engine against the golden event streams (tests/engine/golden, regenerate.py).

Every recorded command, replayed through `step` with the same shoe and clock, gives exactly
the recorded events (types, fields, order) or the recorded refusal; folding the events one
by one with `evolve` gives the state `step` returned after each command (so the decider's
batched folds agree with the plain fold); and the files cover every rule set's branches.
"""

from __future__ import annotations

from typing import Any

import pytest

from casino.engine.decider import evolve, replay
from casino.engine.events import Event, event_from_dict
from casino.engine.evolve import RoundState
from casino.engine.rules import RULESETS

from .golden.codec import GOLDEN, command_from_dict, load, run_step, shoe_from

SCENARIOS = [
    pytest.param(scenario, id=f"{name}-{i}")
    for name in sorted(RULESETS)
    for i, scenario in enumerate(load(GOLDEN / f"{name}.json"))
]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_engine_answers_every_golden_command_as_recorded(scenario: dict[str, Any]) -> None:
    shoe = shoe_from(scenario["shoe"])
    state: RoundState | None = None
    folded: RoundState | None = None
    stream: list[Event] = []
    for n, recorded in enumerate(scenario["steps"]):
        command = command_from_dict(recorded["command"], scenario)
        answer, state = run_step(state, command, recorded["at"], shoe)
        expected = {k: v for k, v in recorded.items() if k in ("events", "error")}
        assert answer == expected, f"step {n}: {command}"
        for data in answer.get("events", []):
            event = event_from_dict(data)
            folded = evolve(folded, event)
            stream.append(event)
        assert folded == state, f"step {n}: the fold of the events is not the live state"
    assert replay(stream) == state


def test_the_golden_rounds_cover_every_rule_sets_branches() -> None:
    common = {
        "BetPlaced", "BettingClosed", "PlayerCardDealt", "PlayerStood", "RoundSettled",
        "RoundVoided", "ServerSeedRevealed", "player_bust", "outcome:win", "outcome:lose",
        "timeout:PlayerStood", "void:malfunction:open", "void:malfunction:settled",
    }  # fmt: skip
    banked = common | {
        "DealerCardDealt", "DealerPeeked", "HandDoubled", "HandSplit", "HoleCardRevealed",
        "InsuranceOffered", "InsuranceTaken", "InsuranceDeclined", "TurnStarted", "peek:True",
        "peek:False", "split_aces", "double_after_split", "dealer_bust", "outcome:push",
        "outcome:blackjack", "outcome:bust", "timeout:InsuranceDeclined", "void:no_bets:open",
    }  # fmt: skip
    needed = {
        "classic": banked | {"EvenMoneyTaken", "resplit"},
        "atlantic_city": banked | {"several_boxes"},
        "duel_classic": banked | {"resplit"},
        "duel": common | {"DuelTimerStarted", "CardsRevealed", "outcome:split"},
    }
    for name in sorted(RULESETS):
        covered: set[str] = set()
        for scenario in load(GOLDEN / f"{name}.json"):
            covered.update(scenario.get("covers", ()))
        assert needed[name] <= covered, (name, sorted(needed[name] - covered))
