"""Tables in the admin (create, close, new version, never edited) and the ledger pages."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from casino.engine.rules import USDC
from casino.models import Table
from casino.platform.errors import ApplicationError
from casino.rounds.services import round_open
from tests.dashboard.conftest import login, make_player, make_table

pytestmark = pytest.mark.django_db


def test_new_version_closes_the_old_table_and_a_saved_table_is_not_edited(staff) -> None:
    table = make_table("classic", name="main", min_bet=USDC)
    manager = login(staff["manager"])
    manager.post(
        reverse("admin:casino_table_changelist"),
        {"action": "new_versions", "_selected_action": [table.pk], "index": 0},
    )
    old, new = Table.objects.get(pk=table.pk), Table.objects.exclude(pk=table.pk).get()
    assert (old.status, new.status, new.version, new.min_bet) == ("closed", "open", 2, USDC)
    with pytest.raises(ApplicationError):
        round_open(table=old, players=[make_player("late")])  # closed to new rounds
    manager.post(
        reverse("admin:casino_table_change", args=[new.pk]),
        {"name": "renamed", "ruleset": "classic", "min_bet": 1, "max_bet": 2, "seats": 1},
    )
    assert Table.objects.get(pk=new.pk).min_bet == USDC  # parameters are read-only once saved
    assert Table.objects.get(pk=new.pk).name == "main"


def test_ledger_pages_show_balances_and_pending_withdrawals(staff) -> None:
    from ledger.services import withdrawal_request

    player = make_player("payee")
    withdrawal = withdrawal_request(user=player, amount_micro=7 * USDC, idempotency_key="k")
    auditor = login(staff["auditor"])
    accounts = auditor.get(reverse("admin:dashboard_ledgeraccount_changelist")).content.decode()
    assert f"player_available:{player.pk}" in accounts and "93.00 USDC" in accounts
    pending = auditor.get(reverse("admin:dashboard_pendingwithdrawal_changelist")).content.decode()
    assert "7.00 USDC" in pending
    assert 'value="complete"' not in pending  # the auditor gets no resolve actions
    manager = login(staff["manager"])
    page = manager.get(reverse("admin:dashboard_pendingwithdrawal_changelist")).content.decode()
    assert 'value="complete"' in page and 'value="cancel"' in page
    manager.post(
        reverse("admin:dashboard_pendingwithdrawal_changelist"),
        {"action": "cancel", "_selected_action": [withdrawal.pk], "index": 0},
    )
    again = manager.get(reverse("admin:dashboard_pendingwithdrawal_changelist")).content.decode()
    assert "7.00 USDC" not in again
    from ledger.selectors import wallet_balances

    assert wallet_balances(user_id=player.pk)["player_available"] == 100 * USDC


def test_new_version_sent_twice_opens_one_table(staff) -> None:
    """A second "Close and open a new version" of the same table (a stale tab) opens no
    second table of version 2: it says which version the table already has."""
    table = make_table("classic", name="main", min_bet=USDC)
    manager = login(staff["manager"])
    action = {"action": "new_versions", "_selected_action": [table.pk], "index": 0}
    url = reverse("admin:casino_table_changelist")
    assert "Opened main v2" in manager.post(url, action, follow=True).content.decode()
    new = Table.objects.exclude(pk=table.pk).get()
    page = manager.post(url, action, follow=True).content.decode()
    assert f"Not opened: main v1 (#{table.pk}) already has v2 (#{new.pk})." in page
    assert "Opened" not in page
    assert list(Table.objects.order_by("pk").values_list("version", "status")) == [
        (1, "closed"),
        (2, "open"),
    ]


def test_a_saved_tables_page_shows_its_amounts_in_usdc(staff) -> None:
    table = make_table("classic", name="main", min_bet=USDC, max_bet=250 * USDC)
    page = login(staff["manager"]).get(reverse("admin:casino_table_change", args=[table.pk]))
    fields = {
        label: re.sub(r"<[^>]+>", "", value).strip()
        for label, value in re.findall(
            r"<label>([^<]*):</label>\s*<div class=\"readonly\">(.*?)</div>",
            page.content.decode(),
            re.S,
        )
    }
    assert {k: fields[k] for k in ("Min bet", "Max bet", "Chip unit", "Stake (duel)")} == {
        "Min bet": "1.00 USDC",
        "Max bet": "250.00 USDC",
        "Chip unit": "0.01 USDC",
        "Stake (duel)": "—",
    }
    assert "micro-USDC" not in page.content.decode()


def _fields(page: str) -> dict[str, str]:
    """A read-only admin page's "label: value" pairs, and its heading under "heading"."""
    found = {
        label: re.sub(r"<[^>]+>", "", value).strip()
        for label, value in re.findall(
            r"<label>([^<]*):</label>\s*<div class=\"readonly\">(.*?)</div>", page, re.S
        )
    }
    heading = re.search(r"<h2>(.*?)</h2>", page, re.S)
    return {**found, "heading": heading.group(1).strip() if heading else ""}


