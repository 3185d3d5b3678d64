"""The daily report: rounds, handle, GGR, fees and voids per day and rule set, with RTP
against each rule set's theoretical value and the 99% range expected for the rounds played.

Figures come from the round projections (`casino.models.Round`) of finished rounds, by the
UTC day they finished. Handle = stakes of settled rounds; GGR = handle - gross returns (the
house's win, fees included); measured RTP = returns / handle.

Expected range (99%, normal approximation). For the n settled rounds of a rule set, with
stakes s_i, returns r_i, S = sum s_i and R = sum r_i / S (the measured RTP), the per-round
deviations d_i = r_i - R * s_i give the ratio's standard error

    SE = sqrt(n / (n - 1) * sum d_i^2) / S

and the range is theoretical +- 2.576 * SE (cut at 0). A measured RTP above it is "hot"
(players win more than the rules give), below it "cold"; either is a 1-in-100 event for a
fair game, so it stands out. Rows spanning several rule sets (the totals) centre on the
handle-weighted theoretical RTP and add the rule sets' variances: SE = sqrt(sum over rule
sets of n/(n-1) * sum d^2) / S. Fewer than 2 settled rounds of a rule set: no range.
Comparisons are made on the printed figures (2 decimals), so a duel table whose measured
RTP equals 1 - fee to the cent never shows as hot from float noise.

Every amount is printed by `casino.dashboard.display` (USDC) and every percentage by `pct`,
in the page, the chart and the CSV alike. The chart is an SVG drawn here, so the page needs
no script and no internet.
"""

from __future__ import annotations

import csv
import io
import math
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from django.db.models import Count, FloatField, Q, Sum
from django.db.models.functions import Cast, TruncDate
from django.utils.html import escape

from casino.engine.rules import RULESETS
from casino.models import Round, RoundStatus, Table
from ledger.money import usdc, usdc_number

# Theoretical RTP per banked rule set, in percent of everything staked (doubles and splits
# included), as the report measures it: a rule set's RTP per initial bet, 1 + edge, is
# 1 + edge / (average stake per initial bet) here, which for duel_classic's 6.2% edge is 0.7
# points more (docs/operations.md, "Theoretical RTP used by the report"). atlantic_city: the
# seed's advertised 99.51% per initial bet, converted with the simulated average stake (1.1276);
# classic and duel_classic: `manage.py simulate`, 4,000,000 rounds a run, basic strategy
# (docs/rules.md, "RTP simulator"). duel: 1 - fee, by players per round.
THEORETICAL_RTP: dict[str, float] = {
    "classic": 99.67,
    "atlantic_city": 99.57,
    "duel_classic": 94.52,
}
DUEL_NAME = "duel"
Z99 = 2.576  # two-sided 99% of the normal distribution
HOT, COLD, EXPECTED = "hot", "cold", "as expected"
MONEY = ("handle", "returns", "ggr", "fees")
CSV_COLUMNS = (
    "day",
    "ruleset",
    "rounds",
    "settled",
    "voids",
    "handle_usdc",
    "returns_usdc",
    "ggr_usdc",
    "fees_usdc",
    "rtp_measured_pct",
    "rtp_theoretical_pct",
    "rtp_99_low_pct",
    "rtp_99_high_pct",
    "verdict",
)
TOTAL = "total"


@dataclass
class Cell:
    """The finest grain of the report: one day, rule set and table."""

    day: date
    ruleset: str
    table_id: int
    rounds: int
    settled: int
    voids: int
    handle: int
    returns: int
    fees: int
    rr: float  # sum of return^2 over settled rounds (micro-USDC^2)
    rs: float  # sum of return * stake
    ss: float  # sum of stake^2
    theoretical_weight: float | None  # sum of stake * theoretical RTP % (None: not known)


def pct(value: float | None) -> str:
    """A percentage as the report prints it: 2 decimals, no sign for positives ("" if none)."""
    return "" if value is None else f"{value:.2f}"


