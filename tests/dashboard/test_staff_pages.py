"""Staff pages (issue 21): USDC amounts by one formatter, players by name, the rounds list's
columns, a void closing its review item, the styled 403 naming the role, "Mark reviewed"
without notes, player profiles for every player, spent escrows hidden, "View site"."""

from __future__ import annotations

import importlib
import re

import pytest
from django.apps import apps as django_apps
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client, override_settings
from django.urls import reverse

from casino.dashboard import review
from casino.dashboard.models import PlayerProfile, RoundReview
from casino.engine.rules import USDC
from casino.models import Round
from ledger import money
from tests.dashboard.conftest import finish, login

pytestmark = pytest.mark.django_db


def review_url(round_id: str) -> str:
    return reverse("admin:round_review", args=[round_id])


def text_of(html: str) -> str:
    """The page's text: tags dropped, whitespace collapsed."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_one_usdc_formatter() -> None:
    assert money.usdc(600_000_000) == "600.00 USDC"
    assert money.usdc(12_500_000) == "12.50 USDC"
    assert money.usdc(123_456_789) == "123.456789 USDC"  # never rounded
    assert money.usdc(1) == "0.000001 USDC"
    assert money.usdc(0) == "0.00 USDC"
    assert money.usdc(-1_500_000) == "-1.50 USDC"
    assert money.usdc_number(10_000 * USDC) == "10000.00"
    with pytest.raises(TypeError):
        money.usdc(1.5)  # type: ignore[arg-type]


def test_review_page_amounts_in_usdc_and_players_by_name(open_round, staff) -> None:
    round_id, player = open_round  # alice bets 10 USDC on one box
    page = login(staff["reviewer"]).get(review_url(round_id)).content.decode()
    text = text_of(page)
    assert "Stake: 10.00 USDC · Return: 0.00 USDC · Fee: 0.00 USDC" in text
    # only the event timeline shows data as recorded (and says so in its header)
    outside = text_of(re.sub(r'<table id="timeline">.*?</table>', "", page, flags=re.S))
    assert "micro-USDC" not in outside and "micro-USDC" in text
    assert re.search(r"<th>alice, box 1</th>", page)
    assert "stake 10.00 USDC" in text
    cards = re.search(r'<table id="cards">(.*?)</table>', page, re.S)
    assert cards is not None
    assert "Player " not in cards.group(1) and "box 0" not in cards.group(1)
    players = re.search(r'<table id="players">(.*?)</table>', page, re.S)
    assert players is not None
    assert text_of(players.group(1)).split() == [
        *("Seat", "Player", "Stake", "Gross", "return"),
        *("1", "alice", "10.00", "USDC", "0.00", "USDC"),
    ]
    ledger = re.search(r'<table id="ledger">(.*?)</table>', page, re.S)
    assert ledger is not None
    # the player's account by its key and, as everywhere, the player by name
    assert f"player_available:{player.pk} (alice): -10.00 USDC" in text_of(ledger.group(1))
    assert f"round_escrow:{round_id}: 10.00 USDC" in text_of(ledger.group(1))


def test_rounds_list_players_short_ids_and_named_outcomes(open_round, staff) -> None:
    round_id, player = open_round
    finish(round_id, player)  # 16 stands against the dealer's 19: a loss
    page = login(staff["auditor"]).get(reverse("admin:casino_round_changelist")).content.decode()
    table = re.search(r'<table id="result_list">(.*?)</table>', page, re.S)
    assert table is not None
    headers = re.findall(r'<div class="text"><(?:a|span)[^>]*>([^<]*)<', table.group(1))
    assert [h.strip() for h in headers] == [
        *("Round", "Ruleset", "Table", "Players", "Status", "Flag"),
        *("Stake", "Return", "Fee", "Outcome", "Opened (UTC)"),
    ]
    short = f'<span class="rid" title="{round_id}" data-id="{round_id}">{round_id[:8]}…</span>'
    assert short in page
    cells = re.findall(r"<(?:th|td) class=\"field-[^\"]*\">(.*?)</t[hd]>", table.group(1))
    assert [text_of(c).strip() for c in cells][:10] == [
        *(f"{round_id[:8]}…", "classic", "classic test v1", "alice", "Settled", ""),
        *("10.00 USDC", "0.00 USDC", "0.00 USDC", "alice box 1: lose"),
    ]
    assert '<span title="alice box 1: lose">alice box 1: lose</span>' in page


def test_queue_shows_players_by_name(open_round, staff) -> None:
    round_id, _ = open_round
    review.round_flag(round_id=round_id, reason="player complaint")
    page = login(staff["reviewer"]).get(reverse("admin:casino_round_queue")).content.decode()
    row = re.search(rf'<tr data-round="{round_id}">(.*?)</tr>', page, re.S)
    assert row is not None
    assert text_of(row.group(1)).split()[:6] == [
        f"{round_id[:8]}…",
        "alice",
        "classic",
        "open",
        "10.00",
        "USDC",
    ]


def test_a_void_closes_the_review_item_with_who_and_why(open_round, staff) -> None:
    round_id, _ = open_round
    review.round_flag(round_id=round_id, reason="player complaint")
    manager = login(staff["manager"])
    response = manager.post(
        reverse("admin:round_void", args=[round_id]),
        {"reason": "dealt from a wrong shoe", "confirm": "on"},
        follow=True,
    )
    assert "Round voided: 10.00 USDC of stakes refunded" in response.content.decode()
    item = RoundReview.objects.get(round_id=round_id)
    assert (item.pending, item.resolution, item.reviewed_by, item.notes) == (
        False,
        "voided",
        "manager",
        "dealt from a wrong shoe",
    )
    assert item.reviewed_at is not None
    queue = manager.get(reverse("admin:casino_round_queue")).content.decode()
    assert "Nothing waiting for review." in queue and round_id not in queue
    page = text_of(manager.get(review_url(round_id)).content.decode())
    assert "Review item closed: voided by manager on " in page
    assert (
        page.split("Review item closed: voided by manager on ")[1]
        .split(" UTC: ")[1]
        .startswith("dealt from a wrong shoe")
    )
    # the projection rebuilds to the same from the review stream
    RoundReview.objects.all().delete()
    rebuilt = review.project(round_id, review.review_events(round_id))
    assert (rebuilt.pending, rebuilt.resolution, rebuilt.reviewed_by) == (
        False,
        "voided",
        "manager",
    )


def forbidden(response) -> tuple[int, str, str]:  # type: ignore[no-untyped-def]
    html = response.content.decode()
    match = re.search(r'<strong id="role-needed">([^<]*)</strong>', html)
    permission = re.search(r'data-permission="([^"]*)"', html)
    return (
        response.status_code,
        match.group(1) if match else html[:200],
        permission.group(1) if permission else "",
    )


def test_refusals_are_a_styled_403_naming_the_role(open_round, staff) -> None:
    round_id, _ = open_round
    reviewer, auditor = login(staff["reviewer"]), login(staff["auditor"])
    void = reviewer.get(reverse("admin:round_void", args=[round_id]))
    assert forbidden(void) == (403, "the manager role (or a superuser)", "casino.void_round")
    assert "admin/casino/403.html" in [t.name for t in void.templates]
    assert 'id="site-name"' in void.content.decode()  # the admin's own header and styles
    text = text_of(void.content.decode())
    assert "you are signed in as reviewer (reviewer), and this needs the manager role" in text
    assert "Permission: casino.void_round (Can void a round)." in text
    flag = auditor.post(reverse("admin:round_flag", args=[round_id]), {"reason": "x"})
    assert forbidden(flag) == (
        403,
        "the reviewer or manager roles (or a superuser)",
        "dashboard.flag_round",
    )
    add_table = auditor.get(reverse("admin:casino_table_add"))  # refused by the admin itself
    assert forbidden(add_table) == (403, "the manager role (or a superuser)", "casino.add_table")
    users = reviewer.get(reverse("admin:auth_user_changelist"))
    assert forbidden(users) == (403, "a superuser", "auth.view_user")
    # not signed in: the admin's login page, not a 403
    assert forbidden(Client().get(reverse("admin:round_void", args=[round_id])))[0] == 302


def test_mark_reviewed_without_notes_is_an_error_on_the_page(open_round, staff) -> None:
    round_id, _ = open_round
    review.round_flag(round_id=round_id, reason="look")
    reviewer = login(staff["reviewer"])
    for notes in ("", "   "):
        response = reviewer.post(reverse("admin:round_reviewed", args=[round_id]), {"notes": notes})
        assert response.status_code == 400
        html = response.content.decode()
        error = re.search(r'<p class="errornote" id="reviewed-error">([^<]*)</p>', html)
        assert error is not None
        assert error.group(1).strip() == "Reviewing needs notes: write what you checked."
        assert "Not marked reviewed: write what you checked in the notes." in html  # message
        assert RoundReview.objects.get(round_id=round_id).pending
    assert [e.type for e in review.review_events(round_id)] == ["RoundFlagged"]
    done = reviewer.post(reverse("admin:round_reviewed", args=[round_id]), {"notes": "fine"})
    assert done.status_code == 302
    item = RoundReview.objects.get(round_id=round_id)
    assert (item.pending, item.resolution, item.reviewed_by) == (False, "reviewed", "reviewer")


def test_every_player_has_a_profile_from_the_start(staff) -> None:
    User = get_user_model()
    for name in ("alice", "bob", "carol"):
        User.objects.create_user(username=name)
    names = set(PlayerProfile.objects.values_list("user__username", flat=True))
    assert names == {"alice", "bob", "carol", "someone"}  # "someone": the fixture's player
    page = login(staff["auditor"]).get(reverse("admin:dashboard_playerprofile_changelist"))
    html = page.content.decode()
    assert "4 player profiles" in html
    for name in ("alice", "bob", "carol"):
        assert f">{name}</" in html
    assert ">reviewer</" not in html  # staff are not players


@override_settings(DEBUG=True)
def test_seed_demo_players_have_profiles() -> None:
    call_command("seed_demo", stdout=open("/dev/null", "w"))  # noqa: SIM115
    assert sorted(PlayerProfile.objects.values_list("user__username", flat=True)) == [
        "alice",
        "bob",
        "carol",
    ]


def test_the_migration_creates_the_missing_profiles() -> None:
    User = get_user_model()
    users = [User.objects.create_user(username=n) for n in ("p1", "p2")]
    User.objects.create_user(username="boss", is_staff=True)
    PlayerProfile.objects.all().delete()  # as before the receiver existed
    migration = importlib.import_module(
        "casino.dashboard.migrations.0003_review_resolution_player_profiles"
    )
    migration.profiles_for_players(django_apps, None)
    assert sorted(PlayerProfile.objects.values_list("user_id", flat=True)) == [u.pk for u in users]


def test_spent_escrow_accounts_are_hidden_unless_asked(open_round, staff) -> None:
    round_id, player = open_round
    open_escrow = f"round_escrow:{round_id}"
    client = login(staff["auditor"])
    url = reverse("admin:dashboard_ledgeraccount_changelist")
    assert open_escrow in client.get(url).content.decode()  # money still in it: shown
    finish(round_id, player)
    default = client.get(url).content.decode()
    assert open_escrow not in default and f"player_available:{player.pk}" in default
    assert "spent round escrows" in default  # the filter, in the sidebar
    shown = client.get(url, {"spent_escrow": "show"}).content.decode()
    assert open_escrow in shown and "settled" in text_of(shown)
    balances = reverse("admin:ledger_accountbalance_changelist")  # the balance rows: the same
    assert open_escrow not in client.get(balances).content.decode()
    assert open_escrow in client.get(balances, {"spent_escrow": "show"}).content.decode()


def test_view_site_goes_to_the_verify_page(staff) -> None:
    client = login(staff["reviewer"])
    page = client.get(reverse("admin:index")).content.decode()
    link = re.search(r'<a href="([^"]*)">View site</a>', page)
    assert link is not None and link.group(1) == "/fairness/verify/"
    assert client.get(link.group(1)).status_code == 200


def test_big_win_flag_detail_names_the_player_in_usdc(open_round, staff) -> None:
    from casino.dashboard.hooks import automatic_flags
    from casino.rounds.services import round_load

    round_id, player = open_round
    finish(round_id, player)
    _, state = round_load(round_id=round_id)
    assert state is not None
    with override_settings(REVIEW_WIN_THRESHOLD_MICRO=-20 * USDC):  # a loss counts as "big"
        flags = automatic_flags(state, [])
    assert flags == []  # no new RoundSettled among these events: nothing to flag
    from casino.eventstore.models import StoredEvent

    settled = list(StoredEvent.objects.filter(stream_id=round_id, type="RoundSettled"))
    with override_settings(REVIEW_WIN_THRESHOLD_MICRO=-20 * USDC):
        flags = automatic_flags(state, settled)
    assert flags == [("big_win", "alice won -10.00 USDC (threshold -20.00 USDC)")]
    assert Round.objects.get(id=round_id).status == "settled"


def test_round_reviews_list_the_reasons_as_words_and_link_the_round(open_round, staff) -> None:
    """ "Round reviews" printed the reasons as JSON (["big_win", "malfunction"]) and its round
    cell led nowhere useful: now "big_win, player complaint" and a link to the round."""
    round_id, _ = open_round
    review.round_flag(round_id=round_id, reason="big_win", detail="alice won")
    review.round_flag(round_id=round_id, reason="player complaint", user=staff["reviewer"])
    auditor = login(staff["auditor"])
    page = auditor.get(reverse("admin:dashboard_roundreview_changelist")).content.decode()
    assert "big_win, player complaint" in page and "&quot;big_win&quot;" not in page
    assert f'<a href="{reverse("admin:round_review", args=[round_id])}"><span class="rid"' in page
    detail = auditor.get(reverse("admin:dashboard_roundreview_change", args=[round_id]))
    assert "big_win, player complaint" in detail.content.decode()


def test_review_page_times_both_say_utc(open_round, staff) -> None:
    round_id, player = open_round
    reviewer = login(staff["reviewer"])
    open_text = text_of(
        reviewer.get(reverse("admin:round_review", args=[round_id])).content.decode()
    )
    assert re.search(r"Opened: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC · Finished: —", open_text)
    finish(round_id, player)
    text = text_of(reviewer.get(reverse("admin:round_review", args=[round_id])).content.decode())
    assert re.search(r"Finished: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", text)  # it had no zone
