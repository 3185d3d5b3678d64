"""Shared test setup.

Tests marked `postgres`, `redis` or `worker` need the real services. On the embedded
default they are skipped. CI's second pass sets REQUIRE_SERVICES=1: then a missing
service stops the run at once, and any skipped test fails the session.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

# The suite runs without a beacon: a shared table's round deals at once (the beacon's own tests
# switch to the local one). Django's settings are loaded before this file (pytest-django), so
# they are set in pytest_configure; the servers the tests start inherit the environment, and
# those with DEBUG off set BEACON=local themselves (BEACON=off refuses to start there).
os.environ["BEACON"] = "off"

SERVICE_MARKERS = ("postgres", "redis", "worker")


def pytest_configure(config: pytest.Config) -> None:
    from django.conf import settings  # pytest-django has configured Django by now

    settings.BEACON = "off"


_skipped: list[str] = []


def _services() -> dict[str, bool]:
    from django.conf import settings

    return {
        "postgres": settings.DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql",
        "redis": bool(settings.REDIS_URL),
        # Worker tests start their own worker process against the test database.
        "worker": bool(settings.REDIS_URL),
    }


def _required() -> bool:
    return os.environ.get("REQUIRE_SERVICES") == "1"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    available = _services()
    if _required():
        missing = [name for name, present in available.items() if not present]
        if missing:
            raise pytest.UsageError(f"REQUIRE_SERVICES=1 but not available: {', '.join(missing)}")
        return
    for item in items:
        for name in SERVICE_MARKERS:
            if item.get_closest_marker(name) and not available[name]:
                item.add_marker(pytest.mark.skip(reason=f"needs {name} (CI's second pass runs it)"))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped:
        _skipped.append(report.nodeid)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _required() and _skipped:
        print(f"\nREQUIRE_SERVICES=1 but {len(_skipped)} test(s) were skipped:")
        for nodeid in _skipped:
            print(f"  {nodeid}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture
def celery_worker_process(transactional_db: None) -> Iterator[subprocess.Popen[bytes]]:
    """A real Celery worker process, pointed at the test database, for `worker` tests."""
    from django.conf import settings
    from django.db import connection

    from casino.celery import app

    env = dict(os.environ)
    db = settings.DATABASES["default"]
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    env["DATABASE_URL"] = (
        f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/"
        f"{connection.settings_dict['NAME']}"
    )
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "casino",
            "worker",
            "--pool",
            "solo",
            "--loglevel",
            "WARNING",
            "--without-gossip",
            "--without-mingle",
        ],
        env=env,
        cwd=str(settings.BASE_DIR),
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if app.control.ping(timeout=0.5):
                break
            if proc.poll() is not None:
                raise RuntimeError("the Celery worker exited during startup")
        else:
            raise RuntimeError("the Celery worker did not answer a ping within 30 s")
        yield proc
    finally:
        proc.terminate()
        proc.wait(timeout=15)


@pytest.fixture(autouse=True)
def _fresh_cache() -> Iterator[None]:
    """Each test starts with an empty cache: rate-limit counters never leak between tests.

    On Redis only the cache's own keys are deleted: `cache.clear()` is FLUSHDB, which would
    also wipe the channel layer's groups and the broker's queues living in the same database
    (a server or worker started by a test would silently stop receiving).
    """
    from django.conf import settings
    from django.core.cache import cache

    if settings.REDIS_URL:
        import redis

        client = redis.Redis.from_url(settings.REDIS_URL)
        try:
            keys = list(client.scan_iter(match=cache.make_key("*"), count=1000))
            if keys:
                client.delete(*keys)
        finally:
            client.close()
    else:
        cache.clear()
    yield


@pytest.fixture(autouse=True)
def _fresh_channel_layer() -> Iterator[None]:
    """Each test gets its own channel layer instance. channels-redis keeps per-channel asyncio
    locks on the instance, bound to the event loop that first used them: one left held by a
    test's cancelled receive broke every later WebSocket test with "bound to a different event
    loop" (seen once in CI's second pass)."""
    from channels.layers import channel_layers

    channel_layers.backends.clear()
    yield
    channel_layers.backends.clear()
