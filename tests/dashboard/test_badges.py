"""The review page's badges: every problem the audit names lands under its check."""

from __future__ import annotations

from typing import Any

from casino.dashboard import roundpage
from casino.rounds.audit import RoundAudit


def test_proof_of_play_and_time_problems_fail_the_proof_of_play_badge(monkeypatch: Any) -> None:
    problems = [
        "play: version 13: recorded DealerCardDealt {}, the rules derive RoundSettled {} "
        "(the dealer stands on 17)",
        "time: version 6 (PlayerCardDealt) is recorded at b, before version 5 (BetPlaced) at c",
        "cards: position 0 dealt AS, the shoe has 6D",
    ]
    report = RoundAudit(round_id="r1", status="settled", problems=problems)
    monkeypatch.setattr(roundpage, "audit_round", lambda round_id: report)
    found = {b.key: b for b in roundpage.badges("r1", None)}
    assert found["replay"].label == "Proof of play"
    assert (found["replay"].status, found["replay"].problems) == ("fail", problems[:2])
    assert (found["shoe"].status, found["shoe"].problems) == ("fail", problems[2:])
    assert "other" not in found
