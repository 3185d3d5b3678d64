"""Real faults with real services: our own Redis, server, worker and beat processes.

Every process here is started by these fixtures and stopped by its PID. Redis is a private
`redis-server` on a free port (never the shared one: other engineers and CI use it), so it
can be restarted and its queues and groups belong to these tests alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from rest_framework.authtoken.models import Token

from casino.client.cli import Feed, feed_url
from tests.api.conftest import fast_passwords, stack  # noqa: F401 (fixtures)
from tests.e2e.conftest import ROOT, base_env, free_port

# What a test against real servers, a real worker and its own Redis needs (CI's second pass).
REAL_SERVICES = [
    pytest.mark.postgres,
    pytest.mark.redis,
    pytest.mark.worker,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]

HOOKED_SERVE = Path(__file__).with_name("hooked_serve.py")


def wait_until(predicate: Any, timeout: float, what: str, proc: Any = None) -> Any:
    """Poll a real subprocess's effect until `predicate()` is truthy, or fail after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"{what}: the process exited with {proc.returncode}")
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s")
        time.sleep(0.1)  # polling a subprocess with a deadline


def stop(proc: subprocess.Popen[bytes] | None, sig: int = signal.SIGTERM) -> None:
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(sig)
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=5)


@dataclass
class OwnRedis:
    """A private redis-server (no persistence): a restart loses every key, like a crash."""

    port: int
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [
                *("redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""),
                *("--appendonly", "no", "--daemonize", "no", "--loglevel", "warning"),
            ],
            stdout=subprocess.DEVNULL,
        )
        wait_until(self.ping, 10, "redis-server answers PING", self.proc)

    def ping(self) -> bool:
        import redis

        try:
            return bool(redis.Redis(port=self.port, socket_timeout=0.5).ping())
        except redis.RedisError:
            return False

    def kill(self) -> None:
        stop(self.proc, signal.SIGKILL)


@pytest.fixture
def own_redis() -> Iterator[OwnRedis]:
    server = OwnRedis(port=free_port())
    server.start()
    try:
        yield server
    finally:
        server.kill()


@dataclass
class Services:
    """Subprocesses of the product (server, worker, beat) on the test database and own Redis."""

    env: dict[str, str]
    tmp: Path
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def _spawn(self, args: list[str], log: str) -> subprocess.Popen[bytes]:
        out = open(self.tmp / log, "ab")  # noqa: SIM115 (closed with the process)
        proc = subprocess.Popen(args, cwd=ROOT, env=self.env, stdout=out, stderr=out)
        out.close()
        self.procs.append(proc)
        return proc

    def log(self, name: str) -> str:
        path = self.tmp / name
        return path.read_text(errors="replace")[-4000:] if path.exists() else ""

    def server(
        self, *, hooked: bool = False, port: int | None = None
    ) -> tuple[subprocess.Popen[bytes], str]:
        """`manage.py serve` (or the same command behind test-only pause points)."""
        port = port or free_port()
        script = [str(HOOKED_SERVE)] if hooked else ["manage.py", "serve"]
        proc = self._spawn([sys.executable, *script, "--port", str(port)], "serve.log")
        url = f"http://127.0.0.1:{port}"

        def healthy() -> bool:
            try:
                return httpx.get(f"{url}/healthz", timeout=2).status_code == 200
            except httpx.HTTPError:
                return False

        wait_until(healthy, 60, f"serve on {url} answers /healthz", proc)
        return proc, url

    def worker(self) -> subprocess.Popen[bytes]:
        proc = self._spawn(
            [
                *(sys.executable, "-m", "celery", "-A", "casino", "worker", "--pool", "solo"),
                *("--loglevel", "WARNING", "--without-gossip", "--without-mingle"),
                *("--without-heartbeat", "-n", f"faults-{len(self.procs)}@%h"),
            ],
            "worker.log",
        )
        return proc

    def beat(self) -> subprocess.Popen[bytes]:
        return self._spawn(
            [
                *(sys.executable, "-m", "celery", "-A", "casino", "beat", "--loglevel", "WARNING"),
                *("--schedule", str(self.tmp / "beat-schedule")),
            ],
            "beat.log",
        )

    def stop_all(self) -> None:
        # The test is over: nothing of theirs is still checked, so no graceful shutdown.
        for proc in reversed(self.procs):
            stop(proc, signal.SIGKILL)


