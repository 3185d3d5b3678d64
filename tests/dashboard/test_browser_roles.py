"""The staff pages in a real headless Chromium for each role (reviewer, manager, auditor,
superuser): what each sees, what each may do, and the styled 403 page (issue 21).

Every role also checks the rounds list at 1366 px (no horizontal scroll, players by name,
ids cut to 8 characters with the full id in the title) and the round page's USDC amounts and
"alice, box 1" labels.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model

from casino.dashboard import review
from casino.dashboard.models import RoundReview
from casino.dashboard.roles import sync_role_groups
from casino.engine.commands import PlaceBet
from casino.engine.rules import USDC
from casino.models import Round
from casino.rounds import services
from ledger.models import WithdrawalRequest
from ledger.services import withdrawal_request
from tests.chromium import chromium_page
from tests.dashboard.conftest import OPEN_HAND, finish, make_player, make_staff, make_table

EVM = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
ROLES = ("reviewer", "manager", "auditor", "superuser")
WIDTH = 1366
# What each role's round page offers (flag form, mark-reviewed form, void link).
OFFERS = {
    "reviewer": {"flag": True, "reviewed": True, "void": False},
    "manager": {"flag": True, "reviewed": True, "void": True},
    "auditor": {"flag": False, "reviewed": False, "void": False},
    "superuser": {"flag": True, "reviewed": True, "void": True},
}
# A page each role may not open, and the role the 403 page names.
REFUSED = {
    "reviewer": ("/admin/casino/round/{round_id}/void/", "the manager role (or a superuser)"),
    "manager": ("/admin/auth/user/", "a superuser"),
    "auditor": ("/admin/casino/table/add/", "the manager role (or a superuser)"),
}


def world(stack_shoe: Any) -> dict[str, Any]:
    """Staff of every role; alice's open, flagged round; bob's settled one; carol's withdrawal."""
    sync_role_groups(apps)  # a flushed transactional database: make sure the groups are there
    for role in ("reviewer", "manager", "auditor"):
        make_staff(role, password=f"{role}-pw")
    get_user_model().objects.create_superuser(username="superuser", password="superuser-pw")
    table = make_table()
    stack_shoe(OPEN_HAND)
    alice = make_player("alice")
    flagged = services.round_open(table=table, players=[alice]).round.id
    services.round_command(round_id=flagged, command=PlaceBet(str(alice.pk), (10 * USDC,)))
    review.round_flag(round_id=flagged, reason="player complaint")
    stack_shoe(OPEN_HAND)
    bob = make_player("bob")
    settled = services.round_open(table=make_table(name="second"), players=[bob]).round.id
    services.round_command(round_id=settled, command=PlaceBet(str(bob.pk), (12_500_000,)))
    finish(settled, bob)
    carol = make_player("carol")
    withdrawal = withdrawal_request(
        user=carol, amount_micro=5 * USDC, idempotency_key="c", network="ethereum", address=EVM
    )
    crowded = crowded_duel()
    return {"flagged": flagged, "settled": settled, "withdrawal": withdrawal.pk, "duel": crowded}


def crowded_duel() -> str:
    """The widest row a rounds list meets: a duel of 8 long-named players, one outcome each
    (a projection row only: the list reads nothing else)."""
    from datetime import UTC, datetime

    from casino.models import RoundPlayer

    users = [make_player(f"player-with-a-long-name-{i}", funds=0) for i in range(8)]
    row = Round.objects.create(
        id="d0e1f2a3-b4c5-4d6e-8f90-123456789abc",
        table=make_table("duel", name="a duel table with a rather long name"),
        ruleset="duel",
        status="settled",
        chain_id="c",
        nonce=1,
        commitment="0" * 64,
        stake_total=8 * USDC,
        return_total=7_840_000,
        fee=160_000,
        outcome=" ".join(f"{u.pk}/0.0:{'win' if i == 0 else 'lose'}" for i, u in enumerate(users)),
        opened_at=datetime.now(UTC),
        finished_at=datetime.now(UTC),
    )
    RoundPlayer.objects.bulk_create(
        RoundPlayer(round=row, user=u, seat=i) for i, u in enumerate(users)
    )
    return row.id


