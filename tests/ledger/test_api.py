"""Wallet API: balances, entries, withdrawals, staff deposits, idempotency, privacy."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import override_settings
from rest_framework.request import Request
from rest_framework.test import APIClient, APIRequestFactory

from ledger import services
from ledger.apis import Pages
from ledger.models import JournalEntry
from tests.ledger.factories import assert_ledger_ok, available, fund, make_user
from tests.ledger.test_money import BAD

pytestmark = pytest.mark.django_db

USDC = 1_000_000
# A withdrawal names where the money goes (ledger/destinations.py); EIP-55's own example.
TO = {"network": "base", "address": "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"}


def client_for(user: Any) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_balance_and_entries_show_only_own_money() -> None:
    alice, bob = make_user(), make_user()
    fund(alice, 7 * USDC)
    fund(bob, 3 * USDC)
    for user, key in ((alice, "a"), (bob, "b")):
        services.round_stake(round_ref="duel-p", user=user, amount_micro=USDC, idempotency_key=key)
    services.round_settle(
        round_ref="duel-p",
        returns=[(alice, 1_940_000)],
        fee_micro=60_000,
        house_banked=False,
        idempotency_key="s",
    )
    response = client_for(alice).get("/api/wallet/balance/")
    assert response.status_code == 200
    assert response.json() == {
        "currency": "USDC",
        "available": "7.940000",
        "pending_withdrawal": "0.000000",
        "receivable": "0.000000",
    }
    page = client_for(bob).get("/api/wallet/entries/?limit=2").json()
    assert page["count"] == 2  # bob's deposit and bet; the payout entry has no bob posting
    kinds = [e["kind"] for e in page["results"]]
    assert kinds == ["bet", "deposit"]
    for entry in page["results"]:
        assert [p["account_type"] for p in entry["postings"]] == ["player_available"]
    alice_page = client_for(alice).get("/api/wallet/entries/").json()
    payout = next(e for e in alice_page["results"] if e["kind"] == "payout")
    assert payout["postings"] == [{"account_type": "player_available", "amount": "1.940000"}]


def test_anonymous_is_refused() -> None:
    assert APIClient().get("/api/wallet/balance/").status_code in (401, 403)


def test_withdrawal_request_is_idempotent() -> None:
    user = make_user()
    fund(user, 10 * USDC)
    client = client_for(user)
    first = client.post(
        "/api/wallet/withdrawals/",
        {"amount": "2.5", **TO},
        format="json",
        HTTP_IDEMPOTENCY_KEY="k-1",
    )
    assert first.status_code == 201
    assert first.json()["amount"] == "2.500000"
    same = client.post(
        "/api/wallet/withdrawals/",
        {"amount": "2.500000", **TO},
        format="json",
        HTTP_IDEMPOTENCY_KEY="k-1",
    )
    assert (same.status_code, same.json()) == (201, first.json())
    assert same["Idempotent-Replayed"] == "true"
    other = client.post(
        "/api/wallet/withdrawals/", {"amount": "3", **TO}, format="json", HTTP_IDEMPOTENCY_KEY="k-1"
    )
    assert other.status_code == 422
    assert other.json()["error"]["code"] == "idempotency_key_reused"
    assert available(user) == 7_500_000
    missing = client.post("/api/wallet/withdrawals/", {"amount": "1", **TO}, format="json")
    assert (missing.status_code, missing.json()["error"]["code"]) == (
        400,
        "idempotency_key_required",
    )
    assert_ledger_ok()


def test_a_withdrawal_needs_its_destination_and_changes_nothing_without_one() -> None:
    user = make_user()
    fund(user, 10 * USDC)
    client = client_for(user)
    entries = JournalEntry.objects.count()
    for body, missing in (
        ({"amount": "1"}, ["address", "network"]),
        ({"amount": "1", "network": "base"}, ["address"]),
        ({"amount": "1", "address": TO["address"]}, ["network"]),
    ):
        response = client.post(
            "/api/wallet/withdrawals/", body, format="json", HTTP_IDEMPOTENCY_KEY="no-dest"
        )
        assert response.status_code == 400, body
        error = response.json()["error"]
        assert (error["code"], sorted(error["details"]["fields"])) == ("invalid_input", missing)
    wrong = client.post(
        "/api/wallet/withdrawals/",
        {"amount": "1", "network": "solana", "address": TO["address"]},
        format="json",
        HTTP_IDEMPOTENCY_KEY="wrong-dest",
    )
    assert (wrong.status_code, wrong.json()["error"]["code"]) == (400, "destination_invalid")
    assert available(user) == 10 * USDC and JournalEntry.objects.count() == entries
    made = client.post(
        "/api/wallet/withdrawals/",
        {"amount": "1", **TO},
        format="json",
        HTTP_IDEMPOTENCY_KEY="no-dest",
    )
    assert (made.status_code, made.json()["network"], made.json()["address"]) == (
        201,
        TO["network"],
        TO["address"],
    )


def test_a_withdrawal_beyond_the_balance_is_a_409_and_its_key_runs_after_a_top_up() -> None:
    user = make_user()
    fund(user, 2 * USDC)
    client = client_for(user)

    def withdraw() -> Any:
        return client.post(
            "/api/wallet/withdrawals/",
            {"amount": "5", **TO},
            format="json",
            HTTP_IDEMPOTENCY_KEY="big",
        )

    refused = withdraw()
    assert refused.status_code == 409
    error = refused.json()["error"]
    assert error["code"] == "insufficient_funds"
    assert (error["details"]["needed"], error["details"]["balance"]) == ("5.000000", "2.000000")
    assert available(user) == 2 * USDC
    fund(user, 3 * USDC)
    made = withdraw()  # the refusal was not stored against the key
    assert made.status_code == 201 and "Idempotent-Replayed" not in made
    assert available(user) == 0
    assert_ledger_ok()


# float("nan") cannot be sent through the test client's encoder: the literal test covers it.
@pytest.mark.parametrize(("value", "code"), [(v, c) for v, c in BAD if v == v])
def test_every_bad_amount_is_a_400_and_changes_nothing(value: object, code: str) -> None:
    user = make_user()
    fund(user, 10 * USDC)
    entries = JournalEntry.objects.count()
    response = client_for(user).post(
        "/api/wallet/withdrawals/",
        {"amount": value, **TO},
        format="json",
        HTTP_IDEMPOTENCY_KEY="bad",
    )
    assert response.status_code == 400
    body = response.json()["error"]
    assert body["code"] == code and body["message"]
    assert available(user) == 10 * USDC
    assert JournalEntry.objects.count() == entries


def test_nan_and_infinity_literals_in_json_are_refused() -> None:
    user = make_user()
    for literal in ("NaN", "Infinity", "-Infinity", "1e3"):
        response = client_for(user).post(
            "/api/wallet/faucet/",
            data=f'{{"amount": {literal}}}',
            content_type="application/json",
            HTTP_IDEMPOTENCY_KEY=f"lit-{literal}",
        )
        assert response.status_code == 400, literal
        assert response.json()["error"]["code"] in ("malformed_request", "amount_not_string")
    assert available(user) == 0


def test_staff_deposit_and_withdrawal_resolution() -> None:
    staff, player = make_user(staff=True), make_user()
    client = client_for(staff)
    deposit = client.post(
        "/api/wallet/staff/deposits/",
        {"user_id": player.pk, "amount": "12.5"},
        format="json",
        HTTP_IDEMPOTENCY_KEY="dep-1",
    )
    assert deposit.status_code == 201
    assert sorted(p["amount"] for p in deposit.json()["postings"]) == ["-12.500000", "12.500000"]
    assert available(player) == 12_500_000
    refused = client_for(player).post(
        "/api/wallet/staff/deposits/",
        {"user_id": player.pk, "amount": "1"},
        format="json",
        HTTP_IDEMPOTENCY_KEY="dep-x",
    )
    assert refused.status_code == 403
    request = client_for(player).post(
        "/api/wallet/withdrawals/", {"amount": "2", **TO}, format="json", HTTP_IDEMPOTENCY_KEY="w"
    )
    wid = request.json()["id"]
    listed = client.get("/api/wallet/staff/withdrawals/?status=pending").json()
    assert [w["id"] for w in listed["results"]] == [wid]
    done = client.post(f"/api/wallet/staff/withdrawals/{wid}/complete/", HTTP_IDEMPOTENCY_KEY="c")
    assert (done.status_code, done.json()["status"]) == (200, "completed")
    cancel = client.post(f"/api/wallet/staff/withdrawals/{wid}/cancel/", HTTP_IDEMPOTENCY_KEY="x")
    assert (cancel.status_code, cancel.json()["error"]["code"]) == (409, "withdrawal_not_pending")
    assert available(player) == 10_500_000
    assert_ledger_ok()


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("limit=abc", "limit"),
        ("limit=-5", "limit"),
        ("limit=0", "limit"),
        ("limit=1.5", "limit"),
        ("offset=-1", "offset"),
        ("offset=x", "offset"),
        ("limit=%EF%BC%93", "limit"),  # a full-width 3: int() would take it
    ],
)
def test_a_malformed_page_is_a_400_naming_the_parameter(query: str, field: str) -> None:
    staff, player = make_user(staff=True), make_user()
    fund(player, USDC)
    for client, path in (
        (client_for(player), "/api/wallet/entries/"),
        (client_for(staff), "/api/wallet/staff/withdrawals/"),
        (client_for(staff), "/api/wallet/staff/receivables/"),
    ):
        answer = client.get(f"{path}?{query}")
        assert answer.status_code == 400, (path, query, answer.content)
        error = answer.json()["error"]
        assert error["code"] == "invalid_input"
        assert list(error["details"]["fields"]) == [field]


def test_pages_walk_the_entries_and_a_limit_above_the_maximum_gets_the_maximum() -> None:
    player = make_user()
    for _ in range(3):
        fund(player, USDC)
    client = client_for(player)
    first = client.get("/api/wallet/entries/?limit=2").json()
    second = client.get("/api/wallet/entries/?limit=2&offset=2").json()
    assert first["count"] == 3 and len(first["results"]) == 2 and len(second["results"]) == 1
    seen = [e["id"] for e in first["results"] + second["results"]]
    assert len(set(seen)) == 3
    capped = client.get("/api/wallet/entries/?limit=100000").json()
    assert len(capped["results"]) == 3 and capped["next"] is None
    many = Request(APIRequestFactory().get("/api/wallet/entries/", {"limit": "100000"}))
    assert len(Pages().paginate_queryset(list(range(250)), many) or []) == 200  # the maximum


def test_an_unknown_withdrawal_status_is_a_400() -> None:
    answer = client_for(make_user(staff=True)).get("/api/wallet/staff/withdrawals/?status=done")
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["code"] == "invalid_input"
    assert error["details"]["fields"] == {
        "status": ["Must be one of pending, completed, cancelled."]
    }


def test_staff_sees_receivables() -> None:
    staff, winner, loser = make_user(staff=True), make_user(), make_user()
    fund(winner, USDC)
    fund(loser, USDC)
    for user, key in ((winner, "w"), (loser, "l")):
        services.round_stake(round_ref="rcv", user=user, amount_micro=USDC, idempotency_key=key)
    services.round_settle(
        round_ref="rcv",
        returns=[(winner, 1_940_000)],
        fee_micro=60_000,
        house_banked=False,
        idempotency_key="s",
    )
    services.withdrawal_request(user=winner, amount_micro=1_940_000, idempotency_key="out")
    services.round_void(round_ref="rcv", idempotency_key="void")
    rows = client_for(staff).get("/api/wallet/staff/receivables/").json()["results"]
    assert {"user_id": winner.pk, "username": winner.username, "owed": "0.940000"} in rows


@override_settings(DEMO_MODE=True)
def test_faucet_in_demo_mode() -> None:
    user = make_user()
    response = client_for(user).post(
        "/api/wallet/faucet/", {"amount": "100"}, format="json", HTTP_IDEMPOTENCY_KEY="f"
    )
    assert response.status_code == 201
    assert response.json()["postings"] == [
        {"account_type": "player_available", "amount": "100.000000"}
    ]
    assert available(user) == 100 * USDC


def test_schema_lists_the_wallet_operations() -> None:
    staff = make_user(staff=True)
    schema = client_for(staff).get("/api/schema/?format=json").json()
    paths = schema["paths"]
    for path in (
        "/api/wallet/balance/",
        "/api/wallet/entries/",
        "/api/wallet/withdrawals/",
        "/api/wallet/staff/deposits/",
        "/api/wallet/staff/withdrawals/{withdrawal_id}/complete/",
    ):
        assert path in paths
