"""The stored event: one immutable, hash-chained row per event of a round stream."""

from __future__ import annotations

from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from django.db import models

from fairness.canonical import event_body

RECORDED_AT_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


class StoredEvent(models.Model):
    """One event of one stream (a round). Rows are never updated or deleted (triggers)."""

    # PostgreSQL: (transaction id << 16) + index, so log order is transaction order (see store.py).
    position = models.BigAutoField(primary_key=True)
    stream_id = models.CharField(max_length=64)
    version = models.PositiveIntegerField()
    type = models.CharField(max_length=100)
    schema_version = models.PositiveSmallIntegerField(default=1)
    data = models.JSONField()
    recorded_at = models.DateTimeField()
    prev_hash = models.CharField(max_length=64)
    hash = models.CharField(max_length=64)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["stream_id", "version"], name="eventstore_stream_version_uniq"
            ),
            models.CheckConstraint(
                condition=models.Q(version__gte=1), name="eventstore_version_gte_1"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.stream_id}@{self.version} {self.type}"

    @property
    def recorded_at_text(self) -> str:
        """recorded_at exactly as hashed: YYYY-MM-DDTHH:MM:SS.ffffffZ (UTC)."""
        return format_recorded_at(self.recorded_at)

    def stored_body(self) -> dict[str, Any]:
        """The hashed body as stored (before any upcasting)."""
        # `_stored`: set where the row was upcast (store.py); read from __dict__, since a getattr
        # that misses builds and drops an AttributeError.
        stored = self.__dict__.get("_stored")
        schema_version, data = stored or (self.schema_version, self.data)
        return event_body(
            stream=self.stream_id,
            version=self.version,
            type=self.type,
            schema_version=schema_version,
            data=data,
            recorded_at=self.recorded_at_text,
        )


@lru_cache(maxsize=4096)
def format_recorded_at(value: datetime) -> str:
    """Render an aware datetime in UTC as the hash contract wants it. Kept per instant (a
    command's events share one; a round's receipt and messages format each event's again):
    equal aware datetimes are the same instant, so they render the same."""
    return value.astimezone(UTC).strftime(RECORDED_AT_FORMAT)
