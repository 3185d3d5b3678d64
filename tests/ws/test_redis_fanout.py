"""200 WebSocket clients through channels-redis on a real server (issue 7, "Known traps").

redis-py 8 under channels-redis 4.3 dropped clients with close 1011 when its 5 s socket
timeout met channels-redis's 5 s blocking read, and its async pool raised past 100
connections, failing handshakes under 200 clients. casino/settings.py sets `socket_timeout:
None` and `max_connections: 1000`; this test proves it: `manage.py serve` on the test database
and Redis, 200 spectators, a player playing two rounds over the socket with an idle gap longer
than the blocking read in between, and every spectator must get every version exactly once,
in the same messages as every other spectator (no gap refilled from the event store), with no
socket closed.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets

from casino.client.cli import banked_move
from casino.engine.rules import RULESETS
from tests.e2e.conftest import ROOT, base_env, free_port

CLIENTS = 200
IDLE_S = 6.5  # longer than channels-redis's 5 s blocking read (and redis-py's old timeout)


def _origin(url: str) -> str:
    """The page's origin a browser would send: the server's own, port included."""
    return "http" + url[2:].split("/ws/", 1)[0]


async def _open(url: str, count: int) -> list[Any]:
    gate = asyncio.Semaphore(20)  # 20 handshakes at a time; a failed handshake fails the test

    async def one() -> Any:
        async with gate:
            return await websockets.connect(url, origin=_origin(url), open_timeout=30)  # type: ignore[arg-type]

    return list(await asyncio.gather(*(one() for _ in range(count))))


async def _play(ws: Any, me: str, round_no: int) -> tuple[str, int]:
    """One duel_classic round over the socket's commands; (round id, final version)."""
    rules = RULESETS["duel_classic"]
    views: dict[str, Any] = {}
    n = 0

    async def send(kind: str, **fields: Any) -> dict[str, Any]:
        nonlocal n
        n += 1
        await ws.send(json.dumps({"type": kind, "id": f"r{round_no}-{n}", **fields}))
        while True:
            msg = json.loads(await asyncio.wait_for(ws.recv(), timeout=30))
            if msg["type"] == "round":
                views[msg["round_id"]] = msg
            elif msg["type"] in ("result", "error"):
                assert msg["type"] == "result", msg
                assert msg["id"] == f"r{round_no}-{n}"
                return dict(msg["round"])

    state = await send("deal", bets=["1.00"])
    round_id = state["round_id"]
    while state["status"] == "open":
        move = banked_move(state["view"], me, rules)
        if move is None:  # the dealer acts within the same command; this is not expected
            raise AssertionError(f"no move for an open round: {state['view']['phase']}")
        state = await send(move[0].replace("-", "_"), round_id=round_id, **move[1])
    return round_id, int(state["version"])


def _group_size(table: int) -> int:
    """How many channels Redis holds in the table's group (channels-redis's sorted set)."""
    import redis
    from django.conf import settings

    client = redis.Redis.from_url(str(settings.REDIS_URL))
    return int(client.zcard(f"asgi:group:table.{table}"))


