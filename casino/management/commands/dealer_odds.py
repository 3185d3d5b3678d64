"""`manage.py dealer_odds`: the dealer's exact final-total distribution per up card."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from casino.engine.odds import format_table, ruleset_dealer_table
from casino.engine.rules import RULESETS


class Command(BaseCommand):
    help = (
        "Exact dealer final totals (17-21, bust) per up card for a house-banked rule set, "
        "from its shoe composition, conditioned on no dealer blackjack where the dealer peeks."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--ruleset", required=True, choices=sorted(RULESETS))
        parser.add_argument("--json", action="store_true", help="one JSON object")

    def handle(self, *args: Any, **options: Any) -> None:
        rules = RULESETS[options["ruleset"]]
        try:
            table = ruleset_dealer_table(rules)
        except ValueError as exc:
            raise CommandError(f"{exc}: dealer odds apply to house-banked rule sets") from exc
        if options["json"]:
            self.stdout.write(json.dumps(table))
            return
        soft17 = "hits" if rules.dealer_hits_soft_17 else "stands on"
        self.stdout.write(
            f"{rules.name}: {rules.decks} decks, dealer {soft17} soft 17; "
            "Ace and ten up conditioned on no dealer blackjack\n"
        )
        self.stdout.write(format_table(table))
