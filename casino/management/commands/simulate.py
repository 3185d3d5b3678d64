"""`manage.py simulate`: RTP of a rule set by playing rounds through the real engine."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from casino.engine.rules import RULESETS
from casino.engine.simulator import SHOES, SimulationConfig, simulate
from casino.platform.progress import ProgressBar


def format_report(report: dict[str, Any]) -> str:
    """The readable form of a simulator report."""
    pct = 100.0
    lines = [
        f"rule set       {report['ruleset']}  (shoe {report['shoe']}, seed {report['seed']}, "
        f"{report['workers']} worker(s))",
        f"rounds         {report['rounds']:,}  ({report['hands_per_round']:.4f} hands/round)",
        f"RTP            {pct * report['rtp']:.4f}%  (per initial bet)",
        f"  95% CI       {pct * report['ci95'][0]:.4f}% .. {pct * report['ci95'][1]:.4f}%",
        f"  99% CI       {pct * report['ci99'][0]:.4f}% .. {pct * report['ci99'][1]:.4f}%",
        f"  per wager    {pct * report['rtp_per_wager']:.4f}% of everything wagered "
        f"({report['average_wager']:.4f} x the initial bet per round)",
        f"speed          {report['rounds_per_s']:,.0f} rounds/s "
        f"({report['rounds_per_s_per_worker']:,.0f} per worker, {report['elapsed_s']:.1f} s)",
        f"per hand       blackjack {pct * report['blackjack_rate']:.3f}%  "
        f"bust {pct * report['bust_rate']:.3f}%  push {pct * report['push_rate']:.3f}%  "
        f"win {pct * report['win_rate']:.3f}%  loss {pct * report['loss_rate']:.3f}%",
    ]
    if "per_player_rtp" in report:
        for seat, figures in enumerate(report["per_player_rtp"]):
            lo, hi = figures["ci95"]
            lines.append(
                f"seat {seat + 1:<9} RTP {pct * figures['rtp']:.4f}%  "
                f"(95% CI {pct * lo:.4f}% .. {pct * hi:.4f}%)"
            )
        lines.append(
            f"fee take       {pct * report['fee_take']:.4f}% of the pot "
            f"({report['players']} players, {report['fee_bps']} bps)"
        )
    else:
        lines.append(
            f"per round      dealer bust {pct * report['dealer_bust_rate']:.3f}%  "
            f"dealer blackjack {pct * report['dealer_blackjack_rate']:.3f}%  "
            f"insurance offered {pct * report['insurance_offered_rate']:.3f}% / "
            f"taken {pct * report['insurance_taken_rate']:.3f}%"
        )
        lines.append(
            f"play           doubles {pct * report['double_rate']:.3f}% of hands  "
            f"splits {pct * report['split_rate']:.3f}% of boxes"
        )
    return "\n".join(lines)


class Command(BaseCommand):
    help = (
        "Simulate rounds of a rule set through the real engine with basic strategy and print "
        "the RTP with 95%/99% confidence intervals."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--ruleset", required=True, choices=sorted(RULESETS))
        parser.add_argument("--rounds", type=int, required=True)
        parser.add_argument(
            "--workers",
            type=int,
            default=os.cpu_count() or 1,
            help="processes (default: one per CPU; the figures do not depend on it)",
        )
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--shoe", choices=SHOES, default="fast")
        parser.add_argument("--players", type=int, default=0, help="seats (duel: 2..8)")
        parser.add_argument("--boxes", type=int, default=1, help="boxes per player (banked)")
        parser.add_argument(
            "--duel-hit-until", type=int, default=16, help="duel strategy: hit on this or less"
        )
        parser.add_argument("--json", action="store_true", help="one JSON line")

    def handle(self, *args: Any, **options: Any) -> None:
        config = SimulationConfig(
            ruleset=options["ruleset"],
            rounds=options["rounds"],
            seed=options["seed"],
            shoe=options["shoe"],
            players=options["players"],
            boxes=options["boxes"],
            duel_hit_until=options["duel_hit_until"],
        )
        try:
            config.check()
            report = simulate(
                config, workers=options["workers"], progress=ProgressBar("rounds", sys.stderr)
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        if options["json"]:
            self.stdout.write(json.dumps(report))
        else:
            self.stdout.write(format_report(report))
