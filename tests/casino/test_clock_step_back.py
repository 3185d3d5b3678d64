"""A machine clock that steps back (NTP) mid-round leaves no round whose times run backwards:
the round service times a command no earlier than the round's last event, and the event
store records no earlier than the stream's head. The exported rounds still verify, the
checks across rounds included."""

from __future__ import annotations

import io
from collections import OrderedDict
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from casino.eventstore import store
from casino.rounds import services
from casino.rounds.audit import chain_lines, chain_scope, export_lines, select_rounds
from casino.tables.play import play
from fairness.verify import main

pytestmark = pytest.mark.django_db


class _SteppingBack:
    """A clock that runs 10 s back every third reading."""

    def __init__(self, start: datetime) -> None:
        self.now = start
        self.reads = 0

    def tick(self) -> datetime:
        self.reads += 1
        self.now += timedelta(seconds=-10 if self.reads % 3 == 0 else 1)
        return self.now


class _Forgetful(OrderedDict[str, Any]):
    """A process that did not append the round before (another server, the timer worker)."""

    def __setitem__(self, key: str, value: Any) -> None:
        pass

    def move_to_end(self, key: str, last: bool = True) -> None:
        pass


@pytest.mark.parametrize("same_process", [True, False])
def test_rounds_played_while_the_clock_steps_back_verify(
    monkeypatch: Any, tmp_path: Path, same_process: bool
) -> None:
    if not same_process:  # the previous round's last event is read from the store
        monkeypatch.setattr(services, "_chain_marks", _Forgetful())
    clock = _SteppingBack(datetime.now(store.UTC))

    monkeypatch.setattr(store, "recorded_now", clock.tick)
    monkeypatch.setattr(services, "now_ms", lambda: int(clock.tick().timestamp() * 1000))
    played = play(ruleset="classic", rounds=6, players=1, seed=3).round_ids
    assert clock.reads > 20  # the clock stepped back several times within rounds
    round_ids = select_rounds(since=None, round_ids=played, finished_only=True)
    scope = chain_scope("rounds")
    bundle = tmp_path / "rounds.jsonl"
    lines = [*chain_lines(round_ids, scope), *export_lines(round_ids)]
    bundle.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = io.StringIO()
    assert main([str(bundle)], out=out) == 0, out.getvalue()
    assert "6 rounds: 6 verified, 0 failed" in out.getvalue()
