"""`manage.py play`: bots play real rounds through the round service (fair shoe, real money)."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from casino.engine.rules import RULESETS
from casino.platform.progress import ProgressBar
from casino.tables.play import play
from ledger.money import format_amount


class Command(BaseCommand):
    help = "Play N rounds of a rule set with basic-strategy bots through the real service path."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--ruleset", required=True, choices=sorted(RULESETS))
        parser.add_argument("--rounds", type=int, default=10)
        parser.add_argument("--players", type=int, default=1, help="seats (duel: at least 2)")
        parser.add_argument("--seed", type=int, default=0, help="drives the bots' bet sizes")
        parser.add_argument("--json", action="store_true", help="print one JSON line")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["rounds"] < 1:
            raise CommandError("--rounds must be at least 1")
        try:
            report = play(
                ruleset=options["ruleset"],
                rounds=options["rounds"],
                players=options["players"],
                seed=options["seed"],
                progress=ProgressBar("rounds"),
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        figures = {
            "ruleset": report.ruleset,
            "rounds": report.rounds,
            "staked_micro": report.staked,
            "returned_micro": report.returned,
            "fees_micro": report.fees,
            "rtp": round(report.rtp, 6),
            "rounds_per_s": round(report.rounds_per_s, 1),
            "last_round": report.round_ids[-1],
        }
        if options["json"]:
            self.stdout.write(json.dumps(figures))
            return
        self.stdout.write(
            f"{report.rounds} {report.ruleset} rounds in {report.seconds:.1f} s "
            f"({report.rounds_per_s:.1f} rounds/s)\n"
            f"staked {format_amount(report.staked)} USDC, returned "
            f"{format_amount(report.returned)} USDC, fees {format_amount(report.fees)} USDC "
            f"(RTP {100 * report.rtp:.2f}%)\n"
            f"last round {report.round_ids[-1]}"
        )