def sign_in(page: Any, base: str, role: str) -> None:
    page.goto(f"{base}/admin/login/?next=/admin/")
    page.fill("#id_username", role)
    page.fill("#id_password", f"{role}-pw")
    page.click("input[type=submit]")
    page.wait_for_selector("#site-name")


def check_rounds_list(page: Any, base: str, ids: dict[str, Any]) -> None:
    page.set_viewport_size({"width": WIDTH, "height": 800})
    page.goto(f"{base}/admin/casino/round/")
    page.wait_for_selector("#result_list")
    # Nothing scrolls sideways: not the page, not the list's own box; the table ends on screen.
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH
    box = page.evaluate(
        "(() => { const r = document.querySelector('#changelist-form .results');"
        " return [r.scrollWidth, r.clientWidth,"
        " document.querySelector('#result_list').getBoundingClientRect().right]; })()"
    )
    assert box[0] <= box[1] and box[2] <= WIDTH, box
    rows = {
        cell.get_attribute("title"): cell.inner_text()
        for cell in page.locator("#result_list span.rid").all()
    }
    assert rows == {i: i[:8] + "…" for i in (ids["flagged"], ids["settled"], ids["duel"])}
    players = page.locator("#result_list td.field-player_names span").all()
    assert sorted(p.inner_text() for p in players)[:2] == ["alice", "bob"]
    crowded = ", ".join(f"player-with-a-long-name-{i}" for i in range(8))
    assert crowded in [p.get_attribute("title") for p in players]  # whole on hover
    stakes = page.locator("#result_list td.field-stake").all_inner_texts()
    assert sorted(stakes) == ["10.00 USDC", "12.50 USDC", "8.00 USDC"]
    outcomes = page.locator("#result_list td.field-outcome_text").all_inner_texts()
    assert "bob box 1: lose" in outcomes


def check_round_page(page: Any, base: str, role: str, round_id: str) -> None:
    page.goto(f"{base}/admin/casino/round/{round_id}/review/")
    page.wait_for_selector("#badges")
    assert "Stake: 10.00 USDC · Return: 0.00 USDC · Fee: 0.00 USDC" in page.inner_text("#money")
    assert page.inner_text("#cards tr:nth-child(2) th") == "alice, box 1"
    offers = OFFERS[role]
    assert page.locator("#flag-form").count() == int(offers["flag"])
    assert page.locator("#reviewed-form").count() == int(offers["reviewed"])
    assert page.locator("#void-link").count() == int(offers["void"])


def check_refusal(page: Any, base: str, role: str, ids: dict[str, Any]) -> None:
    if role not in REFUSED:  # the superuser opens all of them
        for path, _ in REFUSED.values():
            response = page.goto(base + path.format(round_id=ids["flagged"]))
            assert response.status == 200, path
        return
    path, needed = REFUSED[role]
    response = page.goto(base + path.format(round_id=ids["flagged"]))
    assert response.status == 403
    assert page.inner_text("#role-needed") == needed
    assert page.locator("#site-name").count() == 1  # styled: the dashboard's own header
    assert f"you are signed in as {role}" in page.inner_text("#forbidden")


def reviewer_acts(page: Any, base: str, ids: dict[str, Any]) -> None:
    page.goto(f"{base}/admin/casino/round/{ids['flagged']}/review/")
    page.click("#reviewed-submit")  # no notes
    page.wait_for_selector("#reviewed-error")
    assert page.inner_text("#reviewed-error") == "Reviewing needs notes: write what you checked."
    page.fill("#id_notes", "checked the shoe and the logs")
    page.click("#reviewed-submit")
    page.wait_for_selector("#review-resolution")
    assert "reviewed by reviewer" in page.inner_text("#review-resolution")
    page.goto(f"{base}/admin/casino/round/queue/")
    assert "Nothing waiting for review." in page.inner_text("#queue")


