"""The daily report: per day and rule set figures, theoretical RTP, SVG chart, CSV."""

from __future__ import annotations

import csv
import io
import random
from datetime import UTC, datetime

import pytest
from django.urls import reverse

from casino.dashboard import report
from casino.dashboard.review import round_void_by_staff
from casino.models import Round
from casino.tables.play import play_round
from tests.dashboard.conftest import login, make_player, make_table

pytestmark = pytest.mark.django_db


@pytest.fixture
def played() -> dict[str, list[str]]:
    rng = random.Random(5)
    alice, bob, carol = (make_player(n) for n in ("alice", "bob", "carol"))
    classic, duel = make_table("classic"), make_table("duel")
    ids = {
        "classic": [play_round(classic, [alice], rng).round.id for _ in range(4)],
        "duel": [play_round(duel, [bob, carol], rng).round.id for _ in range(2)],
    }
    round_void_by_staff(round_id=ids["classic"][0], reason="test void", user=None)
    return ids


def test_rows_match_the_rounds(played) -> None:
    today = datetime.now(UTC).date()
    rows = {r["ruleset"]: r for r in report.daily_rows(since=today, until=today)}
    assert set(rows) == {"classic", "duel"}
    settled = Round.objects.filter(id__in=played["classic"][1:])
    classic = rows["classic"]
    assert (classic["rounds"], classic["settled"], classic["voids"]) == (4, 3, 1)
    assert classic["handle"] == sum(r.stake_total for r in settled)
    assert classic["ggr"] == classic["handle"] - sum(r.return_total for r in settled)
    assert classic["rtp_theoretical"] == report.THEORETICAL_RTP["classic"]
    duel = rows["duel"]
    assert duel["fees"] == sum(r.fee for r in Round.objects.filter(id__in=played["duel"])) > 0
    assert duel["ggr"] == duel["fees"]  # player against player: the house keeps only the fee
    assert duel["rtp_theoretical"] == 97.0  # two players: a 3% fee
    assert duel["rtp_measured"] == 97.0
    assert report.daily_rows(since=date_before(today), until=date_before(today)) == []


def date_before(day):
    from datetime import timedelta

    return day - timedelta(days=1)


def test_page_chart_and_csv(played, staff) -> None:
    client = login(staff["auditor"])
    page = client.get(reverse("admin:casino_round_report"))
    html = page.content.decode()
    assert page.status_code == 200 and "<svg" in html and html.count('class="bar"') == 2
    assert "http://" not in page.context["chart"].replace("http://www.w3.org/2000/svg", "")
    response = client.get(reverse("admin:casino_round_report_csv"))
    text = b"".join(response.streaming_content).decode()
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [r["ruleset"] for r in rows] == ["classic", "duel", "all"]  # then the totals row
    assert rows[0]["voids"] == "1" and rows[1]["rtp_theoretical_pct"] == "97.00"
    assert rows[2]["day"] == "total" and rows[2]["voids"] == "1"
    assert "." in rows[0]["handle_usdc"] and len(rows[0]["handle_usdc"].split(".")[1]) >= 2
    bad = client.get(reverse("admin:casino_round_report"), {"since": "not-a-date"})
    assert bad.status_code == 400


def test_empty_chart_says_so() -> None:
    assert "No finished rounds" in report.svg_chart([])


def test_a_reversed_range_is_named_not_shown_as_empty(staff) -> None:
    """From after To (two date pickers make it easy) said "No finished rounds in this range."
    as if none had been played: it now says the range is reversed."""
    auditor = login(staff["auditor"])
    url = reverse("admin:casino_round_report")
    response = auditor.get(url, {"since": "2026-12-07", "until": "2026-12-01"})
    assert response.status_code == 400
    assert (
        "From (2026-12-07) is after to (2026-12-01): no day is in this range. Pick a From on "
        "or before the To." in response.content.decode()
    )
    csv_url = reverse("admin:casino_round_report_csv")
    assert auditor.get(csv_url, {"since": "2026-12-07", "until": "2026-12-01"}).status_code == 400
    assert auditor.get(url, {"since": "2026-12-01", "until": "2026-12-07"}).status_code == 200
