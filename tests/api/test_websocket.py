"""`/ws/tables/<id>/`: own and public views after commit, resume, gap fill, limits, leaks."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from channels.testing import WebsocketCommunicator
from rest_framework.authtoken.models import Token

from casino.client.leakcheck import message_leaks
from casino.live.consumers import MAX_MESSAGE_BYTES
from casino.models import Table
from casino.rounds import publish
from casino.routing import websocket_application
from casino.tables.services import table_add
from tests.api.conftest import Api, make_player

pytestmark = pytest.mark.django_db(transaction=True)
ORIGIN = (b"origin", b"http://testserver")


def run(coro: Callable[[], Awaitable[None]]) -> None:
    async_to_sync(coro)()


async def connect(
    table_id: int, user: Any = None, *, origin: tuple[bytes, bytes] = ORIGIN
) -> WebsocketCommunicator:
    path = f"/ws/tables/{table_id}/"
    if user is not None:
        token, _ = await sync_to_async(Token.objects.get_or_create)(user=user)
        path += f"?token={token.key}"
    ws = WebsocketCommunicator(websocket_application(), path, headers=[origin])
    connected, _ = await ws.connect()
    assert connected
    hello = await ws.receive_json_from(timeout=5)
    assert hello["type"] == "hello"
    return ws


async def read_until(ws: WebsocketCommunicator, version: int) -> list[dict[str, Any]]:
    """Messages up to the one carrying `version` (the version a REST answer reported)."""
    out: list[dict[str, Any]] = []
    while not out or out[-1]["version"] < version:
        out.append(await ws.receive_json_from(timeout=30))
    return out


async def drain(ws: WebsocketCommunicator) -> list[dict[str, Any]]:
    """Every message already queued for this client."""
    out = []
    while not await ws.receive_nothing(timeout=0.2):
        out.append(await ws.receive_json_from(timeout=5))
    return out


def shared_table(ruleset: str, seats: int, stake: int = 1_000_000) -> Table:
    if ruleset == "duel":
        return table_add(
            Table(name="d", ruleset="duel", min_bet=stake, max_bet=stake, stake=stake, seats=seats)
        )
    return table_add(Table(name="dc", ruleset=ruleset, min_bet=500_000, max_bet=10**9, seats=seats))


def assert_contiguous(messages: list[dict[str, Any]]) -> None:
    by_round: dict[str, list[int]] = {}
    for m in messages:
        seen = by_round.setdefault(m["round_id"], [])
        assert not seen or m["from_version"] == seen[-1] + 1, (seen, m["from_version"])
        seen.append(m["version"])


def test_duel_classic_full_round_players_get_their_view_and_spectators_the_public_one(
    stack: Any,
) -> None:
    stack(["TS", "TH", "9C", "7D", "8S", "6H"])  # no ace up: no insurance step
    table = shared_table("duel_classic", 3)
    a, b = Api(make_player()), Api(make_player())
    watcher = make_player()

    async def scenario() -> None:
        for p in (a, b):
            await sync_to_async(p.post)(f"/api/tables/{table.pk}/sit/")
        ws_a = await connect(table.pk, a.user)
        ws_s = await connect(table.pk, watcher)
        ws_anon = await connect(table.pk)
        first = await sync_to_async(a.post)(f"/api/tables/{table.pk}/deal/", {"bets": ["1"]})
        round_id = first.json()["round_id"]
        await sync_to_async(b.post)(f"/api/tables/{table.pk}/deal/", {"bets": ["1"]})
        for _ in range(10):
            state = (await sync_to_async(a.get)(f"/api/rounds/{round_id}/")).json()
            if state["status"] != "open":
                break
            turn = state["view"]["turn"]["player_id"]
            actor = a if turn == str(a.user.pk) else b
            await sync_to_async(actor.post)(f"/api/rounds/{round_id}/stand/")
        final = state["version"]
        got_a, got_s = await read_until(ws_a, final), await read_until(ws_s, final)
        got_anon = await read_until(ws_anon, final)
        for ws in (ws_a, ws_s, ws_anon):
            await ws.disconnect()
        assert got_a and got_a[-1]["view"]["phase"] == "settled"
        assert got_a[-1]["view"]["server_seed"] is not None
        assert "my_options" in got_a[-1]["view"] and "my_options" not in got_s[-1]["view"]
        assert [m["version"] for m in got_s] == [m["version"] for m in got_anon]
        assert [m["version"] for m in got_a] == [m["version"] for m in got_s]
        for got, viewer in ((got_a, str(a.user.pk)), (got_s, None), (got_anon, None)):
            assert_contiguous(got)
            assert message_leaks(got, viewer) == []

    run(scenario)


def test_duel_of_three_where_one_times_out_and_others_never_see_hidden_cards(stack: Any) -> None:
    from casino.rounds.services import round_timeout

    stack(["TS", "9H", "8C", "7D", "6S", "5H"])  # no blackjack: nobody is done at the deal
    table = shared_table("duel", 3)
    players = [Api(make_player()) for _ in range(3)]

    async def scenario() -> None:
        for p in players:
            await sync_to_async(p.post)(f"/api/tables/{table.pk}/sit/")
        sockets = [await connect(table.pk, p.user) for p in players]
        for p in players:
            await sync_to_async(p.post)(f"/api/tables/{table.pk}/ready/")
        table_view = (await sync_to_async(players[0].get)(f"/api/tables/{table.pk}/")).json()
        round_id = table_view["open_round"]
        assert round_id, table_view  # full table: starts at once
        for p in players[:2]:
            r = await sync_to_async(p.post)(f"/api/rounds/{round_id}/stand/")
            assert r.status_code == 200, r.content
        state = (await sync_to_async(players[0].get)(f"/api/rounds/{round_id}/")).json()
        assert state["status"] == "open"
        deadline = state["view"]["deadline_ms"]
        early = await sync_to_async(round_timeout)(round_id=round_id, at_ms=deadline - 1)
        assert early.events == []  # an early nudge changes nothing
        done = await sync_to_async(round_timeout)(round_id=round_id, at_ms=deadline + 1)
        assert done.state.phase == "settled"
        late = await sync_to_async(round_timeout)(round_id=round_id, at_ms=deadline + 5_000)
        assert late.events == []  # a late or duplicate nudge changes nothing
        for p, ws in zip(players, sockets, strict=True):
            got = await read_until(ws, done.round.version)
            await ws.disconnect()
            assert got[-1]["view"]["phase"] == "settled"
            assert_contiguous(got)
            assert message_leaks(got, str(p.user.pk)) == []
            mid = [m for m in got if m["view"]["phase"] == "dueling"]
            others = [b for b in mid[0]["view"]["boxes"] if b["player_id"] != str(p.user.pk)]
            assert all(h["cards"][1] == {"hidden": True} for b in others for h in b["hands"])

    run(scenario)


def test_reconnect_with_resume_gets_every_missed_version_once(stack: Any) -> None:
    stack(["5S", "TH", "6C", "9D", "2C", "2D", "2H", "2S"])
    table = shared_table("duel_classic", 1)
    a = Api(make_player())

    async def scenario() -> None:
        await sync_to_async(a.post)(f"/api/tables/{table.pk}/sit/")
        ws = await connect(table.pk, a.user)
        dealt = (
            await sync_to_async(a.post)(f"/api/tables/{table.pk}/deal/", {"bets": ["1"]})
        ).json()
        round_id = dealt["round_id"]
        before = await read_until(ws, dealt["version"])
        await ws.disconnect()
        await sync_to_async(a.post)(f"/api/rounds/{round_id}/hit/")
        final = (await sync_to_async(a.post)(f"/api/rounds/{round_id}/stand/")).json()["version"]
        ws = await connect(table.pk, a.user)
        snapshot = await drain(ws)
        assert snapshot == []  # the round ended: nothing open to show
        await ws.send_json_to({"type": "resume", "rounds": {round_id: before[-1]["version"]}})
        missed = await read_until(ws, final)
        await ws.send_json_to({"type": "resume", "rounds": {round_id: before[-1]["version"]}})
        again = await drain(ws)
        await ws.disconnect()
        assert [m["version"] for m in missed] == list(
            range(before[-1]["version"] + 1, missed[-1]["version"] + 1)
        )
        assert missed[-1]["view"]["phase"] == "settled"
        assert again == []  # already delivered on this connection: never twice

    run(scenario)


def test_a_message_lost_by_the_layer_is_filled_from_the_event_store(stack: Any) -> None:
    stack(["5S", "TH", "6C", "9D", "2C", "2D", "2H", "2S"])
    table = shared_table("duel_classic", 1)
    a = Api(make_player())

    async def scenario() -> None:
        await sync_to_async(a.post)(f"/api/tables/{table.pk}/sit/")
        ws = await connect(table.pk, a.user)
        dealt = (
            await sync_to_async(a.post)(f"/api/tables/{table.pk}/deal/", {"bets": ["1"]})
        ).json()
        round_id = dealt["round_id"]
        await read_until(ws, dealt["version"])
        with pytest.MonkeyPatch.context() as patch:  # the layer drops the hit's message
            patch.setattr(publish, "publish_round", lambda *args: None)
            await sync_to_async(a.post)(f"/api/rounds/{round_id}/hit/")
        final = (await sync_to_async(a.post)(f"/api/rounds/{round_id}/stand/")).json()["version"]
        got = await read_until(ws, final)
        await ws.disconnect()
        assert got and got[0]["events"] == ["PlayerCardDealt"]  # refilled from the store
        assert_contiguous(got)

    run(scenario)


def test_origin_is_checked_and_big_or_malformed_messages_are_refused() -> None:
    table = shared_table("duel", 2)

    async def scenario() -> None:
        bad = WebsocketCommunicator(
            websocket_application(),
            f"/ws/tables/{table.pk}/",
            headers=[(b"origin", b"http://evil.example")],
        )
        connected, _ = await bad.connect()
        assert not connected
        missing = WebsocketCommunicator(
            websocket_application(), "/ws/tables/999999/", headers=[ORIGIN]
        )
        connected, _ = await missing.connect()
        assert not connected
        ws = await connect(table.pk)
        await ws.send_to(text_data="not json")
        assert (await ws.receive_json_from())["code"] == "malformed_message"
        await ws.send_json_to({"type": "ping"})
        assert (await ws.receive_json_from())["type"] == "pong"
        await ws.send_to(text_data=json.dumps({"type": "ping", "pad": "x" * MAX_MESSAGE_BYTES}))
        closed = await ws.receive_output(timeout=5)
        assert closed == {"type": "websocket.close", "code": 4009}

    run(scenario)


def test_someone_elses_personal_table_cannot_be_watched(api: Api) -> None:
    table_id = api.post("/api/tables/personal/", {"ruleset": "classic"}).json()["id"]
    stranger = make_player()

    async def scenario() -> None:
        token, _ = await sync_to_async(Token.objects.get_or_create)(user=stranger)
        ws = WebsocketCommunicator(
            websocket_application(), f"/ws/tables/{table_id}/?token={token.key}", headers=[ORIGIN]
        )
        connected, _ = await ws.connect()
        assert not connected
        await connect(table_id, api.user)

    run(scenario)


def test_every_close_code_is_one_a_real_server_can_send() -> None:
    """daphne closes through autobahn, which takes 1000 or 3000-4999 from an application and
    raises on anything else: the socket then closed 1011 with an error logged, not 1009."""
    from autobahn.websocket.protocol import WebSocketProtocol

    from casino.live import consumers

    sent: list[int | None] = []

    class Protocol(WebSocketProtocol):
        def sendCloseFrame(
            self, code: int | None = None, reasonUtf8: bytes | None = None, isReply: bool = False
        ) -> None:
            sent.append(code)

    codes = [consumers.CLOSE_TOO_BIG, consumers.CLOSE_BAD_TOKEN, consumers.CLOSE_NOT_FOUND]
    for code in codes:
        Protocol().sendClose(code=code)
    assert sent == codes == [4009, 4401, 4404]
