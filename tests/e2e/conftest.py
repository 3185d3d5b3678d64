"""A real `manage.py serve` in a subprocess, for the playing client and WebSocket e2e tests."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def manage(env: dict[str, str], *args: str) -> None:
    subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True, timeout=300)


def served(env: dict[str, str]) -> Iterator[str]:
    """Start `manage.py serve` with `env`; yield its URL once /healthz answers.

    The server's output goes to a temporary file, never to an unread pipe: a busy test
    (hundreds of sockets, an access-log line each) would fill a pipe's 64 KiB and block it.
    """
    port = free_port()
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(
            [sys.executable, "manage.py", "serve", "--port", str(port)],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )

        def output() -> str:
            log.seek(0)
            return log.read().decode(errors="replace")

        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while True:
                if proc.poll() is not None:
                    raise RuntimeError(f"serve exited:\n{output()}")
                try:
                    if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError(f"serve did not answer /healthz within 60 s:\n{output()}")
                time.sleep(0.2)  # readiness polling of a subprocess, not a test timing assumption
            yield url
        finally:
            proc.terminate()
            proc.wait(timeout=15)


def base_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(DUEL_LOBBY_MS="1000", LOG_LEVEL="WARNING", **extra)
    return env


def postgres_url() -> str:
    """The URL of the test database a `postgres` test runs on, for the processes it starts."""
    from django.conf import settings  # the test database exists inside the test only
    from django.db import connection

    db = settings.DATABASES["default"]
    return (
        f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/"
        f"{connection.settings_dict['NAME']}"
    )