def _cells(*, since: date, until: date) -> list[Cell]:
    settled = Q(status=RoundStatus.SETTLED)
    stake, ret = Cast("stake_total", FloatField()), Cast("return_total", FloatField())
    grouped = (
        Round.objects.exclude(status=RoundStatus.OPEN)
        .filter(finished_at__date__gte=since, finished_at__date__lte=until)
        .annotate(day=TruncDate("finished_at"))
        .values("day", "ruleset", "table_id")
        .annotate(
            rounds=Count("id"),
            settled=Count("id", filter=settled),
            voids=Count("id", filter=Q(status=RoundStatus.VOIDED)),
            handle=Sum("stake_total", filter=settled, default=0),
            returns=Sum("return_total", filter=settled, default=0),
            fees=Sum("fee", filter=settled, default=0),
            rr=Sum(ret * ret, filter=settled, default=0.0),
            rs=Sum(ret * stake, filter=settled, default=0.0),
            ss=Sum(stake * stake, filter=settled, default=0.0),
        )
        .order_by("day", "ruleset", "table_id")
    )
    duel = _duel_weights(since=since, until=until)
    cells = []
    for g in grouped:
        handle = int(g["handle"])
        if g["ruleset"] == DUEL_NAME:
            weight: float | None = duel.get((g["day"], g["table_id"]), 0.0)
        elif g["ruleset"] in THEORETICAL_RTP:
            weight = handle * THEORETICAL_RTP[g["ruleset"]]
        else:
            weight = None
        cells.append(
            Cell(
                day=g["day"],
                ruleset=g["ruleset"],
                table_id=g["table_id"],
                rounds=g["rounds"],
                settled=g["settled"],
                voids=g["voids"],
                handle=handle,
                returns=int(g["returns"]),
                fees=int(g["fees"]),
                rr=float(g["rr"]),
                rs=float(g["rs"]),
                ss=float(g["ss"]),
                theoretical_weight=weight,
            )
        )
    return cells


def _duel_weights(*, since: date, until: date) -> dict[tuple[date, int], float]:
    """Per (day, table): sum of stake * (1 - fee) in percent over settled duel rounds (the fee
    depends on the number of players)."""
    rules = RULESETS[DUEL_NAME]
    weights: dict[tuple[date, int], float] = defaultdict(float)
    rounds = (
        Round.objects.filter(ruleset=DUEL_NAME, status=RoundStatus.SETTLED)
        .filter(finished_at__date__gte=since, finished_at__date__lte=until)
        .annotate(day=TruncDate("finished_at"), seated=Count("players"))
        .values_list("day", "table_id", "stake_total", "seated")
    )
    for day, table_id, stake, seated in rounds:
        weights[(day, table_id)] += stake * (10_000 - rules.fee_bps_for(seated)) / 100
    return dict(weights)


def summarize(cells: Iterable[Cell], **labels: Any) -> dict[str, Any]:
    """One report row over these cells: sums, GGR, measured and theoretical RTP, 99% range."""
    cells = list(cells)
    row: dict[str, Any] = dict(labels)
    for name in ("rounds", "settled", "voids", "handle", "returns", "fees"):
        row[name] = sum(getattr(c, name) for c in cells)
    handle, returns = row["handle"], row["returns"]
    row["ggr"] = handle - returns
    weights = [c.theoretical_weight for c in cells if c.handle]
    theoretical = (
        sum(w for w in weights if w is not None) / handle
        if handle and all(w is not None for w in weights)
        else None
    )
    measured = 100 * returns / handle if handle else None
    se = _standard_error(cells)
    low = high = None
    if theoretical is not None and se is not None:
        low, high = max(0.0, theoretical - Z99 * se), theoretical + Z99 * se
    row.update(
        rtp_measured=_round2(measured),
        rtp_theoretical=_round2(theoretical),
        rtp_low=_round2(low),
        rtp_high=_round2(high),
        rtp_se=se,
    )
    row["verdict"] = _verdict(row["rtp_measured"], row["rtp_low"], row["rtp_high"])
    return row


