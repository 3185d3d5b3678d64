"""Test helpers: remove events despite the append-only triggers (superuser / test DB only)."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connections, transaction

from casino.eventstore.store import TABLE, _heads


def purge_events_for_tests(*, using: str = DEFAULT_DB_ALIAS) -> None:
    """Delete every event, bypassing the triggers (superuser). For test teardown only.

    The project's `flush` command (ledger/management/commands/flush.py) already suspends
    triggers for Django's flush after `django_db(transaction=True)` tests; this helper empties
    the log explicitly, without depending on that override.
    """
    connection = connections[using]
    with transaction.atomic(using=using), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # Needs a superuser: ordinary triggers do not fire in replica mode.
            cursor.execute("SET LOCAL session_replication_role = replica")
            cursor.execute(f"DELETE FROM {TABLE}")
        else:
            with bypass_sqlite_triggers(cursor):
                cursor.execute(f"DELETE FROM {TABLE}")
    _heads.by_stream.clear()


@contextmanager
def bypass_sqlite_triggers(cursor: Any) -> Iterator[None]:
    """Drop the SQLite append-only triggers, then recreate them (use inside one transaction)."""
    migration = importlib.import_module("casino.eventstore.migrations.0002_append_only_triggers")
    for statement in migration.SQLITE_DOWN:
        cursor.execute(statement)
    try:
        yield
    finally:
        for statement in migration.SQLITE_UP:
            cursor.execute(statement)
