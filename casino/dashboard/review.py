"""Staff actions on rounds: flag, mark reviewed, void. Each one is an event with who and when.

The events go to the round's review stream `review-<round id>` (the round's own stream is
replayed by the engine, which knows only game events). `RoundReview` and the round's
`flagged` / `flag_reason` columns are folded from that stream, here and in `rebuild`. A flag
puts the round in the queue; marking it reviewed (with notes) or a staff void (with its
reason) takes it out, recording who and why.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import transaction

from casino.dashboard.models import RoundReview
from casino.eventstore.models import StoredEvent
from casino.eventstore.store import ConcurrencyError, NewEvent, append, load
from casino.models import Round
from casino.platform.errors import ApplicationError, ConflictError
from casino.rounds import services

STREAM_PREFIX = "review-"
FLAGGED = "RoundFlagged"
REVIEWED = "RoundReviewed"
VOID_REQUESTED = "VoidRequested"
SYSTEM = "system"  # the `by` of automatic flags
# Automatic flag reasons (manual flags carry the reviewer's own words).
MALFUNCTION = "malfunction"
AUDIT_FAILURE = "audit_failure"
BIG_WIN = "big_win"
RETRIES = 3
RESOLVED_REVIEWED, RESOLVED_VOIDED = "reviewed", "voided"  # RoundReview.resolution
FLAG_REASON_MAX = 200


def review_stream(round_id: str) -> str:
    return f"{STREAM_PREFIX}{round_id}"


def review_events(round_id: str) -> list[StoredEvent]:
    """The staff actions on a round, oldest first."""
    return load(review_stream(round_id))


def _who(user: Any) -> dict[str, Any]:
    if user is None:
        return {"by": SYSTEM, "by_id": None}
    return {"by": user.get_username(), "by_id": user.pk}


def fold(row: RoundReview, event: StoredEvent) -> None:
    """Apply one review event to the round's review row (not saved here)."""
    data = event.data
    if event.type == FLAGGED:
        row.pending = True
        row.reasons = [*row.reasons, data["reason"]]
        row.flagged_at = event.recorded_at
    elif event.type == REVIEWED:
        row.pending = False
        row.reviewed_by = data["by"]
        row.reviewed_at = event.recorded_at
        row.notes = data["notes"]
        row.resolution = RESOLVED_REVIEWED
    elif event.type == VOID_REQUESTED:  # a staff void settles the question: out of the queue
        row.pending = False
        row.reviewed_by = data["by"]
        row.reviewed_at = event.recorded_at
        row.notes = data["reason"]
        row.resolution = RESOLVED_VOIDED
    row.version = event.version


def project(round_id: str, events: Sequence[StoredEvent]) -> RoundReview:
    """Write the review row and the round's flag columns from the review stream's events."""
    row = RoundReview.objects.filter(round_id=round_id).first() or RoundReview(round_id=round_id)
    for event in events:
        if event.version > row.version:
            fold(row, event)
    row.save()
    if row.reasons:
        Round.objects.filter(id=round_id).update(
            flagged=True, flag_reason=", ".join(dict.fromkeys(row.reasons))[:FLAG_REASON_MAX]
        )
    return row


def _record(
    round_id: str,
    event_type: str,
    data: dict[str, Any],
    *,
    unless_reason: bool,
    pending_only: bool = False,
) -> bool:
    """Append one review event and project it; False when `unless_reason` found it already.

    `pending_only`: refuse (409 `review_closed`) unless the round is in the queue now, read
    in the same transaction as the append (a second tab, another reviewer, a void)."""
    if not Round.objects.filter(id=round_id).exists():
        raise ApplicationError(f"No round {round_id}.", code="not_found", status_code=404)
    stream = review_stream(round_id)
    for attempt in range(RETRIES):
        try:
            with transaction.atomic(durable=True):
                stored = load(stream)
                if unless_reason and any(
                    e.type == FLAGGED and e.data.get("reason") == data["reason"] for e in stored
                ):
                    return False
                if pending_only:
                    _check_pending(round_id, stored)
                new = append(
                    stream_id=stream,
                    expected_version=len(stored),
                    events=[NewEvent(type=event_type, data=data)],
                )
                project(round_id, [*stored, *new])
                return True
        except ConcurrencyError:
            if attempt == RETRIES - 1:
                raise
    raise AssertionError("unreachable")  # pragma: no cover


def _check_pending(round_id: str, stored: Sequence[StoredEvent]) -> None:
    row = RoundReview(round_id=round_id)
    for event in stored:
        fold(row, event)
    if row.pending:
        return
    if row.resolution:
        raise ConflictError(
            f"Not marked reviewed: this round's review item is already closed "
            f"({row.resolution} by {row.reviewed_by}).",
            code="review_closed",
        )
    raise ConflictError(
        "Not marked reviewed: this round is not in the review queue (flag it first).",
        code="review_closed",
    )


def round_flag(*, round_id: str, reason: str, detail: str = "", user: Any = None) -> bool:
    """Flag a round for review. `user` None = an automatic flag, recorded once per reason."""
    reason = reason.strip()
    if not reason:
        raise ApplicationError("A flag needs a reason.", code="reason_required")
    data = {"reason": reason[:FLAG_REASON_MAX], "detail": detail[:2000], **_who(user)}
    return _record(round_id, FLAGGED, data, unless_reason=user is None)


def round_review_mark(*, round_id: str, notes: str, user: Any) -> None:
    """A reviewer marks a flagged round reviewed, with notes; it leaves the queue. A round not
    in the queue (never flagged, or already reviewed or voided) is refused: the item keeps
    who closed it and why."""
    if not notes.strip():
        raise ApplicationError("Reviewing needs written notes.", code="notes_required")
    data = {"notes": notes[:4000], **_who(user)}
    _record(round_id, REVIEWED, data, unless_reason=False, pending_only=True)


def round_void_by_staff(*, round_id: str, reason: str, user: Any) -> services.RoundResult:
    """Void through the round service (refunds, reversal, seed reveal), then record who did it."""
    if not reason.strip():
        raise ApplicationError("A void needs a written reason.", code="reason_required")
    who = _who(user)
    result = services.round_void(
        round_id=round_id, reason=reason.strip(), evidence=f"staff void by {who['by']}"
    )
    _record(round_id, VOID_REQUESTED, {"reason": reason.strip(), **who}, unless_reason=False)
    return result


def review_queue() -> Any:
    """Rounds waiting for a reviewer, oldest flag first."""
    pending = RoundReview.objects.filter(pending=True).values("round_id")
    return Round.objects.filter(id__in=pending).select_related("table").order_by("opened_at")
