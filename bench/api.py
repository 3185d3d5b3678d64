"""Live tables under load: `python -m bench api [--quick]`.

Starts `manage.py serve` (BENCH_ENDPOINTS=1) on the configured database and channel layer
(PostgreSQL + Redis when DATABASE_URL / REDIS_URL are set), with `--workers` from
SERVE_WORKERS (default 1; more than one needs Redis), and drives it from this
process with asyncio, httpx and websockets. The load generator shares the machine with the
server, so every figure comes with anchors measured in the same run on the same server:

- `bare_drf`: GET of a DRF view that does nothing;
- `bare_tx`: POST that locks one row, updates it and inserts one row in one transaction
  (measured before and after the game; `bare_tx_rps` is the mean of the two);
- `bare_fanout`: one group_send to N sockets (publish-to-receive latency);
- `game`: N players each playing `classic` on their personal table over REST (rounds/s,
  request p50/p99), and N spectators on a `duel_classic` table while a player plays
  (publish-to-receive latency of real round messages, and events lost: a message some socket
  got that another socket still lacks 30 s after the last round).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, TypeVar

import httpx
import websockets

from bench.engine import loop_ns
from casino.client.cli import banked_move

ROOT = Path(__file__).resolve().parent.parent
T = TypeVar("T")


LOST_AFTER_S = 30.0  # a round message not received this long after the last round is lost


async def _phase(name: str, work: Awaitable[T]) -> T:
    """Run one phase of the measurement; a timeout names the phase it happened in."""
    try:
        return await work
    except TimeoutError as exc:
        raise TimeoutError(f"{name}: timed out ({exc!r})") from exc


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(len(ordered) * q))] * 1000, 2)


def _figures(latencies: list[float], seconds: float, prefix: str) -> dict[str, Any]:
    return {
        f"{prefix}_rps": round(len(latencies) / seconds, 1),
        f"{prefix}_p50_ms": _pct(latencies, 0.5),
        f"{prefix}_p99_ms": _pct(latencies, 0.99),
    }


def _prepare(players: int) -> tuple[list[str], str]:
    """Migrate, then bench players (tokens, funds), the anchor row and a shared table."""
    # Django is configured by this benchmark first; these need it
    import django

    django.setup()
    # Django is configured by this benchmark first; these need it
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from rest_framework.authtoken.models import Token

    from casino.models import Table
    from casino.tables.services import demo_table, table_add
    from ledger.services import wallet_deposit

    call_command("migrate", verbosity=0)
    if not Table.objects.filter(name="bench anchor").exists():  # each table with its chain
        table_add(Table(name="bench anchor", ruleset="classic", min_bet=100_000, max_bet=10**9))
    tokens = []
    for i in range(players):
        user, _ = get_user_model().objects.get_or_create(username=f"bench{i}")
        wallet_deposit(
            user=user, amount_micro=10_000 * 10**6, idempotency_key=f"bench-{uuid.uuid4().hex}"
        )
        tokens.append(Token.objects.get_or_create(user=user)[0].key)
    shared = table_add(
        Table(
            name=f"bench {uuid.uuid4().hex[:6]}",
            ruleset="duel_classic",
            min_bet=500_000,
            max_bet=10**9,
            seats=1,
        )
    )
    demo_table("classic")
    return tokens, str(shared.pk)


def server_workers() -> int:
    """Server processes: SERVE_WORKERS if set, else 1 (docs/performance.md: on two shared
    cores a second process barely moves the ratio and makes p99 less steady). Every figure
    of a run, anchors included, is served by the same processes."""
    return max(1, int(os.environ.get("SERVE_WORKERS") or 1))


def served_env() -> dict[str, str]:
    """The served process's environment: production settings (DEBUG off: no per-query debug
    cursor), with the secrets this process seeded the database under, plain HTTP on loopback,
    the anchor endpoints, and rate limits out of the load generator's way (it measures the
    server, not the throttle; the throttle's check still runs on every game POST)."""
    # Django is configured by this benchmark first; these need it
    from django.conf import settings

    return {
        **os.environ,
        "DEBUG": "0",
        "SECURE_SSL_REDIRECT": "0",
        "SECRET_KEY": settings.SECRET_KEY,
        "SEED_ENCRYPTION_KEYS": ",".join(settings.SEED_ENCRYPTION_KEYS),
        "RECEIPT_SIGNING_KEY": settings.RECEIPT_SIGNING_KEY,
        "LOG_SIGNING_KEY": settings.LOG_SIGNING_KEY,
        # No network here: the operator-run beacon, allowed with DEBUG off for the benchmark.
        "BEACON": "local",
        "ALLOW_LOCAL_BEACON": "1",
        "LOCAL_BEACON_SEED": settings.LOCAL_BEACON_SEED or "bench local beacon",
        "BENCH_ENDPOINTS": "1",
        "LOG_LEVEL": "WARNING",
        "THROTTLE_LOGIN": "1000000/min",
        "THROTTLE_MONEY": "1000000/min",
    }


