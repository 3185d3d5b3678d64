"""`manage.py rebuild_stats [--check]`: recompute the public stats from the event store."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from casino.dashboard.stats import rebuild


class Command(BaseCommand):
    help = "Rebuild the stats contributions from round events (--check: only compare)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--check", action="store_true", help="compare, write nothing")

    def handle(self, *args: Any, **options: Any) -> None:
        result = rebuild(write=not options["check"])
        self.stdout.write(json.dumps(result, sort_keys=True, default=str))
        if options["check"] and (result["missing"] or result["extra"]):
            raise CommandError("the live stats differ from the events")
