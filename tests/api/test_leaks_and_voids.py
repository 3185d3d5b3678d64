"""Many random rounds scanned for leaks (every response and message), and voids over REST+WS."""

from __future__ import annotations

import random
from typing import Any

import pytest
from asgiref.sync import sync_to_async

from casino.client.cli import banked_move
from casino.client.leakcheck import message_leaks
from casino.engine.rules import RULESETS
from casino.rounds.services import round_void
from tests.api.conftest import Api, make_player
from tests.api.test_websocket import connect, read_until, run, shared_table

pytestmark = pytest.mark.django_db(transaction=True)


async def play_banked(
    players: list[Api], table_id: int, rng: random.Random, seen: list[Any]
) -> int:
    """One round with basic strategy (random insurance answers); returns its final version."""
    rules = RULESETS[
        (await sync_to_async(players[0].get)(f"/api/tables/{table_id}/")).json()["ruleset"]
    ]
    round_id = ""
    for p in players:
        bets = [f"{rng.randint(1, 4) * 0.5:.2f}" for _ in range(rng.randint(1, rules.max_boxes))]
        response = await sync_to_async(p.post)(f"/api/tables/{table_id}/deal/", {"bets": bets})
        seen.append((str(p.user.pk), response.json()))
        round_id = response.json()["round_id"]
    for _ in range(60):
        acted = False
        for p in players:
            state = (await sync_to_async(p.get)(f"/api/rounds/{round_id}/")).json()
            seen.append((str(p.user.pk), state))
            if state["status"] != "open":
                return int(state["version"])
            move = banked_move(state["view"], str(p.user.pk), rules)
            if move is None:
                continue
            action, body = move
            if action in ("insurance", "even-money"):
                body = {**body, "take": rng.random() < 0.5}
            response = await sync_to_async(p.post)(f"/api/rounds/{round_id}/{action}/", body)
            seen.append((str(p.user.pk), response.json()))
            acted = True
        assert acted, state
    raise AssertionError("round did not finish")


def test_random_rounds_leak_nothing_in_any_response_or_message() -> None:
    rng = random.Random(7)
    a, b = Api(make_player()), Api(make_player())
    shared = shared_table("duel_classic", 2)
    solo = a.post("/api/tables/personal/", {"ruleset": "atlantic_city"}).json()["id"]

    async def scenario() -> None:
        seen: list[Any] = []
        for p in (a, b):
            await sync_to_async(p.post)(f"/api/tables/{shared.pk}/sit/")
        sockets = {
            "a": await connect(shared.pk, a.user),
            "spectator": await connect(shared.pk),
            "a-solo": await connect(solo, a.user),
        }
        messages: list[tuple[str | None, Any]] = []
        for _ in range(6):
            final = await play_banked([a, b], shared.pk, rng, seen)
            messages += [(str(a.user.pk), m) for m in await read_until(sockets["a"], final)]
            messages += [(None, m) for m in await read_until(sockets["spectator"], final)]
            final = await play_banked([a], solo, rng, seen)
            messages += [(str(a.user.pk), m) for m in await read_until(sockets["a-solo"], final)]
        for ws in sockets.values():
            await ws.disconnect()
        assert len(seen) > 50 and len(messages) > 30
        leaks = [leak for viewer, body in seen + messages for leak in message_leaks(body, viewer)]
        assert leaks == []

    run(scenario)


def test_a_void_mid_round_refunds_and_a_void_after_settlement_reverses_the_payout(
    stack: Any,
) -> None:
    stack(["5S", "TH", "6C", "9D", "TC"])  # 11 against 9: DOUBLE wins
    a = Api(make_player())
    table = a.post("/api/tables/personal/", {"ruleset": "classic"}).json()["id"]
    before = a.get("/api/wallet/balance/").json()["available"]

    async def scenario() -> None:
        ws = await connect(table, a.user)
        dealt = (await sync_to_async(a.post)(f"/api/tables/{table}/deal/", {"bets": ["2"]})).json()
        voided = await sync_to_async(round_void)(
            round_id=dealt["round_id"], reason="test: dealer shoe fault", evidence="tests"
        )
        got = await read_until(ws, voided.round.version)
        assert got[-1]["view"]["phase"] == "voided" and got[-1]["view"]["server_seed"]
        assert message_leaks(got, str(a.user.pk)) == []
        after_void = (await sync_to_async(a.get)("/api/wallet/balance/")).json()["available"]
        assert after_void == before
        dealt = (await sync_to_async(a.post)(f"/api/tables/{table}/deal/", {"bets": ["2"]})).json()
        won = (await sync_to_async(a.post)(f"/api/rounds/{dealt['round_id']}/double/")).json()
        assert won["status"] == "settled"
        assert (await sync_to_async(a.get)("/api/wallet/balance/")).json()["available"] != before
        late = await sync_to_async(round_void)(
            round_id=dealt["round_id"], reason="test: malfunction found later", evidence="tests"
        )
        got = await read_until(ws, late.round.version)
        await ws.disconnect()
        assert got[-1]["view"]["phase"] == "voided"
        assert (await sync_to_async(a.get)("/api/wallet/balance/")).json()["available"] == before
        recalled = (await sync_to_async(a.get)(f"/api/me/rounds/{dealt['round_id']}/")).json()
        assert recalled["status"] == "voided" and recalled["proof"] is not None

    run(scenario)
