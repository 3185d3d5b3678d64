"""What the round review page shows: live verification badges, the event timeline, money.

Cards are rendered only through the engine's `view`: a timeline event shows its card only
if that card's shoe position is visible in the staff view, so the hole card and a duel's
hidden cards of a round not yet ended stay hidden unless `casino.view_hole_card` was granted
to the viewer (or a group of theirs) by name; being a superuser is not a grant. The event
log's admin pages (`casino.dashboard.admin_game.StoredEventAdmin`) mask cards with
`staff_event_data`, the same rule.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import Permission
from django.db.models import Q

from casino.dashboard.display import hand_label, player_name
from casino.engine.evolve import RoundState
from casino.engine.views import Viewer, view
from casino.eventstore.models import StoredEvent
from casino.models import Round, RoundStatus
from casino.rounds.audit import audit_round
from casino.rounds.stream import round_load
from ledger.models import AccountType, EntryKind, JournalEntry, Posting
from ledger.rounds import round_reference

# Badge key, label, and the prefixes of the audit problems that belong to it.
BADGES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("hash_chain", "Hash chain", ("events:", "event hash:")),
    ("seed", "Seed vs commitment", ("seed:", "chain:")),
    ("shoe", "Shoe", ("cards:", "client material:")),
    ("replay", "Proof of play", ("play:", "rules:", "outcome:", "time:")),
    ("receipt", "Receipt signature", ("signature:", "key:", "receipt:", "bundle:")),
    ("ledger", "Ledger legs", ("ledger legs:",)),
)
# `audit_round` replays an open round too; seed, shoe and receipt need the revealed seed.
CHECKED_WHILE_OPEN = ("hash_chain", "replay", "ledger")
HIDDEN_CARD = "🂠"
VIEW_HOLE = ("casino", "view_hole_card")


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


def hole_card_granted(user: Any) -> bool:
    """`casino.view_hole_card` given to this user or one of their groups by name (a superuser's
    blanket permissions do not count: no staff page shows a hidden card by default)."""

    if user is None or not getattr(user, "is_active", False) or user.pk is None:
        return False
    app_label, codename = VIEW_HOLE
    return (
        Permission.objects.filter(content_type__app_label=app_label, codename=codename)
        .filter(Q(user=user) | Q(group__user=user))
        .exists()
    )


def may_see_hidden_cards(user: Any, state: RoundState) -> bool:
    """Every card shows once the round ended (its seed is public); before, only with the grant."""
    return state.finished or hole_card_granted(user)


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


def _has_card(value: Any) -> bool:
    if isinstance(value, dict):
        return "card" in value or any(_has_card(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_card(v) for v in value)
    return False


def staff_event_data(events: Sequence[StoredEvent], user: Any) -> dict[int, Any]:
    """Each event's data (by position) with the cards `user` may not see yet masked.
    A round's events are masked as its review page's timeline is: through the staff `view` of
    the round's current state. Only streams with a card whose round has not ended are loaded.
    """

    out = {e.pk: e.data for e in events}
    with_cards = {e.stream_id for e in events if _has_card(e.data)}
    if not with_cards:
        return out
    ended = Round.objects.filter(id__in=with_cards).exclude(status=RoundStatus.OPEN)
    live = with_cards - set(ended.values_list("id", flat=True))
    if not live or hole_card_granted(user):
        return out
    for stream_id in live:
        _, state = round_load(round_id=stream_id)
        # Not granted (above): every card shows only if the round has ended after all.
        visible = visible_positions(staff_view(state, state.finished)) if state else set()
        for event in events:
            if event.stream_id == stream_id:
                out[event.pk] = _redact(event.data, visible)
    return out


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
        .prefetch_related("postings__account__owner")
    )


def void_shortfalls(round_id: str) -> list[tuple[str, int]]:
    """(username, micro-USDC) each player could not pay back when the round was voided: the
    void's reversal posted it to their receivable (they now owe it)."""
    rows = (
        Posting.objects.filter(
            entry__kind=EntryKind.VOID_REVERSAL,
            entry__reference=round_reference(round_id),
            account__type=AccountType.RECEIVABLE,
            amount__lt=0,
        )
        .select_related("account__owner")
        .order_by("account__owner__username")
    )
    return [(p.account.owner.get_username() if p.account.owner else "?", -p.amount) for p in rows]


def hand_rows(rendered: dict[str, Any], names: dict[str, str]) -> list[dict[str, Any]]:
    """The cards table's player rows: "alice, box 1" (counted from 1), the hand's view."""
    rows = []
    for box in rendered["boxes"]:
        name = player_name(names, box["player_id"])
        for index, hand in enumerate(box["hands"]):
            label = hand_label(name, box["box"], index, len(box["hands"]))
            rows.append({"label": label, "hand": hand})
    return rows
