"""WebSocket fan-out: `python -m bench websocket [--quick]`.

Starts `manage.py serve` (BENCH_ENDPOINTS=1) on the configured database and channel layer and,
in the same run against the same server, with the same number of clients N:

- `bare_fanout`: one `group_send` of a timestamped message to N sockets on `/ws/bench/`
  (`casino.live.consumers.BenchConsumer`), publish-to-receive p50/p99 (the anchor);
- `game`: N spectators on a `duel_classic` table while one player plays rounds over REST;
  publish-to-receive p50/p99 of the real round messages (`published_at` is stamped when the
  publisher builds the message, after commit), messages received and events lost;
- `echo` and `table_ping`: the round trip of one client's frame on the bare echo consumer and
  of a `ping` on a table socket (the socket's own floor, no fan-out).

The socket, fan-out and game helpers are `bench/api.py`'s (shared, not copied): `bench api`
reports the same fan-out figures as part of its load test; this module isolates them.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import time
from typing import Any

import websockets

from bench.api import _fanout, _pct, _prepare, _serve, _spectated, _wait_up


def _origin(url: str) -> str:
    """The origin a page of this server sends (the port counts: casino.routing)."""
    return "http" + url[2:].split("/ws/", 1)[0]


async def _round_trips(url: str, frame: str, expect: str, count: int) -> list[float]:
    """`count` sequential round trips of `frame` on one socket (first answer of type `expect`)."""
    latencies: list[float] = []
    async with websockets.connect(url, origin=_origin(url), open_timeout=30) as ws:  # type: ignore[arg-type]
        for _ in range(count):
            started = time.perf_counter()
            await ws.send(frame)
            while json.loads(await asyncio.wait_for(ws.recv(), timeout=30)).get("type") != expect:
                pass
            latencies.append(time.perf_counter() - started)
    return latencies


async def _measure(base: str, token: str, table: str, quick: bool) -> dict[str, Any]:
    clients = 50 if quick else 200
    sends = 10 if quick else 30
    rounds = 2 if quick else 10
    trips = 50 if quick else 300
    ws_base = base.replace("http", "ws")
    await _wait_up(base)
    out: dict[str, Any] = {"clients": clients}
    echo = await _round_trips(f"{ws_base}/ws/bench/", '{"type": "echo"}', "echo", trips)
    ping = await _round_trips(f"{ws_base}/ws/tables/{table}/", '{"type": "ping"}', "pong", trips)
    out.update(
        {
            "echo_rtt_p50_ms": _pct(echo, 0.5),
            "echo_rtt_p99_ms": _pct(echo, 0.99),
            "table_ping_rtt_p50_ms": _pct(ping, 0.5),
            "table_ping_rtt_p99_ms": _pct(ping, 0.99),
        }
    )
    fanned: Any = await _fanout(base, clients, sends, base)  # base: the page's origin
    # bench/api's _fanout returns the latencies, or (latencies, messages that never came)
    fan, missing = fanned if isinstance(fanned, tuple) else (fanned, None)
    out.update(
        {
            "bare_fanout_messages": len(fan),
            "bare_fanout_missing": missing,
            "bare_fanout_p50_ms": _pct(fan, 0.5),
            "bare_fanout_p99_ms": _pct(fan, 0.99),
        }
    )
    game = await _spectated(base, token, table, clients, rounds, base)
    out.update(
        {
            "game_rounds": rounds,
            "game_messages": game["ws_messages"],
            "game_p50_ms": game["ws_p50_ms"],
            "game_p99_ms": game["ws_p99_ms"],
            "game_events_lost": game["ws_lost"],
        }
    )
    return out


def run(quick: bool) -> dict[str, Any]:
    """Both fan-outs against one served process; figures first, then the conditions."""
    logging.getLogger("httpx").setLevel(logging.WARNING)
    tokens, table = _prepare(1)
    # Django is configured by this benchmark first; these need it
    from django.conf import settings

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    load_before = round(os.getloadavg()[0], 2)
    cpu_before = time.process_time()
    server = _serve(port, 1)  # one process: the in-memory layer cannot span processes
    try:
        figures = asyncio.run(_measure(f"http://127.0.0.1:{port}", tokens[0], table, quick))
    finally:
        server.terminate()
        server.wait(timeout=30)
    p99, anchor = figures["game_p99_ms"], figures["bare_fanout_p99_ms"]
    figures["game_p99_over_bare_fanout_p99"] = round(p99 / anchor, 2) if p99 and anchor else None
    figures["target_game_p99_le_1_5x_bare_fanout"] = bool(p99 and anchor and p99 <= 1.5 * anchor)
    figures["target_events_lost_0"] = figures["game_events_lost"] == 0
    figures["conditions"] = {
        "database": settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1],
        "channel_layer": settings.CHANNEL_LAYERS["default"]["BACKEND"].rsplit(".", 1)[-1],
        "server": "manage.py serve (daphne), 1 process",
        "load_generator": "this process (asyncio + websockets + httpx), same machine",
        "cpu_count": os.cpu_count(),
        "load_avg_1m_before": load_before,
        "load_avg_1m_after": round(os.getloadavg()[0], 2),
        "generator_cpu_s": round(time.process_time() - cpu_before, 2),
    }
    return figures
