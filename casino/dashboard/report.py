"""The daily report: rounds, handle, GGR, fees and voids per day and rule set, with RTP.

Figures come from the round projections (`casino.models.Round`) of finished rounds, by the
UTC day they finished. Handle = stakes of settled rounds; GGR = handle - gross returns (the
house's win, fees included); measured RTP = returns / handle. The chart is an SVG drawn
here, so the page needs no script and no internet.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from datetime import date, timedelta
from typing import Any

from django.db.models import Count, Q, Sum
from django.db.models.functions import TruncDate
from django.utils.html import escape

from casino.engine.rules import RULESETS
from casino.models import Round, RoundStatus
from ledger.money import format_amount

# Theoretical RTP per banked rule set, in percent. atlantic_city: the seed's advertised 99.51%.
# classic and duel_classic: `manage.py simulate`, 1,000,000 rounds, basic strategy (docs/rules.md,
# "RTP simulator"; docs/operations.md, "Staff dashboard"). duel: 1 - fee, by players per round.
THEORETICAL_RTP: dict[str, float] = {
    "classic": 99.54,
    "atlantic_city": 99.51,
    "duel_classic": 93.89,
}
DUEL_NAME = "duel"
CSV_COLUMNS = (
    "day",
    "ruleset",
    "rounds",
    "settled",
    "voids",
    "handle",
    "returns",
    "ggr",
    "fees",
    "rtp_measured",
    "rtp_theoretical",
)


def daily_rows(*, since: date, until: date) -> list[dict[str, Any]]:
    """One row per (day, rule set) with finished rounds between `since` and `until` inclusive."""
    settled = Q(status=RoundStatus.SETTLED)
    grouped = (
        Round.objects.exclude(status=RoundStatus.OPEN)
        .filter(finished_at__date__gte=since, finished_at__date__lte=until)
        .annotate(day=TruncDate("finished_at"))
        .values("day", "ruleset")
        .annotate(
            rounds=Count("id"),
            settled=Count("id", filter=settled),
            voids=Count("id", filter=Q(status=RoundStatus.VOIDED)),
            handle=Sum("stake_total", filter=settled, default=0),
            returns=Sum("return_total", filter=settled, default=0),
            fees=Sum("fee", filter=settled, default=0),
        )
        .order_by("day", "ruleset")
    )
    duel = _duel_theoretical(since=since, until=until)
    rows = []
    for g in grouped:
        handle, returns = int(g["handle"]), int(g["returns"])
        rows.append(
            {
                **g,
                "handle": handle,
                "returns": returns,
                "fees": int(g["fees"]),
                "ggr": handle - returns,
                "rtp_measured": round(100 * returns / handle, 2) if handle else None,
                "rtp_theoretical": duel.get(g["day"])
                if g["ruleset"] == DUEL_NAME
                else THEORETICAL_RTP.get(g["ruleset"]),
            }
        )
    return rows


def _duel_theoretical(*, since: date, until: date) -> dict[date, float]:
    """Per day: the stake-weighted 1 - fee of settled duel rounds (the fee depends on players)."""
    rules = RULESETS[DUEL_NAME]
    kept: dict[date, int] = {}
    staked: dict[date, int] = {}
    rounds = (
        Round.objects.filter(ruleset=DUEL_NAME, status=RoundStatus.SETTLED)
        .filter(finished_at__date__gte=since, finished_at__date__lte=until)
        .annotate(day=TruncDate("finished_at"), seated=Count("players"))
        .values_list("day", "stake_total", "seated")
    )
    for day, stake, seated in rounds:
        staked[day] = staked.get(day, 0) + stake
        kept[day] = kept.get(day, 0) + stake * (10_000 - rules.fee_bps_for(seated))
    return {d: round(kept[d] / staked[d] / 100, 2) for d in staked if staked[d]}


def csv_lines(rows: list[dict[str, Any]]) -> Iterator[str]:
    """The report as CSV text, amounts in USDC with 6 decimals."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(CSV_COLUMNS)
    for row in rows:
        values = dict(row)
        for money in ("handle", "returns", "ggr", "fees"):
            values[money] = format_amount(row[money])
        writer.writerow(["" if values[c] is None else values[c] for c in CSV_COLUMNS])
    yield buffer.getvalue()


CHART_W, CHART_H, PAD = 640, 220, 40
COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd")


def svg_chart(rows: list[dict[str, Any]]) -> str:
    """GGR per day as stacked-free grouped bars per rule set, as inline SVG markup."""
    if not rows:
        return (
            '<svg xmlns="http://www.w3.org/2000/svg" width="640" height="40" role="img">'
            '<text x="10" y="25">No finished rounds in this range.</text></svg>'
        )
    days = sorted({r["day"] for r in rows})
    rulesets = sorted({r["ruleset"] for r in rows})
    values = {(r["day"], r["ruleset"]): r["ggr"] for r in rows}
    top = max(1, *(abs(v) for v in values.values()))
    zero_y = PAD + (CHART_H - 2 * PAD) / 2
    half = (CHART_H - 2 * PAD) / 2
    slot = (CHART_W - 2 * PAD) / max(1, len(days))
    bar = max(2.0, slot / (len(rulesets) + 1))
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{CHART_W}" height="{CHART_H + 30}" '
        'role="img" aria-label="GGR per day and rule set">',
        f'<line x1="{PAD}" y1="{zero_y}" x2="{CHART_W - PAD}" y2="{zero_y}" stroke="#888"/>',
        f'<text x="4" y="{PAD - 8}" font-size="10">GGR (USDC), max {escape(format_amount(top))}'
        "</text>",
    ]
    for i, day in enumerate(days):
        x0 = PAD + i * slot
        for j, ruleset in enumerate(rulesets):
            value = values.get((day, ruleset))
            if value is None:
                continue
            height = abs(value) / top * half
            y = zero_y - height if value >= 0 else zero_y
            parts.append(
                f'<rect class="bar" x="{x0 + j * bar:.1f}" y="{y:.1f}" width="{bar * 0.9:.1f}" '
                f'height="{height:.1f}" fill="{COLORS[j % len(COLORS)]}">'
                f"<title>{escape(str(day))} {escape(ruleset)}: {escape(format_amount(value))}"
                "</title></rect>"
            )
        parts.append(
            f'<text x="{x0:.1f}" y="{CHART_H - PAD + 14}" font-size="9">'
            f"{escape(day.strftime('%m-%d') if isinstance(day, date) else str(day))}</text>"
        )
    for j, ruleset in enumerate(rulesets):
        x = PAD + j * 120
        parts.append(
            f'<rect x="{x}" y="{CHART_H}" width="10" height="10" fill="{COLORS[j % len(COLORS)]}"/>'
            f'<text x="{x + 14}" y="{CHART_H + 9}" font-size="10">{escape(ruleset)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def default_range(today: date) -> tuple[date, date]:
    return today - timedelta(days=13), today
