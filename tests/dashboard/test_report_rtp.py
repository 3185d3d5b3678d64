"""The daily report on a fixed set of rounds: the totals row, RTP against the theoretical
value with its 99% range (hot, cold, as expected), one chart with axes, and the same
numbers and units in the page, the chart and the CSV (issue 21)."""

from __future__ import annotations

import csv
import io
import math
import re
import uuid
from datetime import UTC, date, datetime

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from casino.dashboard import report
from casino.engine.rules import USDC
from casino.models import Round, RoundPlayer, Table
from tests.dashboard.conftest import login, make_table

pytestmark = pytest.mark.django_db

DAY = date(2026, 11, 20)
AT = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
QUERY = {"since": DAY.isoformat(), "until": DAY.isoformat()}


def rounds(table: Table, outcomes: list[tuple[int, int, int]], players: int = 0) -> None:
    """Settled round rows (stake, gross return, fee in micro-USDC), finished on DAY."""
    users = [
        get_user_model().objects.create_user(username=f"{table.ruleset}-p{i}")
        for i in range(players)
    ]
    rows = [
        Round(
            id=str(uuid.uuid4()),
            table=table,
            ruleset=table.ruleset,
            status="settled",
            chain_id="fixed",
            nonce=i,
            commitment="0" * 64,
            stake_total=stake,
            return_total=returned,
            fee=fee,
            opened_at=AT,
            finished_at=AT,
        )
        for i, (stake, returned, fee) in enumerate(outcomes)
    ]
    Round.objects.bulk_create(rows)
    RoundPlayer.objects.bulk_create(
        RoundPlayer(round=r, user=u, seat=s) for r in rows for s, u in enumerate(users)
    )


@pytest.fixture
def fixed() -> dict[str, Table]:
    """classic: 1000 rounds of 10 USDC, 550 returning 20 (RTP 110%: hot);
    atlantic_city: 1000 rounds of 10 USDC, 450 returning 20 (90%: cold);
    duel: 3 rounds of 2 players x 1 USDC, 1.94 back, 0.06 fee (97% = 1 - 3%: as expected)."""
    tables = {name: make_table(name) for name in ("classic", "atlantic_city", "duel")}
    ten, twenty = 10 * USDC, 20 * USDC
    rounds(tables["classic"], [(ten, twenty, 0)] * 550 + [(ten, 0, 0)] * 450)
    rounds(tables["atlantic_city"], [(ten, twenty, 0)] * 450 + [(ten, 0, 0)] * 550)
    rounds(tables["duel"], [(2 * USDC, 1_940_000, 60_000)] * 3, players=2)
    return tables


def expected_range(theoretical: float, n: int, stake: float, deviations: float) -> tuple:
    """The documented formula, written out: theoretical +- 2.576 * sqrt(n/(n-1) * sum d^2) / S."""
    se = 100 * math.sqrt(n / (n - 1) * deviations) / stake
    return round(theoretical - 2.576 * se, 2), round(theoretical + 2.576 * se, 2)


def test_rtp_rows_and_their_99_percent_ranges(fixed) -> None:
    built = report.build(since=DAY, until=DAY)
    by = {r["ruleset"]: r for r in built.rows}
    # classic: R = 1.10, d = +9 USDC (550 x) and -11 USDC (450 x): sum d^2 = 99,000 USDC^2.
    assert expected_range(99.67, 1000, 10_000, 99_000) == (91.56, 107.78)
    classic = by["classic"]
    assert (classic["rtp_measured"], classic["rtp_theoretical"]) == (110.0, 99.67)
    assert (classic["rtp_low"], classic["rtp_high"], classic["verdict"]) == (91.56, 107.78, "hot")
    atlantic = by["atlantic_city"]
    assert expected_range(99.57, 1000, 10_000, 99_000) == (91.46, 107.68)
    assert (atlantic["rtp_measured"], atlantic["rtp_low"], atlantic["rtp_high"]) == (
        90.0,
        91.46,
        107.68,
    )
    assert atlantic["verdict"] == "cold"
    duel = by["duel"]  # every round returns exactly 97%: no variance, the range is the point
    assert (duel["rtp_measured"], duel["rtp_theoretical"]) == (97.0, 97.0)
    assert (duel["rtp_low"], duel["rtp_high"], duel["verdict"]) == (97.0, 97.0, "as expected")
    # by rule set over the range and by table: the same figures here (one day, one table each)
    assert [(r["ruleset"], r["verdict"]) for r in built.by_ruleset] == [
        ("atlantic_city", "cold"),
        ("classic", "hot"),
        ("duel", "as expected"),
    ]
    assert {r["table_id"]: r["verdict"] for r in built.by_table} == {
        fixed["classic"].pk: "hot",
        fixed["atlantic_city"].pk: "cold",
        fixed["duel"].pk: "as expected",
    }


