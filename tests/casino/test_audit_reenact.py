"""The re-enactment's one-step path (each decision stepped once, at the time the record's
next timed event implies) reaches the verdict of the two-step search for that time, on
played rounds untouched and tampered with; and the states at its boundaries are the fold's."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import pytest

from casino.engine.audit import _command, _implied_now, _RecordedShoe, reenact, reenact_states
from casino.engine.commands import Timeout
from casino.engine.decider import evolve, step
from casino.engine.errors import DomainError
from casino.engine.events import Event, RoundOpened
from casino.engine.rules import RULESETS
from casino.eventstore.store import load_bundle_events
from casino.tables.play import play
from fairness.replay import load_decoders

pytestmark = pytest.mark.django_db


def two_step_reenact(events: Sequence[Event]) -> list[str]:
    """The re-enactment as it was before the one-step path: the reference."""
    opened = events[0]
    assert isinstance(opened, RoundOpened)
    rules = RULESETS[opened.ruleset]
    shoe = _RecordedShoe(events)
    state: Any = None
    now = opened.opened_at_ms
    i = 0
    while i < len(events):
        where = f"event {i + 1} ({events[i].type})"
        command = _command(events, i, state)
        if command is None:
            return [f"{where} follows from no decision"]
        if isinstance(command, Timeout) and state is not None and state.deadline_ms is not None:
            now = max(now, state.deadline_ms)
        try:
            produced, after = step(state, command, now, shoe)
            implied = _implied_now(produced, events[i:], rules)
            if implied is not None and implied != now:
                if implied < now:
                    return [f"{where}: time runs backwards"]
                now = implied
                produced, after = step(state, command, now, shoe)
        except DomainError as err:
            return [
                f"{where}: the rules refuse {type(command).__name__} ({err.code}: {err.message})"
            ]
        recorded = list(events[i : i + len(produced)])
        if not produced or produced != recorded:
            for n, (made, e) in enumerate(zip(produced, recorded, strict=False)):
                if made != e:
                    return [f"event {i + n + 1}: the rules make {made}, the record says {e}"]
            return [f"{where}: the rules make {len(produced)} events here, the record differs"]
        state = after
        i += len(produced)
    return []


def played(ruleset: str, players: int) -> list[list[Event]]:
    ids = play(ruleset=ruleset, rounds=4, players=players, seed=11).round_ids
    read = load_bundle_events(ids)
    decoders = load_decoders()
    assert decoders is not None
    return [
        [decoders[e["type"]](data) for e, data in zip(read.events[i], read.current[i], strict=True)]
        for i in ids
    ]


def tampered(events: list[Event]) -> list[list[Event]]:
    """Every event's time fields moved by +-1 s, each event dropped, each event repeated."""
    out = []
    for i, event in enumerate(events):
        for field in dataclasses.fields(event):
            if field.name.endswith("_ms"):
                for shift in (-1_000, 1_000):
                    value = getattr(event, field.name) + shift
                    moved = dataclasses.replace(event, **{field.name: value})
                    out.append([*events[:i], moved, *events[i + 1 :]])
        if i:
            out.append([*events[:i], *events[i + 1 :]])
            out.append([*events[: i + 1], event, *events[i + 1 :]])
    return out


@pytest.mark.parametrize(
    ("ruleset", "players"),
    [("classic", 1), ("atlantic_city", 1), ("duel_classic", 3), ("duel", 3)],
)
def test_one_step_reenactment_reports_what_the_two_step_search_reports(
    ruleset: str, players: int
) -> None:
    for events in played(ruleset, players):
        assert reenact(events) == two_step_reenact(events) == []
        problems, boundaries = reenact_states(events)
        folded: list[Any] = [None]
        for event in events:
            folded.append(evolve(folded[-1], event))
        assert problems == []
        assert set(boundaries) >= {0, len(events)}
        assert all(state == folded[k] for k, state in boundaries.items())
        for forged in tampered(events):
            found = reenact(forged)
            assert bool(found) == bool(two_step_reenact(forged)), found
            assert all(p.startswith("version ") for p in found)