async def _scenario(base: str, table: int, token: str, me: str) -> dict[str, Any]:
    ws_url = base.replace("http", "ws") + f"/ws/tables/{table}/"
    started = time.monotonic()
    spectators = await _open(ws_url, CLIENTS)
    connected_s = time.monotonic() - started
    got: list[list[tuple[str, int, int]]] = [[] for _ in spectators]
    others: list[list[Any]] = [[] for _ in spectators]

    async def read(i: int, ws: Any) -> None:
        async for raw in ws:
            msg = json.loads(raw)
            if msg["type"] == "round":
                got[i].append((msg["round_id"], msg["from_version"], msg["version"]))
            elif msg["type"] != "hello":
                others[i].append(msg)

    readers = [asyncio.create_task(read(i, ws)) for i, ws in enumerate(spectators)]
    player = (await _open(f"{ws_url}?token={token}", 1))[0]
    assert json.loads(await player.recv())["role"] == "player"

    async def all_reached(round_id: str, version: int) -> None:
        deadline = time.monotonic() + 30
        while not all(g and g[-1][0] == round_id and g[-1][2] >= version for g in got):
            if time.monotonic() > deadline:
                lagging = [g[-1] if g else None for g in got if not g or g[-1][2] < version]
                codes = sorted({str(ws.close_code) for ws in spectators})
                raise AssertionError(
                    f"{len(lagging)} spectators never got {round_id} v{version}: {lagging[:3]}"
                    f"; spectator close codes {codes}; members of the table's group in Redis: "
                    f"{_group_size(table)} (0: the group was wiped, e.g. a FLUSHDB of this db)"
                )
            await asyncio.sleep(0.05)

    finals = []
    for round_no in (1, 2):
        round_id, version = await _play(player, me, round_no)
        finals.append((round_id, version))
        await all_reached(round_id, version)
        if round_no == 1:
            await asyncio.sleep(IDLE_S)  # every socket idle across the blocking-read boundary
    codes = [ws.close_code for ws in [*spectators, player]]
    for task in readers:
        task.cancel()
    for ws in [*spectators, player]:
        await ws.close()
    return {
        "finals": finals,
        "got": got,
        "others": others,
        "codes": codes,
        "connected_s": connected_s,
    }


@contextmanager
def serving(env: dict[str, str], log: Path) -> Iterator[str]:
    """`manage.py serve` with its output in `log` (read back when the test fails)."""
    port = free_port()
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "manage.py", "serve", "--port", str(port)],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while True:
                assert proc.poll() is None, log.read_text()
                try:
                    if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                assert time.monotonic() < deadline, "serve did not answer /healthz in 60 s"
                time.sleep(0.2)  # readiness polling of a subprocess
            yield url
        finally:
            proc.terminate()
            proc.wait(timeout=15)


@pytest.mark.slow
@pytest.mark.postgres
@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_200_clients_through_channels_redis_lose_nothing_across_the_blocking_read(
    tmp_path: Path,
) -> None:
    from django.conf import settings
    from django.db import connection
    from rest_framework.authtoken.models import Token

    from tests.api.conftest import make_player
    from tests.ws.common import seated_table

    host = settings.CHANNEL_LAYERS["default"]["CONFIG"]["hosts"][0]
    assert host["socket_timeout"] is None and host["max_connections"] >= 1000
    player = make_player()
    token = Token.objects.create(user=player).key
    table = seated_table("duel_classic", 1, player)
    db = settings.DATABASES["default"]
    env = base_env(
        DATABASE_URL=f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/"
        f"{connection.settings_dict['NAME']}",
        REDIS_URL=str(settings.REDIS_URL),
        THROTTLE_MONEY="100000/min",
    )
    log = tmp_path / "serve.log"
    with serving(env, log) as url:
        try:
            out = asyncio.run(_scenario(url, table.pk, token, str(player.pk)))
        except BaseException:  # the server's side of the failure
            print("\n".join(line for line in log.read_text().splitlines() if "WS" not in line))
            raise
    assert "Traceback" not in log.read_text(), log.read_text()[-5000:]
    assert out["codes"] == [None] * (CLIENTS + 1)  # nobody closed: no 1011, no 1006
    assert out["others"] == [[]] * CLIENTS  # no error message to any spectator
    first = out["got"][0]
    for round_id, final in out["finals"]:
        covered = [v for r, lo, hi in first if r == round_id for v in range(lo, hi + 1)]
        assert covered == list(range(1, final + 1)), (round_id, first)
    # Every spectator got the very same messages: nothing lost, nothing refilled or repeated.
    assert all(g == first for g in out["got"]), [len(g) for g in out["got"]]
    print(f"200 clients connected in {out['connected_s']:.1f} s; {len(first)} messages each")
