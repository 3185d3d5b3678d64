"""`manage.py prune_idempotency [--days N]`: drop stored idempotent responses past retention."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from ledger.idempotency import idempotency_records_prune


class Command(BaseCommand):
    help = (
        "Delete stored Idempotency-Key responses older than IDEMPOTENCY_RETENTION_DAYS "
        "(journal entry keys stay reserved forever)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--days", type=int, default=None)

    def handle(self, *args: Any, **options: Any) -> None:
        deleted = idempotency_records_prune(older_than_days=options["days"])
        self.stdout.write(f"pruned {deleted} idempotency record(s)")
