"""`manage.py void_round ROUND --reason "..."`: staff void through the round service."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from casino.platform.errors import ApplicationError
from casino.rounds import services


class Command(BaseCommand):
    help = "Void a round: refund every stake, reverse every payout, reveal its seed."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("round_id")
        parser.add_argument("--reason", required=True, help="why (kept in the RoundVoided event)")
        parser.add_argument("--evidence", default="", help="what shows the malfunction")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            result = services.round_void(
                round_id=options["round_id"], reason=options["reason"], evidence=options["evidence"]
            )
        except ApplicationError as error:
            raise CommandError(f"{error.code}: {error.message}") from error
        self.stdout.write(
            f"round {result.round.id} voided: refunded {result.round.stake_total} micro-USDC "
            f"of stakes; server seed revealed: {result.state.server_seed}"
        )
