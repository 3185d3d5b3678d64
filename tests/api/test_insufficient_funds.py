"""`insufficient_funds` is always a 409 on the game API, never stored against the key (issue 21).

It came as a 409 from DEAL's own balance check and as a 400 from the ledger's posting when
another command spent the money in between (two DEALs at once), or on a DOUBLE the wallet
cannot cover; the 400 was stored and replayed for the same Idempotency-Key after the player
topped up. A refusal that depends on the balance is a conflict with the wallet's state now: a
409, not stored, so the same key retried after a top-up runs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection

from casino.models import Round
from casino.tables import services as tables
from ledger import services as ledger_services
from ledger.models import IdempotencyRecord
from ledger.reconcile import ledger_reconcile
from tests.api.conftest import Api, make_player
from tests.ws.common import command, connect, run

Stack = Callable[[list[str]], None]


def personal(api: Api, ruleset: str = "classic") -> int:
    return int(api.post("/api/tables/personal/", {"ruleset": ruleset}).json()["id"])


def top_up(user: Any, micro: int) -> None:
    ledger_services.wallet_deposit(user=user, amount_micro=micro, idempotency_key=f"top-{micro}")


def refused_for_funds(response: Any) -> dict[str, Any]:
    assert response.status_code == 409, response.content
    error = response.json()["error"]
    assert error["code"] == "insufficient_funds"
    assert set(error["details"]) == {"needed", "available"}
    return dict(error)


def stored(user: Any, key: str) -> bool:
    return IdempotencyRecord.objects.filter(key=f"{user.pk}:{key}").exists()


@pytest.mark.django_db
def test_a_deal_the_wallet_cannot_cover_is_a_409_and_the_same_key_runs_after_a_top_up() -> None:
    poor = Api(make_player(funds=500_000))
    table = personal(poor)
    error = refused_for_funds(poor.post(f"/api/tables/{table}/deal/", {"bets": ["1"]}, key="d1"))
    assert error["details"] == {"needed": "1.000000", "available": "0.500000"}
    assert not stored(poor.user, "d1")
    assert not Round.objects.filter(table_id=table).exists()
    top_up(poor.user, 1_000_000)
    dealt = poor.post(f"/api/tables/{table}/deal/", {"bets": ["1"]}, key="d1")
    assert dealt.status_code == 200, dealt.content
    assert "Idempotent-Replayed" not in dealt
    assert stored(poor.user, "d1")


@pytest.mark.django_db
def test_the_ledger_s_refusal_in_a_race_is_the_same_409_and_is_not_stored(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """DEAL's check read the balance before another command spent it: the ledger's posting
    refuses (it locks the account). That refusal is the same 409."""
    poor = Api(make_player(funds=500_000))
    table = personal(poor)
    real = tables.wallet_balances
    monkeypatch.setattr(  # the balance as it was before the other command spent it
        tables, "wallet_balances", lambda **kw: {**real(**kw), "player_available": 10**9}
    )
    error = refused_for_funds(poor.post(f"/api/tables/{table}/deal/", {"bets": ["1"]}, key="r1"))
    assert error["details"] == {"needed": "1.000000", "available": "0.500000"}
    assert not stored(poor.user, "r1")
    assert not Round.objects.filter(table_id=table).exists()
    top_up(poor.user, 1_000_000)
    dealt = poor.post(f"/api/tables/{table}/deal/", {"bets": ["1"]}, key="r1")
    assert dealt.status_code == 200, dealt.content
    assert "Idempotent-Replayed" not in dealt


@pytest.mark.django_db
def test_a_double_the_wallet_cannot_cover_is_a_409_and_runs_after_a_top_up(
    stack: Stack,
) -> None:
    stack(["5S", "TH", "6C", "9D", "TC"])  # 11 against a 9: double draws TC
    poor = Api(make_player(funds=1_000_000))
    round_id = poor.post(f"/api/tables/{personal(poor)}/deal/", {"bets": ["1"]}).json()["round_id"]
    refused_for_funds(poor.post(f"/api/rounds/{round_id}/double/", key="x1"))
    assert not stored(poor.user, "x1")
    top_up(poor.user, 1_000_000)
    doubled = poor.post(f"/api/rounds/{round_id}/double/", key="x1")
    assert doubled.status_code == 200, doubled.content
    assert doubled.json()["view"]["boxes"][0]["hands"][0]["doubled"] is True


@pytest.mark.django_db(transaction=True)
def test_over_the_websocket_the_race_s_refusal_is_the_same_409(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    poor = Api(make_player(funds=500_000))
    table = personal(poor)
    real = tables.wallet_balances
    monkeypatch.setattr(
        tables, "wallet_balances", lambda **kw: {**real(**kw), "player_available": 10**9}
    )

    async def scenario() -> None:
        ws, _ = await connect(table, poor.user)
        got = await command(ws, "deal", id="w1", bets=["1"])
        assert (got["type"], got["code"], got["status"]) == ("error", "insufficient_funds", 409)
        await ws.disconnect()

    run(scenario)
    assert not stored(poor.user, "w1")


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_deals_on_postgresql_one_wins_and_every_other_is_a_409(
    monkeypatch: pytest.MonkeyPatch, stack: Stack
) -> None:
    """Funds for one bet, DEAL at four tables at once. Every DEAL reads the balance before any
    posts (the barrier), so each passes DEAL's own check and the ledger's lock decides: one
    bet goes through, and every other refusal is the same 409, stored nowhere. The cards end
    no round at the deal (16 against a 5): a round settled at once would pay its winnings
    back before the next DEAL's posting, and that DEAL would rightly go through."""
    stack(["9H", "5C", "7D", "TS", "2C", "4D", "8S", "3H"])
    user = make_player(funds=1_000_000)
    api = Api(user)
    table_ids = [personal(api, "classic"), personal(api, "atlantic_city")]
    for n in range(2):
        shared = tables.table_create(
            name=f"shared {n}", ruleset="duel_classic", min_bet=500_000, max_bet=10**8, seats=2
        )
        tables.seat_take(table=shared, user=user)
        table_ids.append(shared.pk)
    barrier = threading.Barrier(len(table_ids), timeout=30)
    real = tables.wallet_balances

    def balance_then_wait(**kw: Any) -> Any:
        found = real(**kw)
        barrier.wait()
        return found

    monkeypatch.setattr(tables, "wallet_balances", balance_then_wait)
    answers: list[Any] = [None] * len(table_ids)

    def deal(index: int) -> None:
        try:
            client = Api(user)
            answers[index] = client.post(
                f"/api/tables/{table_ids[index]}/deal/", {"bets": ["1"]}, key=f"c{index}"
            )
        finally:
            connection.close()

    threads = [threading.Thread(target=deal, args=(i,)) for i in range(len(table_ids))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    statuses = sorted(a.status_code for a in answers)
    assert statuses == [200] + [409] * (len(table_ids) - 1), [a.content for a in answers]
    for answer in answers:
        if answer.status_code == 409:
            refused_for_funds(answer)
    assert [stored(user, f"c{i}") for i in range(len(table_ids))].count(True) == 1
    assert ledger_reconcile().ok
