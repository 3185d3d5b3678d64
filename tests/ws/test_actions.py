"""Game commands over `/ws/tables/<id>/`: the REST path, its error codes and its idempotency.

Classic deal order (seed 000): player, dealer (face down), player, dealer (face up).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from asgiref.sync import sync_to_async

from casino.client.leakcheck import message_leaks
from ledger.selectors import wallet_balances
from tests.api.conftest import Api, make_player
from tests.ws.common import answer, command, connect, run, seated_table, world

pytestmark = pytest.mark.django_db(transaction=True)
Stack = Callable[[list[str]], None]


def personal(api: Api, ruleset: str = "classic") -> int:
    return int(api.post("/api/tables/personal/", {"ruleset": ruleset}).json()["id"])


def available(user: Any) -> int:
    return wallet_balances(user_id=user.pk)["player_available"]


def cards(hand: dict[str, Any]) -> list[str]:
    return [c["card"] for c in hand["cards"]]


def test_a_classic_round_played_over_the_socket_pays_exactly_and_pushes_every_version(
    api: Api, stack: Stack
) -> None:
    stack(["5S", "TH", "6C", "9D", "2C", "8C"])  # 11 vs 9 up (hole TH): hit 2C, hit 8C = 21
    table = personal(api)
    before = available(api.user)

    async def scenario() -> None:
        ws, _ = await connect(table, api.user)
        pushed: list[dict[str, Any]] = []
        dealt = await command(ws, "deal", bets=["1.00"], pushed=pushed)
        assert dealt["type"] == "result" and dealt["replayed"] is False
        body = dealt["round"]
        round_id = body["round_id"]
        assert body["status"] == "open" and body["view"]["phase"] == "playing"
        assert cards(body["view"]["boxes"][0]["hands"][0]) == ["5S", "6C"]
        assert body["view"]["dealer"]["cards"][0] == {"hidden": True}
        assert await sync_to_async(available)(api.user) == before - 1_000_000
        first = await command(ws, "hit", round_id=round_id, pushed=pushed)
        assert cards(first["round"]["view"]["boxes"][0]["hands"][0]) == ["5S", "6C", "2C"]
        done = await command(ws, "hit", round_id=round_id, pushed=pushed)  # 21: stands itself
        assert done["round"]["status"] == "settled"
        view = done["round"]["view"]
        assert cards(view["boxes"][0]["hands"][0]) == ["5S", "6C", "2C", "8C"]
        assert [c["card"] for c in view["dealer"]["cards"]] == ["TH", "9D"]
        assert view["settlement"]["hands"][0]["outcome"] == "win"
        assert view["server_seed"] is not None
        while not pushed or pushed[-1]["version"] < done["round"]["version"]:
            pushed.append(await ws.receive_json_from(timeout=10))
        await ws.disconnect()
        assert [m["type"] for m in pushed] == ["round"] * len(pushed)
        covered = [v for m in pushed for v in range(m["from_version"], m["version"] + 1)]
        assert covered == list(range(1, done["round"]["version"] + 1))  # each version once
        assert pushed[-1]["view"] == view  # the result is the same view the push carries
        assert message_leaks([*pushed, dealt, first], str(api.user.pk)) == []

    run(scenario)
    assert available(api.user) == before + 1_000_000  # won 1:1 on 1.00


def test_a_command_id_is_an_idempotency_key_shared_with_rest(api: Api, stack: Stack) -> None:
    stack(["5S", "TH", "6C", "9D", "2C", "3C", "4C"])
    table = personal(api)

    async def scenario() -> None:
        ws, _ = await connect(table, api.user)
        round_id = (await command(ws, "deal", id="d-1", bets=["1"]))["round"]["round_id"]
        refused = await command(ws, "deal", id="d-2", bets=["1"])
        assert (refused["code"], refused["status"]) == ("action_not_allowed", 409)
        first = await command(ws, "hit", id="h-1", round_id=round_id)
        again = await command(ws, "hit", id="h-1", round_id=round_id)
        assert again["replayed"] is True and again["round"] == first["round"]
        assert cards(again["round"]["view"]["boxes"][0]["hands"][0]) == ["5S", "6C", "2C"]
        rest = await sync_to_async(api.post)(f"/api/rounds/{round_id}/hit/", key="h-1")
        assert rest["Idempotent-Replayed"] == "true" and rest.json() == first["round"]
        reused = await command(ws, "hit", id="h-1", round_id=round_id, confirm=True)
        assert (reused["code"], reused["status"]) == ("idempotency_key_reused", 422)
        assert reused["id"] == "h-1"
        done = await command(ws, "stand", id="s-1", round_id=round_id)
        assert done["round"]["status"] == "settled"
        # d-2 was refused with a 409, which frees the key: it deals the next round now.
        second = await command(ws, "deal", id="d-2", bets=["1"])
        assert second["type"] == "result" and second["replayed"] is False
        assert second["round"]["round_id"] != round_id
        await ws.disconnect()

    run(scenario)
    recalled = api.get("/api/me/rounds/", limit=5).json()["results"]
    assert len(recalled) == 2  # the retries dealt no extra round


def test_duel_classic_turns_and_refusals_carry_the_rest_codes(stack: Stack) -> None:
    stack(["TS", "TH", "9C", "7D", "8S", "6H"])  # no ace up: no insurance step
    alice, bob = make_player(), make_player(funds=1_500_000)
    table = seated_table("duel_classic", 3, alice, bob)

    async def scenario() -> None:
        ws_a, _ = await connect(table.pk, alice)
        ws_b, _ = await connect(table.pk, bob)
        poor = await command(ws_b, "deal", bets=["2"])
        assert (poor["code"], poor["status"]) == ("insufficient_funds", 409)
        assert poor["details"] == {"needed": "2.000000", "available": "1.500000"}
        opened = await command(ws_a, "deal", bets=["1"])
        round_id = opened["round"]["round_id"]
        assert opened["round"]["view"]["phase"] == "betting"
        dealt = await command(ws_b, "deal", bets=["1"])
        turn = dealt["round"]["view"]["turn"]["player_id"]
        first, second = (ws_a, ws_b) if turn == str(alice.pk) else (ws_b, ws_a)
        wrong = await command(second, "stand", round_id=round_id)
        assert (wrong["code"], wrong["status"]) == ("not_your_turn", 409)
        assert (await command(first, "stand", round_id=round_id))["type"] == "result"
        done = await command(second, "stand", round_id=round_id)
        assert done["round"]["status"] == "settled"
        for ws in (ws_a, ws_b):
            await ws.disconnect()

    run(scenario)


def test_insurance_even_money_and_the_safety_net_confirm(api: Api, stack: Stack) -> None:
    table = personal(api)
    api.patch("/api/me/preferences/", {"safety_net": True})

    async def scenario() -> None:
        ws, _ = await connect(table, api.user)
        stack(["TS", "5H", "9C", "AD"])  # 19 vs ace up, hole 5: no dealer blackjack
        body = (await command(ws, "deal", bets=["2"]))["round"]
        assert body["view"]["phase"] == "insurance"
        bad = await command(ws, "insurance", round_id=body["round_id"], take=True, amount="0.50")
        assert (bad["code"], bad["status"]) == ("invalid_amount", 400), bad
        took = await command(ws, "insurance", round_id=body["round_id"], take=True)
        assert took["round"]["view"]["boxes"][0]["insurance"] == "1.000000"
        assert (await command(ws, "stand", round_id=body["round_id"]))["round"]["status"] == (
            "settled"
        )
        stack(["AS", "5H", "KC", "AD"])  # blackjack against an ace: even money
        body = (await command(ws, "deal", bets=["2"]))["round"]
        paid = await command(ws, "even_money", round_id=body["round_id"], take=True)
        assert paid["round"]["status"] == "settled"
        assert paid["round"]["view"]["settlement"]["hands"][0]["gross_return"] == "4.000000"
        stack(["TS", "5H", "7C", "9D", "2C"])  # hard 17: the safety net asks first
        body = (await command(ws, "deal", bets=["1"]))["round"]
        risky = await command(ws, "hit", round_id=body["round_id"])
        assert (risky["code"], risky["status"]) == ("confirm_required", 400)
        sure = await command(ws, "hit", round_id=body["round_id"], confirm=True)
        assert cards(sure["round"]["view"]["boxes"][0]["hands"][0]) == ["TS", "7C", "2C"]
        await ws.disconnect()

    run(scenario)


def test_a_refused_command_changes_nothing(api: Api, stack: Stack) -> None:
    stack(["5S", "TH", "6C", "9D"])
    table = personal(api)
    round_id = api.post(f"/api/tables/{table}/deal/", {"bets": ["1"]}).json()["round_id"]
    before = world()

    async def scenario() -> None:
        ws, _ = await connect(table, api.user)
        for kind, fields in (
            ("split", {}),
            ("insurance", {"take": True}),
            ("even_money", {"take": False}),
            ("deal", {"bets": ["1"]}),
            ("hit", {"confirm": "perhaps"}),
        ):
            refused = await command(ws, kind, round_id=round_id, **fields)
            assert refused["type"] == "error" and refused["status"] in (400, 409), refused
        await ws.send_json_to({"type": "ping"})
        assert (await answer(ws))["type"] == "pong"
        await ws.disconnect()

    run(scenario)
    assert world() == before


def test_commands_share_the_money_rate_limit_with_rest(
    api: Api, stack: Stack, settings: Any
) -> None:
    stack(["5S", "TH", "6C", "9D"])
    table = personal(api)
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "money": "3/min"}
    round_id = api.post(f"/api/tables/{table}/deal/", {"bets": ["1"]}).json()["round_id"]
    before = world()  # the personal table and the deal above used 2 of the 3

    async def scenario() -> None:
        ws, _ = await connect(table, api.user)
        split = await command(ws, "split", round_id=round_id)  # the 3rd: runs, and is refused
        assert split["code"] == "action_not_allowed"
        throttled = await command(ws, "stand", round_id=round_id)
        assert (throttled["code"], throttled["status"]) == ("throttled", 429)
        assert throttled["details"]["retry_after_s"] > 0
        await ws.disconnect()

    run(scenario)
    assert world() == before
    assert api.post(f"/api/rounds/{round_id}/stand/").status_code == 429  # one counter


def test_a_malfunction_answers_internal_error_and_keeps_the_socket(
    api: Api, stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    from casino.rounds import services

    stack(["5S", "TH", "6C", "9D"])
    table = personal(api)
    round_id = api.post(f"/api/tables/{table}/deal/", {"bets": ["1"]}).json()["round_id"]
    before = world()

    def broken(**kwargs: Any) -> Any:
        raise RuntimeError("the database went away")

    async def scenario() -> None:
        ws, _ = await connect(table, api.user)
        monkeypatch.setattr(services, "round_command", broken)
        failed = await command(ws, "stand", id="s-1", round_id=round_id)
        assert (failed["type"], failed["code"], failed["status"]) == (
            "error",
            "internal_error",
            500,
        )
        assert failed["id"] == "s-1"
        assert await sync_to_async(world)() == before  # the failed call wrote nothing
        monkeypatch.undo()
        done = await command(ws, "stand", id="s-1", round_id=round_id)  # the key was freed
        assert done["type"] == "result" and done["replayed"] is False
        assert done["round"]["status"] == "settled"
        await ws.disconnect()

    run(scenario)
    assert world() != before
