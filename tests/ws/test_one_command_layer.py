"""REST and the table WebSocket run a command through one layer (`casino.api.commands`): the
same bad body is refused with the same code, message and field details either way, the
checks come in the same order, and both count against the player's one money rate limit."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest

from casino.api import commands
from tests.api.conftest import Api, make_player
from tests.ws.common import command, connect, run, seated_table

pytestmark = pytest.mark.django_db(transaction=True)
Stack = Callable[[list[str]], None]

BAD_BODIES = [
    ("hit", {"confirm": "yes"}),
    ("hit", {"confirm": [True]}),
    ("insurance", {}),
    ("insurance", {"take": "x"}),
    ("insurance", {"take": True, "box": 7}),
    ("insurance", {"take": True, "amount": "abc"}),
    ("insurance", {"take": True, "amount": 0.5}),
    ("even_money", {"take": None}),
    ("deal", {"bets": []}),
    ("deal", {"bets": "1.00"}),
    ("deal", {"mode": "triple", "bets": ["1"]}),
    ("deal", {"bets": ["1"] * 4}),
    ("deal", {"bets": ["-1"]}),
]


def _dealt(user: Any) -> tuple[int, str]:
    """A shared classic table with `user` seated, and the round their bet opened (dealt
    through the command layer itself, so no rate limit is spent on it)."""
    table = seated_table("classic", 1, user)
    status, body, _ = commands.deal(
        user=user, table_id=table.pk, body={"bets": ["1"]}, key=f"setup-{uuid.uuid4().hex}"
    )
    assert status == 200, body
    return table.pk, body["round_id"]


def _rest_url(kind: str, table_id: int, round_id: str) -> str:
    if kind == "deal":
        return f"/api/tables/{table_id}/deal/"
    return f"/api/rounds/{round_id}/{kind.replace('_', '-')}/"


@pytest.mark.parametrize(("kind", "body"), BAD_BODIES)
def test_the_same_bad_body_is_the_same_error_over_rest_and_the_socket(
    api: Api, stack: Stack, kind: str, body: dict[str, Any]
) -> None:
    stack(["5S", "TH", "6C", "9D"])
    table_id, round_id = _dealt(api.user)
    rest = api.post(_rest_url(kind, table_id, round_id), body)
    expected = {"status": rest.status_code, **rest.json()["error"]}
    assert expected["status"] == 400, expected

    async def scenario() -> None:
        ws, _ = await connect(table_id, api.user)
        fields = body if kind == "deal" else {"round_id": round_id, **body}
        got = await command(ws, kind, **fields)
        await ws.disconnect()
        assert got["type"] == "error"
        assert {k: got[k] for k in ("status", "code", "message", "details")} == expected

    run(scenario)


def test_a_strangers_round_is_refused_before_its_body_on_both(api: Api, stack: Stack) -> None:
    stack(["5S", "TH", "6C", "9D"])
    _, round_id = _dealt(make_player())
    stranger_table = seated_table("classic", 1, api.user)
    ghost = str(uuid.uuid4())
    bad = {"confirm": "yes"}
    for target, status, code in (
        (round_id, 403, "not_a_participant"),
        (ghost, 404, "not_found"),
        ("not-a-round", 404, "not_found"),
    ):
        refused = api.post(f"/api/rounds/{target}/hit/", bad)
        assert (refused.status_code, refused.json()["error"]["code"]) == (status, code)

    async def scenario() -> None:
        ws, _ = await connect(stranger_table.pk, api.user)
        for target, status, code in (
            (round_id, 403, "not_a_participant"),
            (ghost, 404, "not_found"),
            ("not-a-round", 404, "not_found"),
        ):
            got = await command(ws, "hit", round_id=target, **bad)
            assert (got["status"], got["code"]) == (status, code), got
        await ws.disconnect()

    run(scenario)


def test_rest_posts_and_socket_commands_count_in_one_money_window(
    api: Api, stack: Stack, settings: Any
) -> None:
    stack(["5S", "TH", "6C", "9D"])  # 5 and 6: no pair, so SPLIT is refused (409) but counted
    table_id, round_id = _dealt(api.user)
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "money": "3/min"}
    for _ in range(2):
        split = api.post(f"/api/rounds/{round_id}/split/")
        assert split.json()["error"]["code"] == "action_not_allowed"

    async def scenario() -> None:
        ws, _ = await connect(table_id, api.user)
        third = await command(ws, "split", round_id=round_id)
        assert third["code"] == "action_not_allowed"  # passed the limit: the 3rd of 3
        refused = await command(ws, "stand", round_id=round_id)
        assert (refused["code"], refused["status"]) == ("throttled", 429)
        assert 0 < refused["details"]["retry_after_s"] <= 60
        await ws.disconnect()

    run(scenario)
    refused = api.post(f"/api/rounds/{round_id}/stand/")
    assert (refused.status_code, refused.json()["error"]["code"]) == (429, "throttled")
    state = api.get(f"/api/rounds/{round_id}/").json()
    assert state["status"] == "open"  # neither STAND ran
