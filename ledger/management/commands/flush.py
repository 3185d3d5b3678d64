"""`flush`, able to empty append-only tables (the ledger's journal, the event store).

Django's test runner flushes the database after every TransactionTestCase. Append-only
triggers reject that on purpose, so this override suspends triggers for the flush only:
on PostgreSQL with `session_replication_role = replica`, which only a superuser may set (an
application role gets a permission error and the journal stays intact); on SQLite by dropping
the triggers and recreating them from their stored SQL, all around the flush.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.core.management.commands.flush import Command as FlushCommand
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.backends.base.base import BaseDatabaseWrapper


@contextmanager
def triggers_suspended(connection: BaseDatabaseWrapper) -> Iterator[None]:
    """Suspend every trigger on this connection for the duration of the block."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET session_replication_role = replica")
        try:
            yield
        finally:
            with connection.cursor() as cursor:
                cursor.execute("RESET session_replication_role")
        return
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'")
            triggers = cursor.fetchall()
            for name, _sql in triggers:
                cursor.execute(f'DROP TRIGGER IF EXISTS "{name}"')
        try:
            yield
        finally:
            with connection.cursor() as cursor:
                for _name, sql in triggers:
                    cursor.execute(sql)
        return
    yield


class Command(FlushCommand):
    help = FlushCommand.help + " Append-only triggers are suspended for the flush only."

    def handle(self, **options: Any) -> None:
        connection = connections[options.get("database") or DEFAULT_DB_ALIAS]
        with triggers_suspended(connection):
            super().handle(**options)