def manager_acts(page: Any, base: str, ids: dict[str, Any]) -> None:
    page.goto(f"{base}/admin/dashboard/pendingwithdrawal/")
    page.check(f"input[name=_selected_action][value='{ids['withdrawal']}']")
    page.select_option("select[name=action]", "complete")
    page.click("button[name=index]")
    page.wait_for_selector("#withdrawal-confirm")
    cells = page.locator(f"tr[data-withdrawal='{ids['withdrawal']}'] td").all_inner_texts()
    assert cells == [
        f"withdrawal:{ids['withdrawal']}",
        "carol",
        "5.00 USDC",
        "Ethereum",
        EVM,
        "yes",
    ]
    page.click("#confirm-submit")  # not ticked: refused, still pending
    page.wait_for_selector("#confirm-error")
    page.check("#id_confirm")
    page.click("#confirm-submit")
    page.wait_for_selector(".messagelist")
    assert f"Completed 1 withdrawal(s): withdrawal:{ids['withdrawal']}." in page.inner_text(
        ".messagelist"
    )
    page.goto(f"{base}/admin/casino/round/queue/")
    page.click(f"#queue tr[data-round='{ids['flagged']}'] a")
    page.click("#void-link")
    page.fill("#id_reason", "customer complaint upheld")
    page.check("#id_confirm")
    page.click("#void-submit")
    page.wait_for_selector("#review-resolution")
    assert page.inner_text("#round-status") == "voided"
    assert "voided by manager" in page.inner_text("#review-resolution")
    assert "customer complaint upheld" in page.inner_text("#review-resolution")


def auditor_acts(page: Any, base: str, ids: dict[str, Any]) -> None:
    page.goto(f"{base}/admin/casino/round/report/")
    page.wait_for_selector("#totals")
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH
    assert page.inner_text("#totals td:first-child") == "Total"
    assert page.locator("#ggr-chart").count() == 1
    assert "GGR (USDC)" in page.inner_text("#chart")
    page.goto(f"{base}/admin/dashboard/pendingwithdrawal/")
    assert page.locator("select[name=action] option[value=complete]").count() == 0


def superuser_acts(page: Any, base: str, ids: dict[str, Any]) -> None:
    page.goto(f"{base}/admin/casino/round/{ids['settled']}/review/")
    page.click("#flag-submit")  # no reason: the error is on the page
    page.wait_for_selector("#flag-error")
    assert page.inner_text("#flag-error") == "A flag needs a reason."
    page.fill("#id_reason", "second look")
    page.click("#flag-submit")
    page.wait_for_selector("#flag-reason")
    assert "second look" in page.inner_text("#flag-reason")


ACTS = {
    "reviewer": reviewer_acts,
    "manager": manager_acts,
    "auditor": auditor_acts,
    "superuser": superuser_acts,
}


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("role", ROLES)
def test_staff_pages_in_chromium(role: str, live_server: Any, stack_shoe: Any) -> None:
    ids = world(stack_shoe)
    base = live_server.url
    with chromium_page() as page:
        sign_in(page, base, role)
        check_rounds_list(page, base, ids)
        check_round_page(page, base, role, ids["flagged"])
        check_refusal(page, base, role, ids)
        ACTS[role](page, base, ids)

    item = RoundReview.objects.get(round_id=ids["flagged"])
    withdrawal = WithdrawalRequest.objects.get(pk=ids["withdrawal"])
    if role == "reviewer":
        assert (item.pending, item.resolution, item.reviewed_by) == (False, "reviewed", "reviewer")
    elif role == "manager":
        assert (item.pending, item.resolution, item.reviewed_by) == (False, "voided", "manager")
        assert Round.objects.get(id=ids["flagged"]).status == "voided"
        assert withdrawal.status == "completed"
    else:
        assert item.pending and withdrawal.status == "pending"
    if role == "superuser":
        assert Round.objects.get(id=ids["settled"]).flag_reason == "second look"