def _round2(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def _standard_error(cells: list[Cell]) -> float | None:
    """SE of the measured RTP in percentage points (module docstring), None if unknown."""
    by_ruleset: dict[str, list[Cell]] = defaultdict(list)
    for cell in cells:
        if cell.settled:
            by_ruleset[cell.ruleset].append(cell)
    total_stake = sum(c.handle for group in by_ruleset.values() for c in group)
    if not by_ruleset or not total_stake:
        return None
    variance_sum = 0.0
    for group in by_ruleset.values():
        n = sum(c.settled for c in group)
        stake = sum(c.handle for c in group)
        if n < 2 or not stake:
            return None
        ratio = sum(c.returns for c in group) / stake
        rr, rs, ss = (sum(getattr(c, k) for c in group) for k in ("rr", "rs", "ss"))
        deviations = max(0.0, rr - 2 * ratio * rs + ratio * ratio * ss)
        variance_sum += n / (n - 1) * deviations
    return 100 * math.sqrt(variance_sum) / total_stake


def _verdict(measured: float | None, low: float | None, high: float | None) -> str:
    if measured is None or low is None or high is None:
        return ""
    if measured > high:
        return HOT
    if measured < low:
        return COLD
    return EXPECTED


def daily_rows(*, since: date, until: date) -> list[dict[str, Any]]:
    """One row per (day, rule set) with finished rounds between `since` and `until` inclusive."""
    return _rows_by(
        _cells(since=since, until=until), lambda c: (c.day, c.ruleset), "day", "ruleset"
    )


def _rows_by(cells: list[Cell], key: Any, *names: str) -> list[dict[str, Any]]:
    """One row per value of `key(cell)` (a tuple, labelled `names`), in sorted order."""
    groups: dict[Any, list[Cell]] = defaultdict(list)
    for cell in cells:
        groups[key(cell)].append(cell)
    return [
        summarize(
            groups[k], **{"ruleset": groups[k][0].ruleset, **dict(zip(names, k, strict=True))}
        )
        for k in sorted(groups)
    ]


@dataclass
class Report:
    since: date
    until: date
    rows: list[dict[str, Any]]  # per day and rule set
    totals: dict[str, Any]  # every row together
    by_ruleset: list[dict[str, Any]]  # the range per rule set
    by_table: list[dict[str, Any]]  # the range per table


def build(*, since: date, until: date) -> Report:
    """The whole report from one pass over the rounds."""
    cells = _cells(since=since, until=until)
    by_table = _rows_by(cells, lambda c: (c.table_id,), "table_id")
    names = dict(
        Table.objects.filter(pk__in=[r["table_id"] for r in by_table]).values_list("pk", "name")
    )
    for row in by_table:
        row["table"] = f"{names.get(row['table_id'], '?')} (#{row['table_id']})"
    return Report(
        since=since,
        until=until,
        rows=_rows_by(cells, lambda c: (c.day, c.ruleset), "day", "ruleset"),
        totals=summarize(cells, day=TOTAL, ruleset="all"),
        by_ruleset=_rows_by(cells, lambda c: (c.ruleset,), "ruleset"),
        by_table=by_table,
    )


def printed(row: dict[str, Any]) -> dict[str, str]:
    """A row's figures as the page and the CSV print them (the same strings)."""
    day = row.get("day")
    out = {
        "day": day.isoformat() if isinstance(day, date) else str(day or ""),
        "ruleset": str(row.get("ruleset", "")),
        "rounds": str(row["rounds"]),
        "settled": str(row["settled"]),
        "voids": str(row["voids"]),
        "verdict": row["verdict"],
    }
    for name in MONEY:
        out[f"{name}_usdc"] = usdc_number(row[name])
        out[name] = usdc(row[name])
    for name in ("measured", "theoretical", "low", "high"):
        out[f"rtp_{name}_pct"] = pct(row[f"rtp_{name}"])
    out["rtp_99_low_pct"], out["rtp_99_high_pct"] = out["rtp_low_pct"], out["rtp_high_pct"]
    return out


def csv_lines(rows: list[dict[str, Any]], totals: dict[str, Any] | None = None) -> Iterator[str]:
    """The report as CSV: amounts in USDC (`usdc_number`), percentages with 2 decimals, then
    the totals row (day "total")."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(CSV_COLUMNS)
    for row in [*rows, *([totals] if totals else [])]:
        shown = printed(row)
        writer.writerow([shown[c] for c in CSV_COLUMNS])
    yield buffer.getvalue()


CHART_W, CHART_H = 720, 300
LEFT, RIGHT, TOP, BOTTOM = 96, 16, 36, 64
COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd")


def _nice_step(top: int) -> int:
    """A round tick step in micro-USDC (1, 2 or 5 times a power of ten) for about 2 ticks."""
    raw = max(1, top // 2)
    power = int(10 ** (len(str(raw)) - 1))
    for factor in (1, 2, 5, 10):
        if factor * power >= raw:
            return factor * power
    return 10 * power  # pragma: no cover


def svg_chart(rows: list[dict[str, Any]]) -> str:
    """GGR per day, one bar per rule set, in one chart with a titled, labelled y axis (USDC)
    and x axis (UTC day) and a legend; each bar's title gives its exact amount."""
    if not rows:
        return (
            '<svg xmlns="http://www.w3.org/2000/svg" width="640" height="40" role="img">'
            '<text x="10" y="25">No finished rounds in this range.</text></svg>'
        )
    days = sorted({r["day"] for r in rows})
    rulesets = sorted({r["ruleset"] for r in rows})
    values: dict[tuple[Any, str], int] = {(r["day"], r["ruleset"]): int(r["ggr"]) for r in rows}
    highest, lowest = max(values.values()), min(values.values())
    step = _nice_step(max(1, highest, -lowest))
    top: int = step * max(1, -(-max(highest, 0) // step))  # ceil to a whole step
    bottom: int = -step * (-(-max(-lowest, 0) // step))
    plot_h = CHART_H - TOP - BOTTOM
    plot_w = CHART_W - LEFT - RIGHT

    def y_of(value: int) -> float:
        return TOP + (top - value) / (top - bottom) * plot_h

    slot = plot_w / len(days)
    bar = slot / (len(rulesets) + 1)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{CHART_W}" height="{CHART_H}" '
        'role="img" aria-labelledby="chart-title" id="ggr-chart">',
        '<title id="chart-title">GGR per day and rule set (USDC)</title>',
        f'<text x="{LEFT}" y="16" font-size="13" font-weight="bold">'
        "GGR per day and rule set</text>",
    ]
    tick = bottom
    while tick <= top:
        y = y_of(tick)
        parts.append(
            f'<line x1="{LEFT}" y1="{y:.1f}" x2="{CHART_W - RIGHT}" y2="{y:.1f}" '
            f'stroke="{"#444" if tick == 0 else "#ddd"}"/>'
            f'<text class="y-tick" x="{LEFT - 6}" y="{y + 4:.1f}" font-size="10" '
            f'text-anchor="end">{escape(usdc(tick))}</text>'
        )
        tick += step
    parts.append(
        f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{TOP + plot_h}" stroke="#444"/>'
        f'<text class="axis-label" x="14" y="{TOP + plot_h / 2:.1f}" font-size="11" '
        f'text-anchor="middle" transform="rotate(-90 14 {TOP + plot_h / 2:.1f})">'
        "GGR (USDC)</text>"
    )
    for i, day in enumerate(days):
        x0 = LEFT + i * slot + bar / 2
        for j, ruleset in enumerate(rulesets):
            value = values.get((day, ruleset))
            if value is None:
                continue
            y0, y1 = sorted((y_of(value), y_of(0)))
            parts.append(
                f'<rect class="bar" data-ruleset="{escape(ruleset)}" x="{x0 + j * bar:.1f}" '
                f'y="{y0:.1f}" width="{bar * 0.9:.1f}" height="{max(y1 - y0, 0.5):.1f}" '
                f'fill="{COLORS[j % len(COLORS)]}"><title>{escape(str(day))} {escape(ruleset)}: '
                f"GGR {escape(usdc(value))}</title></rect>"
            )
        label = day.strftime("%m-%d") if isinstance(day, date) else str(day)
        parts.append(
            f'<text class="x-tick" x="{LEFT + (i + 0.5) * slot:.1f}" y="{TOP + plot_h + 14}" '
            f'font-size="10" text-anchor="middle">{escape(label)}</text>'
        )
    parts.append(
        f'<text class="axis-label" x="{LEFT + plot_w / 2:.1f}" y="{TOP + plot_h + 30}" '
        'font-size="11" text-anchor="middle">Day (UTC, by finishing time)</text>'
    )
    for j, ruleset in enumerate(rulesets):
        x = LEFT + j * 130
        y = CHART_H - 16
        parts.append(
            f'<rect x="{x}" y="{y}" width="10" height="10" fill="{COLORS[j % len(COLORS)]}"/>'
            f'<text class="legend" x="{x + 14}" y="{y + 9}" font-size="10">{escape(ruleset)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def default_range(today: date) -> tuple[date, date]:
    return today - timedelta(days=13), today
