"""Tamper detection: recompute a stream's hash chain and check its version continuity."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from casino.eventstore.models import StoredEvent
from fairness.canonical import GENESIS, event_hash


@dataclass(frozen=True, slots=True)
class Problem:
    """One discrepancy: which stream and event, a stable code and a readable reason."""

    stream_id: str
    version: int | None
    position: int | None
    code: str
    message: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-native form (for `audit --json`)."""
        return asdict(self)


def verify_stream(events: Sequence[StoredEvent]) -> list[Problem]:
    """Every problem in one stream given in stored order (as `load` returns it); [] if intact.

    Codes: wrong_stream, version_gap (missing, reordered or duplicated events),
    position_order, prev_hash_mismatch (broken link), hash_mismatch (changed content).
    A truncated tail is invisible to the chain itself: anchor the last hash elsewhere (receipt).
    """
    problems: list[Problem] = []
    if not events:
        return problems
    stream_id = events[0].stream_id
    prev_hash = GENESIS
    prev_position: int | None = None
    for expected_version, event in enumerate(events, start=1):

        def problem(code: str, message: str, event: StoredEvent = event) -> None:
            problems.append(Problem(stream_id, event.version, event.position, code, message))

        if event.stream_id != stream_id:
            problem("wrong_stream", f"event belongs to stream {event.stream_id}")
        if event.version != expected_version:
            problem("version_gap", f"expected version {expected_version}, found {event.version}")
        if prev_position is not None and event.position <= prev_position:
            problem("position_order", f"position {event.position} is not after {prev_position}")
        if event.prev_hash != prev_hash:
            problem("prev_hash_mismatch", "prev_hash does not match the previous event's hash")
        recomputed = event_hash(event.prev_hash, event.stored_body())
        if recomputed != event.hash:
            problem(
                "hash_mismatch", f"stored hash {event.hash[:12]}…, recomputed {recomputed[:12]}…"
            )
        # Chain on from the stored hash so one changed event is reported once, not n times.
        prev_hash = event.hash
        prev_position = event.position
    return problems