def test_totals_row(fixed) -> None:
    totals = report.build(since=DAY, until=DAY).totals
    assert (totals["rounds"], totals["settled"], totals["voids"]) == (2003, 2003, 0)
    assert totals["handle"] == 20_006 * USDC
    assert totals["returns"] == 20_005_820_000
    assert (totals["ggr"], totals["fees"]) == (180_000, 180_000)
    # handle-weighted theoretical: (10,000 x 99.67 + 10,000 x 99.57 + 6 x 97) / 20,006
    assert totals["rtp_theoretical"] == 99.62
    assert totals["rtp_measured"] == 100.0
    # the rule sets' variances add: sqrt(2 x 1000/999 x 99,000) / 20,006 USDC
    se = 100 * math.sqrt(2 * 1000 / 999 * 99_000) / 20_006
    theoretical = (10_000 * 99.67 + 10_000 * 99.57 + 6 * 97) / 20_006
    assert (
        (totals["rtp_low"], totals["rtp_high"])
        == (
            round(theoretical - 2.576 * se, 2),
            round(theoretical + 2.576 * se, 2),
        )
        == (93.89, 105.35)
    )
    assert totals["verdict"] == "as expected"


def test_page_chart_and_csv_print_the_same_numbers_and_units(fixed, staff) -> None:
    client = login(staff["auditor"])
    page = client.get(reverse("admin:casino_round_report"), QUERY)
    html = page.content.decode()
    text = b"".join(client.get(reverse("admin:casino_round_report_csv"), QUERY)).decode()
    rows = {r["ruleset"]: r for r in csv.DictReader(io.StringIO(text))}
    assert list(rows) == ["atlantic_city", "classic", "duel", "all"]
    assert rows["classic"] == {
        "day": "2026-11-20",
        "ruleset": "classic",
        "rounds": "1000",
        "settled": "1000",
        "voids": "0",
        "handle_usdc": "10000.00",
        "returns_usdc": "11000.00",
        "ggr_usdc": "-1000.00",
        "fees_usdc": "0.00",
        "rtp_measured_pct": "110.00",
        "rtp_theoretical_pct": "99.67",
        "rtp_99_low_pct": "91.56",
        "rtp_99_high_pct": "107.78",
        "verdict": "hot",
    }
    assert rows["all"] | {} == {
        "day": "total",
        "ruleset": "all",
        "rounds": "2003",
        "settled": "2003",
        "voids": "0",
        "handle_usdc": "20006.00",
        "returns_usdc": "20005.82",
        "ggr_usdc": "0.18",
        "fees_usdc": "0.18",
        "rtp_measured_pct": "100.00",
        "rtp_theoretical_pct": "99.62",
        "rtp_99_low_pct": "93.89",
        "rtp_99_high_pct": "105.35",
        "verdict": "as expected",
    }
    # The page: the same strings, with the unit; the hot and cold rows are marked.
    classic_row = re.search(
        r'<tr class="hot" data-day="2026-11-20" data-ruleset="classic">'
        r"(.*?)</tr>",
        html,
        re.S,
    )
    assert classic_row is not None
    cells = re.findall(r"<td[^>]*>(.*?)</td>", classic_row.group(1), re.S)
    assert cells == [
        "2026-11-20", "classic", "1000", "1000", "0", "10000.00 USDC", "11000.00 USDC",
        "-1000.00 USDC", "0.00 USDC", "110.00%", "99.67%", "91.56–107.78%", "hot",
    ]  # fmt: skip
    assert 'data-ruleset="atlantic_city"' in html and '<tr class="cold" data-day' in html
    totals = re.search(r'<tr class="totals\s*" id="totals">(.*?)</tr>', html, re.S)
    assert totals is not None
    assert re.findall(r"<td[^>]*>(.*?)</td>", totals.group(1), re.S) == [
        "Total", "all", "2003", "2003", "0", "20006.00 USDC", "20005.82 USDC", "0.18 USDC",
        "0.18 USDC", "100.00%", "99.62%", "93.89–105.35%", "as expected",
    ]  # fmt: skip
    # The chart: one SVG, titled axes, tick labels and bar titles in the same USDC format.
    chart = page.context["chart"]
    assert chart.count("<svg") == 1
    assert "GGR (USDC)</text>" in chart and "Day (UTC, by finishing time)</text>" in chart
    bars = re.findall(r"<title>([^<]*)</title></rect>", chart)
    assert bars == [
        "2026-11-20 atlantic_city: GGR 1000.00 USDC",
        "2026-11-20 classic: GGR -1000.00 USDC",
        "2026-11-20 duel: GGR 0.18 USDC",
    ]
    ticks = re.findall(r'class="y-tick"[^>]*>([^<]*)</text>', chart)
    assert ticks == ["-1000.00 USDC", "-500.00 USDC", "0.00 USDC", "500.00 USDC", "1000.00 USDC"]
    legend = re.findall(r'class="legend"[^>]*>([^<]*)</text>', chart)
    assert legend == ["atlantic_city", "classic", "duel"]


def test_fewer_than_two_rounds_have_no_range(staff) -> None:
    rounds(make_table("classic"), [(10 * USDC, 20 * USDC, 0)])
    row = report.build(since=DAY, until=DAY).rows[0]
    assert (row["rtp_measured"], row["rtp_low"], row["rtp_high"], row["verdict"]) == (
        200.0,
        None,
        None,
        "",
    )
    page = login(staff["reviewer"]).get(reverse("admin:casino_round_report"), QUERY)
    assert "200.00%" in page.content.decode()
