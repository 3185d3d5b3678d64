"""Helpers for the WebSocket tests: connect, send a command, read its answer, the world's state."""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable
from typing import Any

from asgiref.sync import async_to_sync, sync_to_async
from channels.testing import WebsocketCommunicator
from rest_framework.authtoken.models import Token

from casino.routing import websocket_application

ORIGIN = (b"origin", b"http://testserver")
_ids = itertools.count()


def run(coro: Callable[[], Awaitable[None]]) -> None:
    async_to_sync(coro)()


def next_id() -> str:
    return f"ws-{next(_ids)}"


async def open_socket(table_id: int, user: Any = None) -> tuple[bool, Any, WebsocketCommunicator]:
    """(accepted, close code or None, communicator) without reading anything."""
    path = f"/ws/tables/{table_id}/"
    if user is not None:
        token, _ = await sync_to_async(Token.objects.get_or_create)(user=user)
        path += f"?token={token.key}"
    ws = WebsocketCommunicator(websocket_application(), path, headers=[ORIGIN])
    accepted, code = await ws.connect(timeout=10)
    return accepted, code, ws


async def connect(table_id: int, user: Any = None) -> tuple[WebsocketCommunicator, list[Any]]:
    """An accepted socket, and what it got on connect (hello, then any snapshot)."""
    accepted, code, ws = await open_socket(table_id, user)
    assert accepted, code
    got = [await ws.receive_json_from(timeout=10)]
    assert got[0]["type"] == "hello"
    got.extend(await drain(ws))
    return ws, got


async def drain(ws: WebsocketCommunicator) -> list[dict[str, Any]]:
    """Every message already queued for this client."""
    out = []
    while not await ws.receive_nothing(timeout=0.1):
        out.append(await ws.receive_json_from(timeout=10))
    return out


async def answer(ws: WebsocketCommunicator, pushed: list[Any] | None = None) -> dict[str, Any]:
    """The next result/error/pong, keeping the `round` pushes seen on the way in `pushed`."""
    while True:
        msg = await ws.receive_json_from(timeout=30)
        if msg["type"] in ("result", "error", "pong"):
            return dict(msg)
        if pushed is not None:
            pushed.append(msg)


async def command(
    ws: WebsocketCommunicator,
    kind: str,
    *,
    id: str | None = None,
    pushed: list[Any] | None = None,
    **fields: Any,
) -> dict[str, Any]:
    """Send one game command (a fresh id unless given) and return its result or error."""
    await ws.send_json_to({"type": kind, "id": id or next_id(), **fields})
    return await answer(ws, pushed)


def world() -> dict[str, Any]:
    """What a refused message must not change: events, rounds, balances, journal entries."""
    from casino.eventstore.models import StoredEvent
    from casino.models import Round
    from ledger.models import AccountBalance, JournalEntry

    return {
        "events": StoredEvent.objects.count(),
        "rounds": sorted(Round.objects.values_list("id", "version", "status")),
        "balances": sorted(AccountBalance.objects.values_list("account_id", "balance")),
        "entries": JournalEntry.objects.count(),
    }


def seated_table(ruleset: str, seats: int, *users: Any, stake: int = 1_000_000) -> Any:
    """A shared table with `users` seated in order."""
    from casino.models import Table
    from casino.tables import services as tables

    if ruleset == "duel":
        table = tables.table_add(
            Table(name="d", ruleset="duel", min_bet=stake, max_bet=stake, stake=stake, seats=seats)
        )
    else:
        table = tables.table_add(
            Table(name="dc", ruleset=ruleset, min_bet=500_000, max_bet=10**9, seats=seats)
        )
    for user in users:
        tables.seat_take(table=table, user=user)
    return table


async def send_frame(ws: WebsocketCommunicator, frame: str | bytes) -> None:
    """One raw frame, text or binary (empty ones too, which `send_to` refuses)."""
    if isinstance(frame, bytes):
        await ws.send_input({"type": "websocket.receive", "bytes": frame})
    else:
        await ws.send_input({"type": "websocket.receive", "text": frame})
