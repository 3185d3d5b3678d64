"""`manage.py reconcile [--json]`: check the ledger; exit 1 naming what is wrong."""

from __future__ import annotations

import json
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from casino.platform.progress import ProgressBar
from ledger.money import format_amount
from ledger.reconcile import ledger_reconcile


class Command(BaseCommand):
    help = (
        "Reconcile the ledger: every entry balances, stored balances equal their postings, "
        "no non-negative account is negative, all accounts sum to zero (plus registered checks). "
        "Exit 1 on any problem."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--json", action="store_true", help="print one JSON line")

    def handle(self, *args: Any, **options: Any) -> None:
        report = ledger_reconcile(progress=ProgressBar("rounds"))
        if options["json"]:
            self.stdout.write(json.dumps(report.as_dict(), sort_keys=True))
        else:
            self.stdout.write(
                f"accounts={report.accounts} entries={report.entries} postings={report.postings} "
                f"total={format_amount(report.total_micro)} USDC checks={','.join(report.checks)}"
            )
            for problem in report.problems:
                where = f" [account {problem.account}]" if problem.account else ""
                self.stderr.write(f"FAIL {problem.check}{where}: {problem.message}")
            self.stdout.write("OK" if report.ok else f"FAILED: {len(report.problems)} problem(s)")
        if not report.ok:
            sys.exit(1)
