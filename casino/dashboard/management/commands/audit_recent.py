"""`manage.py audit_recent [--minutes M]`: the periodic audit by hand (flags failing rounds)."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from casino.dashboard.tasks import audit_recent


class Command(BaseCommand):
    help = "Audit rounds finished in the last M minutes and flag each failure for review."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--minutes", type=int, default=None, help="default: settings")

    def handle(self, *args: Any, **options: Any) -> None:
        self.stdout.write(json.dumps(audit_recent(minutes=options["minutes"]), sort_keys=True))
