"""What the round review page shows: live verification badges, the event timeline, money.

Cards are rendered only through the engine's `view`: a timeline event shows its card only
if that card's shoe position is visible in the staff view, so the hole card of an open round
stays hidden unless the viewer holds `casino.view_hole_card`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from casino.audit import audit_round
from casino.engine.state import RoundState
from casino.engine.views import Viewer, view
from casino.eventstore.models import StoredEvent
from ledger.models import JournalEntry
from ledger.rounds import round_reference

# Badge key, label, and the prefixes of the audit problems that belong to it.
BADGES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("hash_chain", "Hash chain", ("events:", "event hash:")),
    ("seed", "Seed vs commitment", ("seed:", "chain:")),
    ("shoe", "Shoe", ("cards:", "client material:")),
    ("replay", "Engine replay", ("replay:", "rules:", "outcome:")),
    ("receipt", "Receipt signature", ("signature:", "key:", "receipt:", "bundle:")),
    ("ledger", "Ledger legs", ("ledger legs:",)),
)
# `audit_round` replays an open round too; seed, shoe and receipt need the revealed seed.
CHECKED_WHILE_OPEN = ("hash_chain", "replay", "ledger")
HIDDEN_CARD = "🂠"


@dataclass
class Badge:
    key: str
    label: str
    status: str  # pass, fail, pending (not checkable until the round finishes)
    problems: list[str] = field(default_factory=list)


def badges(round_id: str, state: RoundState | None) -> list[Badge]:
    """Every verification check run now, grouped into the six badges."""
    report = audit_round(round_id)
    finished = state is not None and state.finished
    out = []
    claimed: set[str] = set()
    for key, label, prefixes in BADGES:
        problems = [p for p in report.problems if p.startswith(prefixes)]
        claimed.update(problems)
        if problems:
            status = "fail"
        elif finished or key in CHECKED_WHILE_OPEN:
            status = "pass"
        else:
            status = "pending"
        out.append(Badge(key, label, status, problems))
    other = [p for p in report.problems if p not in claimed]
    if other:
        out.append(Badge("other", "Other checks", "fail", other))
    return out


def staff_view(state: RoundState, can_see_hole: bool) -> dict[str, Any]:
    return view(state, Viewer(role="staff", can_see_hole=can_see_hole))


def visible_positions(rendered: dict[str, Any]) -> set[int]:
    """Shoe positions whose card the rendered view shows face up."""
    seen: set[int] = set()
    hands = [h for box in rendered["boxes"] for h in box["hands"]]
    dealer = rendered.get("dealer")
    cards = [c for h in hands for c in h["cards"]] + (dealer["cards"] if dealer else [])
    for card in cards:
        if "position" in card:
            seen.add(card["position"])
    return seen


def _redact(value: Any, visible: set[int]) -> Any:
    """Replace every card whose position is not visible (dicts with card + position)."""
    if isinstance(value, dict):
        out = {k: _redact(v, visible) for k, v in value.items()}
        if "card" in value and value.get("position") not in visible:
            out["card"] = HIDDEN_CARD
        return out
    if isinstance(value, list):
        return [_redact(v, visible) for v in value]
    return value


def timeline(stored: list[StoredEvent], rendered: dict[str, Any]) -> list[dict[str, Any]]:
    """The round's events, oldest first, with cards as the view allows."""
    visible = visible_positions(rendered)
    rows = []
    for event in stored:
        data = _redact(event.data, visible)
        rows.append(
            {
                "version": event.version,
                "type": event.type,
                "recorded_at": event.recorded_at_text,
                "hash": event.hash,
                "card": data.get("card") if isinstance(data, dict) else None,
                "data": json.dumps(data, sort_keys=True)[:600],
            }
        )
    return rows


def ledger_entries(round_id: str) -> list[JournalEntry]:
    """The round's journal entries with their postings, oldest first."""
    return list(
        JournalEntry.objects.filter(reference=round_reference(round_id))
        .order_by("id")
        .prefetch_related("postings__account")
    )
