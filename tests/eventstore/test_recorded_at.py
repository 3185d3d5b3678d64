"""recorded_at as hashed: the same text for the same instant, whatever its time zone."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from casino.eventstore.models import format_recorded_at


def test_one_instant_renders_once_the_same_in_any_zone() -> None:
    at = datetime(2026, 11, 30, 13, 5, 7, 123456, tzinfo=UTC)
    paris = at.astimezone(timezone(timedelta(hours=1)))
    assert format_recorded_at(at) == "2026-11-30T13:05:07.123456Z"
    assert format_recorded_at(paris) == "2026-11-30T13:05:07.123456Z"  # cached or not
    later = at + timedelta(microseconds=1)
    assert format_recorded_at(later) == "2026-11-30T13:05:07.123457Z"
    assert format_recorded_at(datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)) == (
        "2026-01-02T03:04:05.000000Z"
    )
