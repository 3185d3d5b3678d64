"""Table versions: a table's parameters never change under it; a new version replaces it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from django.db import transaction

from casino.models import Table, TableStatus
from casino.tables.services import table_add


def newer_version(table: Table) -> Table | None:
    """The next version opened from this table (same name, rule set and owner), if any."""
    return (
        Table.objects.filter(
            name=table.name,
            ruleset=table.ruleset,
            owner_id=table.owner_id,
            version__gt=table.version,
        )
        .order_by("version")
        .first()
    )


class NewVersions(NamedTuple):
    made: list[Table]  # the new versions opened
    skipped: list[tuple[Table, Table]]  # (a table, the newer version it already had)


def table_new_versions(*, tables: Sequence[Table]) -> NewVersions:
    """Close each table to new rounds and open a copy with the next version number.

    Rounds already open finish at the old version; new rounds open at the new one, whose
    parameters staff then set by creating it (tables are never edited in place). A table that
    already has a newer version is skipped (the action sent twice, from a second tab): it
    would open a second table of that version.
    """
    made: list[Table] = []
    skipped: list[tuple[Table, Table]] = []
    with transaction.atomic(durable=True):
        for table in tables:
            old = Table.objects.select_for_update().get(pk=table.pk)
            newer = newer_version(old)
            if newer is not None:
                skipped.append((old, newer))
                continue
            old.status = TableStatus.CLOSED
            old.save(update_fields=["status"])
            made.append(  # with its first seed chain (its commitment public at once)
                table_add(
                    Table(
                        name=old.name,
                        ruleset=old.ruleset,
                        version=old.version + 1,
                        min_bet=old.min_bet,
                        max_bet=old.max_bet,
                        chip_unit=old.chip_unit,
                        stake=old.stake,
                        seats=old.seats,
                        owner=old.owner,
                    )
                )
            )
    return NewVersions(made, skipped)
