"""`manage.py audit [--since DATE] [--round ID] [--json]`: check rounds end to end, then the
transparency log, the journal's hash chain, and that every round the log shows opened is in
the database."""

from __future__ import annotations

import json
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from casino.platform.progress import ProgressBar
from casino.rounds.audit import audit, logged_rounds_missing, select_rounds, summary
from fairness.logaudit import log_problems


def parse_since(value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError as exc:
        raise CommandError(f"--since wants an ISO date like 2026-11-29, not {value!r}") from exc
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


class Command(BaseCommand):
    help = (
        "Audit rounds: hash chain, seed against commitment and chain, shoe cards, engine "
        "replay, receipt signature and ledger legs; then the transparency log: its stored tree "
        "against its checkpoint, and every journal entry against its leaf and hash chain. "
        "Exits 1 on any discrepancy."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--since", help="rounds opened on or after this date (ISO 8601)")
        parser.add_argument("--round", action="append", default=[], help="a round id (repeatable)")
        parser.add_argument("--json", action="store_true", help="print one JSON line")

    def handle(self, *args: Any, **options: Any) -> None:
        round_ids = select_rounds(since=parse_since(options["since"]), round_ids=options["round"])
        missing = set(options["round"]) - set(round_ids)
        if missing:
            raise CommandError(f"no such round: {', '.join(sorted(missing))}")
        reports = audit(round_ids, progress=ProgressBar("rounds"))
        result = summary(reports)
        log = log_problems(progress=ProgressBar("log leaves")) + logged_rounds_missing()
        result["log"] = [asdict(p) for p in log]
        result["ok"] = result["ok"] and not log
        if options["json"]:
            self.stdout.write(json.dumps(result, sort_keys=True))
        else:
            by_status: dict[str, list[int]] = {}
            for r in reports:
                counts = by_status.setdefault(r.status, [0, 0])
                counts[0 if r.ok else 1] += 1
            self.stdout.write(f"{'status':<10}{'passed':>10}{'failed':>10}")
            for status, (passed, failed) in sorted(by_status.items()):
                self.stdout.write(f"{status:<10}{passed:>10}{failed:>10}")
            self.stdout.write(
                f"{'total':<10}{result['passed']:>10}{result['failed']:>10}   "
                f"({result['cards']} cards checked)"
            )
            for failure in result["problems"]:
                for problem in failure["problems"]:
                    self.stdout.write(f"FAIL round {failure['round']}: {problem}")
            for problem in log:
                self.stdout.write(f"FAIL {problem.check}: {problem.message}")
            if not log:
                self.stdout.write(
                    "transparency log: tree, checkpoint, journal chain and logged rounds OK"
                )
        if not result["ok"]:
            raise SystemExit(1)