def test_ledger_record_pages_show_usdc_and_names(staff) -> None:
    """The record pages behind the ledger lists (a balance, a posting, a withdrawal, a
    receivable, a ledger account, a journal entry's postings) print amounts in USDC and the
    player by name, as the lists do: they printed "Balance: -5000000", "Amount micro:
    95000000" and "entry 7 account 3: -100000"."""
    from ledger.models import Account, AccountBalance, Posting
    from ledger.services import withdrawal_request

    player = make_player("payee")  # 100 USDC
    withdrawal = withdrawal_request(
        user=player,
        amount_micro=7 * USDC,
        idempotency_key="k",
        network="base",
        address="0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
    )
    available = Account.objects.get(key=f"player_available:{player.pk}")
    # A receivable, as a void leaves one: the player owes 2.50 USDC.
    owed = AccountBalance.objects.get(account=available)
    receivable = Account.objects.create(
        key=f"receivable:{player.pk}", type="receivable", owner=player
    )
    AccountBalance.objects.create(
        account=receivable, account_type="receivable", may_go_negative=True, balance=-2_500_000
    )
    auditor = login(staff["auditor"])

    def page(name: str, pk: object) -> dict[str, str]:
        return _fields(auditor.get(reverse(f"admin:{name}_change", args=[pk])).content.decode())

    balance = page("ledger_accountbalance", owed.pk)
    assert (balance["Owner"], balance["Balance"]) == ("payee", "93.00 USDC")
    assert balance["heading"] == f"balance of player_available:{player.pk}: 93.00 USDC"
    account = page("dashboard_ledgeraccount", available.pk)
    assert (account["Owner"], account["Balance"]) == ("payee", "93.00 USDC")
    request_posting = Posting.objects.get(entry=withdrawal.request_entry, account=available)
    assert page("ledger_posting", request_posting.pk)["Amount"] == "-7.00 USDC"
    shown = page("ledger_withdrawalrequest", withdrawal.pk)
    assert (shown["Player"], shown["Amount"], shown["Reference"]) == (
        "payee",
        "7.00 USDC",
        f"withdrawal:{withdrawal.pk}",
    )
    assert page("dashboard_pendingwithdrawal", withdrawal.pk)["Amount"] == "7.00 USDC"
    debt = page("dashboard_receivable", receivable.pk)
    assert (debt["Player"], debt["Owed"]) == ("payee", "2.50 USDC")
    entry = auditor.get(
        reverse("admin:ledger_journalentry_change", args=[withdrawal.request_entry_id])
    ).content.decode()
    assert f"player_available:{player.pk}: -7.00 USDC" in entry
    for pk, name in (
        (owed.pk, "ledger_accountbalance"),
        (request_posting.pk, "ledger_posting"),
        (withdrawal.pk, "ledger_withdrawalrequest"),
        (receivable.pk, "dashboard_receivable"),
    ):
        text = auditor.get(reverse(f"admin:{name}_change", args=[pk])).content.decode()
        assert not re.search(r"\b(7000000|93000000|2500000)\b", text), name
    assert not re.search(r"-7000000\b", entry)


def test_a_table_no_round_could_open_at_is_refused_in_words(staff) -> None:
    """The add form saved tables the engine refuses to open a round at (a duel with no stake,
    a minimum below the rule set's, 0 seats), and said "Constraint “table_limits_valid” is
    violated." for a maximum below the minimum. It now checks the rule set's bounds, as the
    API's table_create does, and says what is wrong."""
    manager = login(staff["manager"])
    url = reverse("admin:casino_table_add")
    classic = {"name": "t", "ruleset": "classic", "chip_unit": 10_000, "stake": 0, "seats": 1}

    def errors(data: dict[str, object]) -> list[str]:
        response = manager.post(url, data)
        assert response.status_code == 200
        return [str(e) for e in response.context["adminform"].form.non_field_errors()]

    assert errors({**classic, "min_bet": 2 * USDC, "max_bet": USDC}) == [
        "Limits must satisfy 0.01 USDC <= min <= max <= 1000000.00 USDC."
    ]
    assert errors({**classic, "min_bet": USDC, "max_bet": 2 * USDC, "seats": 0}) == [
        "Seats must be 1..1."
    ]
    assert errors({**classic, "min_bet": USDC, "max_bet": 2 * USDC, "chip_unit": 0}) == [
        "The chip unit must be positive."
    ]
    duel = {**classic, "ruleset": "duel", "seats": 2, "min_bet": USDC, "max_bet": USDC}
    assert errors(duel) == [
        "A duel table plays for its fixed stake: set min bet, max bet and stake to the same amount."
    ]
    assert not Table.objects.exists()
    assert manager.post(url, {**duel, "stake": USDC}).status_code == 302
    table = Table.objects.get()
    round_open(table=table, players=[make_player("p1"), make_player("p2")])  # rounds open
