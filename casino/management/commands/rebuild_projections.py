"""`manage.py rebuild_projections [--check]`: refold every round's read model from its events."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from casino.platform.progress import ProgressBar
from casino.rounds.projections import rebuild_all


class Command(BaseCommand):
    help = "Rebuild the round read models from the event store (or only compare with --check)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--check", action="store_true", help="compare only; exit 1 on any difference"
        )
        parser.add_argument("--json", action="store_true", help="print one JSON line")

    def handle(self, *args: Any, **options: Any) -> None:
        report = rebuild_all(write=not options["check"], progress=ProgressBar("rounds"))
        if options["json"]:
            self.stdout.write(json.dumps(report))
        else:
            verb = "compared" if options["check"] else "rebuilt"
            self.stdout.write(
                f"{verb} {report['rounds']} rounds: {report['differences']} differed from the "
                "live projections"
            )
            for line in report["problems"][:20]:
                self.stdout.write(f"  {line}")
        if options["check"] and report["differences"]:
            raise SystemExit(1)
