"""The WebSocket handshake: the Origin's port counts, and a bad token is refused (issue 21).

- channels' AllowedHostsOriginValidator compares the Origin's host name with ALLOWED_HOSTS
  and ignores its port, so a page served at `http://localhost:9999` could open a socket to
  the game at `localhost:8000` with the visitor's session. The Origin must now be this site
  exactly as Django's CSRF check has it (scheme, host and port of the Host the handshake was
  sent to) or one of CSRF_TRUSTED_ORIGINS.
- A bad `?token=` (or `Authorization: Token`) made an anonymous spectator. It is refused as
  REST refuses it (401): the handshake is accepted and at once closed with 4401, so the client
  sees why.
"""

from __future__ import annotations

from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator

from casino.live.consumers import CLOSE_BAD_TOKEN
from casino.routing import websocket_application
from tests.api.conftest import PASSWORD, make_player
from tests.ws.common import run, seated_table

pytestmark = pytest.mark.django_db(transaction=True)


async def handshake(path: str, headers: list[tuple[bytes, bytes]]) -> tuple[bool, Any, Any]:
    ws = WebsocketCommunicator(websocket_application(), path, headers=headers)
    accepted, code = await ws.connect(timeout=10)
    return accepted, code, ws


def origin_cases() -> list[tuple[str, str | None, bool]]:
    return [
        # (Origin, Host, accepted)
        ("http://localhost:8000", "localhost:8000", True),
        ("http://localhost:9999", "localhost:8000", False),  # another port: another site
        ("http://localhost", "localhost:8000", False),
        ("https://localhost:8000", "localhost:8000", False),  # another scheme
        ("http://evil.example:8000", "localhost:8000", False),
        ("http://localhost:8000.evil.example", "localhost:8000", False),
        ("null", "localhost:8000", False),
        ("http://127.0.0.1:8000", "127.0.0.1:8000", True),
        ("http://localhost", "localhost", True),
        ("http://evil.example:8000", "evil.example:8000", False),  # a Host not allowed
        ("http://testserver", None, True),  # no Host header (the test communicator)
        ("http://testserver:9999", None, False),
    ]


@pytest.mark.parametrize(("origin", "host", "accepted"), origin_cases())
def test_the_origin_must_be_this_site_port_included(
    origin: str, host: str | None, accepted: bool
) -> None:
    table = seated_table("duel_classic", 2)
    headers = [(b"origin", origin.encode())]
    if host is not None:
        headers.append((b"host", host.encode()))

    async def scenario() -> None:
        connected, code, ws = await handshake(f"/ws/tables/{table.pk}/", headers)
        assert connected is accepted, (origin, host, code)
        if connected:
            assert (await ws.receive_json_from(timeout=10))["type"] == "hello"
            await ws.disconnect()

    run(scenario)


def test_a_missing_origin_is_refused() -> None:
    table = seated_table("duel_classic", 2)

    async def scenario() -> None:
        connected, _, _ = await handshake(f"/ws/tables/{table.pk}/", [(b"host", b"localhost")])
        assert not connected

    run(scenario)


def test_a_trusted_origin_is_accepted(settings: Any) -> None:
    settings.CSRF_TRUSTED_ORIGINS = ["https://play.example", "https://*.casino.example"]
    table = seated_table("duel_classic", 2)

    async def scenario() -> None:
        for origin, accepted in (
            ("https://play.example", True),
            ("https://eu.casino.example", True),
            ("http://play.example", False),
            ("https://play.example:8443", False),
        ):
            connected, _, ws = await handshake(
                f"/ws/tables/{table.pk}/",
                [(b"origin", origin.encode()), (b"host", b"localhost:8000")],
            )
            assert connected is accepted, origin
            if connected:
                await ws.disconnect()

    run(scenario)


ORIGIN = [(b"origin", b"http://localhost:8000"), (b"host", b"localhost:8000")]


@pytest.mark.parametrize(
    ("query", "header"),
    [
        ("?token=not-a-token", None),
        ("?token=0123456789abcdef0123456789abcdef01234567", None),  # well formed, unknown
        ("?token=", None),
        (None, b"Token 0123456789abcdef0123456789abcdef01234567"),
        (None, b"Token "),
    ],
)
def test_a_bad_token_is_refused_with_4401(query: str | None, header: bytes | None) -> None:
    table = seated_table("duel_classic", 2)
    headers = list(ORIGIN)
    if header is not None:
        headers.append((b"authorization", header))

    async def scenario() -> None:
        connected, _, ws = await handshake(f"/ws/tables/{table.pk}/{query or ''}", headers)
        assert connected  # accepted, so that the close code reaches the client
        closed = await ws.receive_output(timeout=10)
        assert closed == {"type": "websocket.close", "code": CLOSE_BAD_TOKEN}
        assert await ws.receive_nothing(timeout=0.2)

    run(scenario)
    assert CLOSE_BAD_TOKEN == 4401


def test_a_good_token_and_no_token_still_connect() -> None:
    player = make_player()
    table = seated_table("duel_classic", 2, player)

    async def scenario() -> None:
        from rest_framework.test import APIClient

        def login() -> str:
            client = APIClient()
            answer = client.post(
                "/api/auth/login/",
                {"username": player.username, "password": PASSWORD},
                format="json",
            )
            return str(answer.json()["token"])

        token = await sync_to_async(login)()
        for path, role in (
            (f"/ws/tables/{table.pk}/?token={token}", "player"),
            (f"/ws/tables/{table.pk}/", "public"),
        ):
            connected, _, ws = await handshake(path, ORIGIN)
            assert connected
            hello = await ws.receive_json_from(timeout=10)
            assert hello["role"] == role
            await ws.disconnect()
        connected, _, ws = await handshake(
            f"/ws/tables/{table.pk}/", [*ORIGIN, (b"authorization", f"Token {token}".encode())]
        )
        assert connected and (await ws.receive_json_from(timeout=10))["role"] == "player"
        await ws.disconnect()

    run(scenario)
