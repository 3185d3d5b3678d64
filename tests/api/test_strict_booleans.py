"""Only JSON booleans are booleans (issue 21).

DRF's BooleanField takes "yes", "on", "1", 1, "true" and more: `{"confirm": "yes"}` confirmed a
risky hit and `{"ready": "yes"}` said READY. Every boolean of a game request (REST and the
WebSocket's commands, which share the serializers) and of the preferences takes `true` or
`false` only; anything else is a 400 `invalid_input` and changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from casino.models import PlayerPreferences, Seat
from tests.api.conftest import Api, make_player
from tests.ws.common import command, connect, run, seated_table, world

Stack = Callable[[list[str]], None]
LOOSE = ["yes", "true", "True", "on", "1", 1, 0, "false", "no", "", None]


def personal(api: Api) -> int:
    return int(api.post("/api/tables/personal/", {"ruleset": "classic"}).json()["id"])


def invalid(response: Any, field: str) -> None:
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "invalid_input" and field in error["details"]["fields"], error


@pytest.mark.django_db
@pytest.mark.parametrize("value", LOOSE, ids=repr)
def test_round_actions_take_json_booleans_only(api: Api, stack: Stack, value: Any) -> None:
    stack(["TS", "9H", "7C", "8D"])
    round_id = api.post(f"/api/tables/{personal(api)}/deal/", {"bets": ["1"]}).json()["round_id"]
    before = world()
    invalid(api.post(f"/api/rounds/{round_id}/hit/", {"confirm": value}), "confirm")
    invalid(api.post(f"/api/rounds/{round_id}/insurance/", {"take": value}), "take")
    invalid(api.post(f"/api/rounds/{round_id}/even-money/", {"take": value}), "take")
    assert world() == before
    assert api.post(f"/api/rounds/{round_id}/hit/", {"confirm": True}).status_code == 200


@pytest.mark.django_db
@pytest.mark.parametrize("value", LOOSE, ids=repr)
def test_ready_takes_a_json_boolean_only(value: Any) -> None:
    player = Api(make_player())
    table = seated_table("duel", 2, player.user)
    invalid(player.post(f"/api/tables/{table.pk}/ready/", {"ready": value}), "ready")
    assert not Seat.objects.get(table=table, user=player.user).ready
    assert player.post(f"/api/tables/{table.pk}/ready/", {"ready": True}).status_code == 200
    assert Seat.objects.get(table=table, user=player.user).ready


@pytest.mark.django_db
@pytest.mark.parametrize("value", LOOSE, ids=repr)
def test_preferences_take_json_booleans_only(api: Api, value: Any) -> None:
    for field in ("offer_insurance", "safety_net", "animation", "audio", "left_handed"):
        invalid(api.patch("/api/me/preferences/", {field: value}), field)
    assert not PlayerPreferences.objects.filter(user=api.user, safety_net=True).exists()
    assert api.patch("/api/me/preferences/", {"safety_net": True}).json()["safety_net"] is True


@pytest.mark.django_db(transaction=True)
def test_websocket_commands_take_json_booleans_only(api: Api, stack: Stack) -> None:
    stack(["TS", "9H", "7C", "8D"])
    table = personal(api)
    round_id = api.post(f"/api/tables/{table}/deal/", {"bets": ["1"]}).json()["round_id"]

    async def scenario() -> None:
        ws, _ = await connect(table, api.user)
        for kind, field in (("hit", "confirm"), ("insurance", "take"), ("even_money", "take")):
            got = await command(ws, kind, round_id=round_id, **{field: "yes"})
            assert (got["type"], got["code"], got["status"]) == ("error", "invalid_input", 400)
            assert field in got["details"]["fields"]
        await ws.disconnect()

    before = world()
    run(scenario)
    assert world() == before
