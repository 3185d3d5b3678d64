"""The golden files' format, shared by regenerate.py and tests/engine/test_golden.py.

A file holds one rule set's scenarios. A scenario names its table (rule set, seats, duel
stake), its shoe ({"stacked": [cards]}: a StackedShoe of the cards the round dealt, so a
file depends on no card generator) and its steps. A step is one command at a time (ms after
the opening) and what the engine answered: the events (event_to_dict), or the domain
error's code.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from casino.engine import commands as C
from casino.engine.commands import Command, OpenRound
from casino.engine.decider import step
from casino.engine.errors import DomainError
from casino.engine.events import event_to_dict
from casino.engine.evolve import RoundState
from casino.engine.shoe import Shoe, StackedShoe

from ..helpers import COMMITMENT, T0, options_for, participants

GOLDEN = Path(__file__).parent
COMMAND_TYPES: dict[str, type[Any]] = {
    cls.__name__: cls
    for cls in vars(C).values()
    if isinstance(cls, type) and dataclasses.is_dataclass(cls) and cls.__module__ == C.__name__
}


def opening(ruleset: str, players: int, stake: int) -> OpenRound:
    return OpenRound(
        "round-g", "table-g", ruleset, "chain-g", 1, COMMITMENT, participants(players),
        options_for(ruleset, stake),
    )  # fmt: skip


def shoe_from(spec: dict[str, Any]) -> Shoe:
    return StackedShoe(list(spec["stacked"]))


def command_to_dict(command: Command) -> dict[str, Any]:
    """The command's fields; an OpenRound is `opening` of its scenario's table."""
    if type(command) is OpenRound:
        return {"type": "OpenRound"}
    data = {f.name: getattr(command, f.name) for f in dataclasses.fields(command)}  # type: ignore[arg-type]
    return {"type": type(command).__name__, **data}


def command_from_dict(data: dict[str, Any], scenario: dict[str, Any]) -> Command:
    if data["type"] == "OpenRound":
        return opening(scenario["ruleset"], scenario["players"], scenario["stake"])
    fields = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items() if k != "type"}
    command: Command = COMMAND_TYPES[data["type"]](**fields)
    return command


def run_step(
    state: RoundState | None, command: Command, now_ms: int, shoe: Shoe
) -> tuple[dict[str, Any], RoundState | None]:
    """(what the engine answers, the state after) for one command, as a step records it."""
    try:
        events, after = step(state, command, T0 + now_ms, shoe)
    except DomainError as err:
        return {"error": err.code}, state
    return {"events": [event_to_dict(e) for e in events]}, after


def dump(path: Path, scenarios: list[dict[str, Any]]) -> None:
    """One scenario header and one step per line: small diffs when a rule changes."""
    lines = ["["]
    for i, scenario in enumerate(scenarios):
        header = {k: v for k, v in scenario.items() if k != "steps"}
        lines.append("  {" + json.dumps(header)[1:-1] + ', "steps": [')
        steps = scenario["steps"]
        for j, s in enumerate(steps):
            lines.append(
                "    " + json.dumps(s, separators=(",", ":")) + ("," if j < len(steps) - 1 else "")
            )
        lines.append("  ]}" + ("," if i < len(scenarios) - 1 else ""))
    lines.append("]")
    path.write_text("\n".join(lines) + "\n")


def load(path: Path) -> list[dict[str, Any]]:
    scenarios: list[dict[str, Any]] = json.loads(path.read_text())
    return scenarios