def _serve(port: int, workers: int) -> subprocess.Popen[bytes]:
    env = served_env()
    command = [sys.executable, "manage.py", "serve", "--port", str(port)]
    if workers > 1:
        command += ["--workers", str(workers)]
    return subprocess.Popen(
        command,
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


async def _wait_up(base: str) -> None:
    async with httpx.AsyncClient() as http:
        for _ in range(300):
            try:
                if (await http.get(f"{base}/healthz")).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            await asyncio.sleep(0.2)
    raise RuntimeError("serve did not come up")


async def _hammer(base: str, method: str, path: str, workers: int, seconds: float) -> list[float]:
    latencies: list[float] = []
    stop = time.perf_counter() + seconds

    async def worker() -> None:
        async with httpx.AsyncClient(base_url=base, timeout=30) as http:
            while time.perf_counter() < stop:
                started = time.perf_counter()
                response = await http.request(method, path)
                if response.status_code == 200:
                    latencies.append(time.perf_counter() - started)

    await asyncio.gather(*(worker() for _ in range(workers)))
    return latencies


async def _sockets(url: str, count: int, origin: str) -> list[Any]:
    """`count` open sockets, 20 handshakes at a time (a retried handshake is not measured)."""
    gate = asyncio.Semaphore(20)

    async def one() -> Any:
        async with gate:
            for attempt in range(5):
                try:
                    return await websockets.connect(url, origin=origin, open_timeout=60)  # type: ignore[arg-type]
                except (OSError, EOFError, websockets.exceptions.WebSocketException):
                    if attempt == 4:
                        raise
                    await asyncio.sleep(0.5)
        raise AssertionError("unreachable")

    return list(await asyncio.gather(*(one() for _ in range(count))))


async def _fanout(base: str, clients: int, sends: int, origin: str) -> tuple[list[float], int]:
    socks = await _sockets(base.replace("http", "ws") + "/ws/bench/", clients, origin)
    latencies: list[float] = []
    missing = [0]

    async def read(ws: Any) -> None:
        for got in range(sends):
            try:
                message = json.loads(await asyncio.wait_for(ws.recv(), timeout=30))
            except TimeoutError:  # counted, not fatal: the anchor reports what never came
                missing[0] += sends - got
                return
            latencies.append(time.time() - message["sent"])

    readers = [asyncio.create_task(read(ws)) for ws in socks]
    async with httpx.AsyncClient(base_url=base) as http:
        for _ in range(sends):
            await http.post("/api/bench/fanout/")
            await asyncio.sleep(0.1)
    await asyncio.gather(*readers)
    for ws in socks:
        await ws.close()
    return latencies, missing[0]


async def _play_classic(
    base: str, token: str, stop: float, latencies: list[float], at_least: int = 0
) -> int:
    # Django is configured by this benchmark first; these need it
    from casino.engine.rules import RULESETS

    rules = RULESETS["classic"]
    headers = {"Authorization": f"Token {token}"}
    rounds = 0
    async with httpx.AsyncClient(base_url=base, timeout=30, headers=headers) as http:

        async def call(method: str, path: str, body: Any = None) -> Any:
            started = time.perf_counter()
            extra = {"Idempotency-Key": uuid.uuid4().hex} if method == "POST" else {}
            response = await http.request(method, path, json=body, headers=extra)
            latencies.append(time.perf_counter() - started)
            if response.status_code >= 400:  # a throttle or error must not count as a round
                raise RuntimeError(f"{method} {path}: {response.status_code} {response.text[:200]}")
            return response.json()

        me = str((await call("GET", "/api/auth/me/"))["id"])
        table = (await call("POST", "/api/tables/personal/", {"ruleset": "classic"}))["id"]
        while rounds < at_least or time.perf_counter() < stop:
            state = await call("POST", f"/api/tables/{table}/deal/", {"bets": ["1.00"]})
            while state.get("status") == "open":
                move = banked_move(state["view"], me, rules)
                if move is None:
                    state = await call("GET", f"/api/rounds/{state['round_id']}/")
                    continue
                state = await call("POST", f"/api/rounds/{state['round_id']}/{move[0]}/", move[1])
            rounds += 1
    return rounds


async def _spectated(
    base: str, token: str, table: str, clients: int, rounds: int, origin: str
) -> dict[str, Any]:
    socks = await _sockets(base.replace("http", "ws") + f"/ws/tables/{table}/", clients, origin)
    received: list[set[tuple[str, int]]] = [set() for _ in socks]
    latencies: list[float] = []
    final: dict[str, int] = {}

    async def read(i: int, ws: Any) -> None:
        async for raw in ws:
            message = json.loads(raw)
            if message.get("type") == "round":
                received[i].add((message["round_id"], message["version"]))
                latencies.append(time.time() - message["published_at"])

    readers = [asyncio.create_task(read(i, ws)) for i, ws in enumerate(socks)]
    await asyncio.sleep(0.5)
    stop = time.perf_counter() + 3600
    async with httpx.AsyncClient(
        base_url=base, headers={"Authorization": f"Token {token}"}
    ) as http:
        await http.post(f"/api/tables/{table}/sit/", headers={"Idempotency-Key": uuid.uuid4().hex})
    for _ in range(rounds):
        await _play_table(base, token, table, final, stop)
    # The last messages are in flight: wait (up to LOST_AFTER_S) until every socket has every
    # message any socket got, and each round's final version; what is still missing is lost.
    last = {(round_id, version) for round_id, version in final.items()}
    deadline = time.perf_counter() + LOST_AFTER_S
    while time.perf_counter() < deadline:
        expected = set().union(last, *received)
        if all(got >= expected for got in received):
            break
        await asyncio.sleep(0.2)
    for task in readers:
        task.cancel()
    for ws in socks:
        await ws.close()
    expected = set().union(last, *received)
    lost = sum(len(expected - got) for got in received)
    return {
        "ws_p50_ms": _pct(latencies, 0.5),
        "ws_p99_ms": _pct(latencies, 0.99),
        "ws_messages": len(latencies),
        "ws_lost": lost,
    }


async def _play_table(
    base: str, token: str, table: str, final: dict[str, int], stop: float
) -> None:
    # Django is configured by this benchmark first; these need it
    from casino.engine.rules import RULESETS

    rules = RULESETS["duel_classic"]
    async with httpx.AsyncClient(
        base_url=base, timeout=30, headers={"Authorization": f"Token {token}"}
    ) as http:
        me = str((await http.get("/api/auth/me/")).json()["id"])
        key = {"Idempotency-Key": uuid.uuid4().hex}
        state = (
            await http.post(f"/api/tables/{table}/deal/", json={"bets": ["1.00"]}, headers=key)
        ).json()
        while state.get("status") == "open":
            move = banked_move(state["view"], me, rules)
            key = {"Idempotency-Key": uuid.uuid4().hex}
            if move is None:
                state = (await http.get(f"/api/rounds/{state['round_id']}/")).json()
                continue
            state = (
                await http.post(
                    f"/api/rounds/{state['round_id']}/{move[0]}/", json=move[1], headers=key
                )
            ).json()
        final[state["round_id"]] = state["version"]


async def _measure(base: str, tokens: list[str], table: str, quick: bool) -> dict[str, Any]:
    seconds = 3.0 if quick else 10.0
    clients = 50 if quick else 200
    origin = base  # a page of this server: its origin, port included (casino.routing)
    await _wait_up(base)
    out: dict[str, Any] = {}
    await _hammer(base, "GET", "/api/bench/ping/", 4, 1.0)  # warm up
    out.update(
        _figures(
            await _hammer(base, "GET", "/api/bench/ping/", len(tokens), seconds),
            seconds,
            "bare_drf",
        )
    )
    out.update(
        _figures(
            await _hammer(base, "POST", "/api/bench/tx/", len(tokens), seconds), seconds, "bare_tx"
        )
    )
    fan, fan_missing = await _phase(
        "bare fan-out", _fanout(base, clients, 10 if quick else 30, origin)
    )
    out.update(
        {
            "bare_fanout_clients": clients,
            "bare_fanout_missing": fan_missing,
            "bare_fanout_p50_ms": _pct(fan, 0.5),
            "bare_fanout_p99_ms": _pct(fan, 0.99),
        }
    )
    # Warm-up: each player's personal table, seed chain and first round are not timed.
    await _phase(
        "game warm-up",
        asyncio.gather(*(_play_classic(base, t, 0.0, [], at_least=1) for t in tokens)),
    )
    latencies: list[float] = []
    seconds = seconds * 2
    stop = time.perf_counter() + seconds
    started = time.perf_counter()
    rounds = await _phase(
        "game", asyncio.gather(*(_play_classic(base, t, stop, latencies) for t in tokens))
    )
    elapsed = time.perf_counter() - started
    # The anchor again after the game: the machine's load drifts, the ratio uses the mean.
    seconds = seconds / 2
    tx_before = out["bare_tx_rps"]
    tx_after = _figures(
        await _hammer(base, "POST", "/api/bench/tx/", len(tokens), seconds), seconds, "bare_tx"
    )
    out["bare_tx_rps_before_game"] = tx_before
    out["bare_tx_rps_after_game"] = tx_after["bare_tx_rps"]
    out["bare_tx_rps"] = round((tx_before + tx_after["bare_tx_rps"]) / 2, 1)
    out.update(
        {
            "game_players": len(tokens),
            "game_rounds": sum(rounds),
            "game_rounds_per_s": round(sum(rounds) / elapsed, 2),
            "game_request_p50_ms": _pct(latencies, 0.5),
            "game_request_p99_ms": _pct(latencies, 0.99),
            "game_requests_per_round": round(len(latencies) / max(1, sum(rounds)), 2),
        }
    )
    out["ws_clients"] = clients
    spectated = _spectated(base, tokens[0], table, clients, 3 if quick else 10, origin)
    out.update(await _phase("spectated table", spectated))
    return out


def run(quick: bool) -> dict[str, Any]:
    """Anchors and game figures against a served process (see the module docstring)."""
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one INFO line per request otherwise
    players = 8 if quick else 32
    tokens, table = _prepare(players)
    # Django is configured by this benchmark first; these need it
    from django.conf import settings

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    workers = server_workers()
    load_before = os.getloadavg()[0]
    loop_before = loop_ns()
    server = _serve(port, workers)
    try:
        figures = asyncio.run(_measure(f"http://127.0.0.1:{port}", tokens, table, quick))
    finally:
        server.terminate()
        server.wait(timeout=30)
    figures["database"] = settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1]
    figures["channel_layer"] = settings.CHANNEL_LAYERS["default"]["BACKEND"].rsplit(".", 1)[-1]
    figures["server_workers"] = workers
    figures["server_debug"] = False
    figures["cpu_count"] = os.cpu_count()
    figures["load_avg_1m_before"] = round(load_before, 2)
    figures["load_avg_1m"] = round(os.getloadavg()[0], 2)
    # How fast this Python runs now (bench.engine's measure): the host's speed has changed
    # 2-3x within a session here, and the ratio moves with it.
    figures["python_loop_ns_before"] = round(loop_before, 1)
    figures["python_loop_ns_after"] = round(loop_ns(), 1)
    figures["rounds_per_s_over_bare_tx_rps"] = round(
        figures["game_rounds_per_s"] / (figures["bare_tx_rps"] or 1), 3
    )
    figures["request_p99_over_bare_tx_p99"] = round(
        (figures["game_request_p99_ms"] or 0) / (figures["bare_tx_p99_ms"] or 1), 2
    )
    figures["targets"] = {
        "rounds_per_s >= bare_tx_rps/3": figures["game_rounds_per_s"] >= figures["bare_tx_rps"] / 3,
        "request_p99 <= 2x bare_tx_p99": (figures["game_request_p99_ms"] or 0)
        <= 2 * (figures["bare_tx_p99_ms"] or 0),
        "ws_p99 <= 1.5x bare_fanout_p99": (figures["ws_p99_ms"] or 0)
        <= 1.5 * (figures["bare_fanout_p99_ms"] or 0),
        "events_lost == 0": figures["ws_lost"] == 0,
    }
    return figures
