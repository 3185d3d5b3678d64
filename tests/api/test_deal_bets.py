"""DEAL's bets: an empty Atlantic City box, and the table's limits before the balance (issue 21).

- `{"bets": ["1.00", "0.50", "0"]}` (docs/api.md: "0 leaves a box empty") was a 400
  `amount_zero`: a box of 0 is empty, as the engine's PlaceBet takes it; a bet where every box
  is 0 is still refused.
- A bet above the table maximum from a player short of funds answered `insufficient_funds`:
  the table's limits (boxes, chip unit, minimum, maximum) come first, over REST and the
  WebSocket, for DEAL, REBET and DOUBLE BET.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from casino.eventstore.models import StoredEvent
from casino.models import Round
from tests.api.conftest import Api, make_player
from tests.ws.common import command, connect, run

pytestmark = pytest.mark.django_db
Stack = Callable[[list[str]], None]


def personal(api: Api, ruleset: str) -> int:
    return int(api.post("/api/tables/personal/", {"ruleset": ruleset}).json()["id"])


def error(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.content
    body = response.json()["error"]
    assert body["code"] == code, body
    return dict(body)


def test_an_atlantic_city_deal_with_an_empty_box_bets_on_the_others(api: Api, stack: Stack) -> None:
    stack(["TS", "9H", "8C", "7D", "6S", "5H", "4C", "3D"])
    table = personal(api, "atlantic_city")
    dealt = api.post(f"/api/tables/{table}/deal/", {"bets": ["1.00", "0.50", "0"]})
    assert dealt.status_code == 200, dealt.content
    boxes = dealt.json()["view"]["boxes"]
    assert [(b["box"], b["bet"]) for b in boxes] == [(0, "1.000000"), (1, "0.500000")]
    last_bet = api.get("/api/me/preferences/").json()["last_bet"]
    assert last_bet == ["1.000000", "0.500000", "0.000000"]  # REBET keeps the empty box


def test_an_empty_box_may_come_first(api: Api, stack: Stack) -> None:
    stack(["TS", "9H", "8C", "7D", "6S", "5H", "4C", "3D"])
    table = personal(api, "atlantic_city")
    dealt = api.post(f"/api/tables/{table}/deal/", {"bets": ["0", "0", "2"]})
    assert dealt.status_code == 200, dealt.content
    assert [(b["box"], b["bet"]) for b in dealt.json()["view"]["boxes"]] == [(2, "2.000000")]


@pytest.mark.parametrize("bets", [["0"], ["0", "0", "0"], ["0.000000", "0"], []])
def test_a_deal_where_every_box_is_empty_is_refused_and_changes_nothing(
    api: Api, bets: list[str]
) -> None:
    table = personal(api, "atlantic_city")
    before = StoredEvent.objects.count()
    refused = error(api.post(f"/api/tables/{table}/deal/", {"bets": bets}), 400, "invalid_input")
    assert "bets" in refused["details"]["fields"]
    assert StoredEvent.objects.count() == before
    assert not Round.objects.filter(table_id=table).exists()


def test_negative_and_malformed_boxes_are_still_refused(api: Api) -> None:
    table = personal(api, "atlantic_city")
    refusals = [
        (["1", "-1"], "amount_negative", "-1"),
        (["1", "0.0000001"], "amount_too_precise", "0.0000001"),
        (["1", 0], "amount_not_string", "0"),
        (["1", None], "amount_not_string", "None"),  # a null box named `bets`, not `amount`
    ]
    for bets, code, value in refusals:
        response = api.post(f"/api/tables/{table}/deal/", {"bets": bets})
        assert response.status_code == 400, (bets, response.content)
        error = response.json()["error"]
        assert error["code"] == code
        assert error["details"] == {"field": "bets", "value": value}  # the field sent
        assert error["message"].startswith("bets "), error["message"]
    assert not Round.objects.filter(table_id=table).exists()


@pytest.mark.parametrize(
    ("bets", "code", "message"),
    [
        (["1001"], "bet_above_maximum", "the table maximum is 1000.00 USDC"),
        (["0.05"], "bet_below_minimum", "the table minimum is 0.10 USDC"),
        (["0.155"], "invalid_amount", "bets are multiples of 0.01 USDC"),  # the chip unit
        (["1", "1"], "too_many_boxes", "classic has at most 1 betting box."),
    ],
)
def test_the_table_s_limits_come_before_the_balance(
    bets: list[str], code: str, message: str
) -> None:
    """Refused for the table's limits, in USDC as a player reads them (not 1000.000000)."""
    poor = Api(make_player(funds=10_000))  # 0.01 USDC: short for every one of these
    table = personal(poor, "classic")
    refused = error(poor.post(f"/api/tables/{table}/deal/", {"bets": bets}), 400, code)
    assert refused["message"] == message
    assert not Round.objects.filter(table_id=table).exists()


def test_a_double_bet_above_the_maximum_is_refused_for_the_limit(stack: Stack) -> None:
    stack(["TS", "9H", "7C", "8D"])  # 17 against 17: a push, the stake comes back
    player = Api(make_player(funds=700_000_000))
    table = personal(player, "classic")
    first = player.post(f"/api/tables/{table}/deal/", {"bets": ["600"]})
    assert first.status_code == 200, first.content
    player.post(f"/api/rounds/{first.json()['round_id']}/stand/")
    # DOUBLE BET would be 1,200 USDC: above the maximum, and above the balance too
    error(player.post(f"/api/tables/{table}/deal/", {"mode": "double"}), 400, "bet_above_maximum")


@pytest.mark.django_db(transaction=True)
def test_over_the_websocket_too(stack: Stack) -> None:
    stack(["TS", "9H", "8C", "7D", "6S", "5H", "4C", "3D"])
    poor = Api(make_player(funds=10_000))
    rich = Api(make_player())
    poor_table, rich_table = personal(poor, "classic"), personal(rich, "atlantic_city")

    async def scenario() -> None:
        ws, _ = await connect(poor_table, poor.user)
        over = await command(ws, "deal", bets=["1001"])
        assert (over["code"], over["status"]) == ("bet_above_maximum", 400)
        await ws.disconnect()
        ws, _ = await connect(rich_table, rich.user)
        dealt = await command(ws, "deal", bets=["1.00", "0.50", "0"])
        assert dealt["type"] == "result", dealt
        assert [b["box"] for b in dealt["round"]["view"]["boxes"]] == [0, 1]
        await ws.disconnect()

    run(scenario)