def test_database_url() -> str:
    from django.conf import settings
    from django.db import connection

    db = settings.DATABASES["default"]
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    return (
        f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/"
        f"{connection.settings_dict['NAME']}"
    )


test_database_url.__test__ = False  # type: ignore[attr-defined]


@pytest.fixture
def services(transactional_db: None, own_redis: OwnRedis, tmp_path: Path) -> Iterator[Services]:
    env = base_env(
        DATABASE_URL=test_database_url(),
        REDIS_URL=own_redis.url,
        FAULT_DIR=str(tmp_path),
        THROTTLE_MONEY="100000/min",
        THROTTLE_LOGIN="100000/min",
        DB_POOL_MIN="1",
        DB_POOL_MAX="8",
    )
    running = Services(env=env, tmp=tmp_path)
    try:
        yield running
    finally:
        running.stop_all()


def assert_consistent(round_ids: list[str]) -> None:
    """No partial write: ledger reconciles, every round audits, replay equals projection."""
    from casino.rounds.audit import audit
    from casino.rounds.projections import rebuild_all
    from ledger.reconcile import ledger_reconcile

    report = ledger_reconcile()
    assert report.ok, report.problems
    audits = audit(round_ids)
    assert [(a.round_id, a.problems) for a in audits if not a.ok] == []
    rebuilt = rebuild_all(write=False)
    assert rebuilt["differences"] == 0, rebuilt["problems"]


class Client:
    def __init__(self, url: str, token: str) -> None:
        self.http = httpx.Client(
            base_url=url, timeout=60, headers={"Authorization": f"Token {token}"}
        )

    def post(self, path: str, body: Any = None, *, key: str) -> httpx.Response:
        return self.http.post(path, json=body or {}, headers={"Idempotency-Key": key})

    def state(self, round_id: str) -> dict[str, Any]:
        return dict(self.http.get(f"/api/rounds/{round_id}/").json())


def login(url: str, user: Any) -> Client:
    """The token `POST /api/auth/login/` would return (no password hash to wait for)."""
    return Client(url, Token.objects.get_or_create(user=user)[0].key)


def deal_an_open_round(deal: Any) -> tuple[str, list[str]]:
    """Deal until a round is left open; its id, and the rounds the deal itself ended.

    The fair shoe is random here: a round the deal already ended (a blackjack, the dealer's
    peek) has nothing left to go on while a service is down, so the test deals again.
    `deal(key)` posts one deal with that idempotency key and returns the response.
    """
    ended: list[str] = []
    for attempt in range(10):
        dealt = deal(f"deal-{attempt}")
        assert dealt.status_code == 200, dealt.text
        if dealt.json()["status"] == "open":
            return str(dealt.json()["round_id"]), ended
        ended.append(str(dealt.json()["round_id"]))
    raise AssertionError("ten rounds in a row ended at the deal")


@contextlib.contextmanager
def following(url: str, table: int, token: str) -> Iterator[Feed]:
    """Run a client Feed on its own event loop thread (the test thread stays sync, for the ORM)."""
    ws_url, origin = feed_url(url, table, token)
    feed = Feed(url=ws_url, origin=origin)
    loop = asyncio.new_event_loop()
    task: dict[str, asyncio.Task[None]] = {}

    def run() -> None:
        asyncio.set_event_loop(loop)
        task["feed"] = loop.create_task(feed.run(lambda message: None))
        with contextlib.suppress(asyncio.CancelledError):
            loop.run_until_complete(task["feed"])

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        wait_until(feed.connected.is_set, 30, "the client's socket is open")
        yield feed
    finally:
        loop.call_soon_threadsafe(task["feed"].cancel)
        thread.join(10)
        loop.close()
