"""`manage.py serve --workers N`: several server processes on one port, stopped together."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import yaml
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from casino.management.commands.serve import Command

ROOT = Path(settings.BASE_DIR)


def test_several_workers_need_a_shared_channel_layer(settings) -> None:
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    with pytest.raises(CommandError, match="REDIS_URL"):
        call_command("serve", "--workers", "2", "--port", "1")


def test_workers_must_be_positive() -> None:
    with pytest.raises(CommandError, match="at least 1"):
        call_command("serve", "--workers", "0", "--port", "1")


def test_compose_web_serves_with_options_the_command_accepts() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    script = " ".join(compose["services"]["web"]["command"])
    words = script.split("manage.py serve", 1)[1].split("&&")[0].split()
    options = Command().create_parser("manage.py", "serve").parse_args(words)
    assert (options.host, options.port) == ("0.0.0.0", 8000)
    # Several processes share WebSocket groups only through Redis, which compose provides.
    assert options.workers >= 1
    assert options.workers == 1 or "REDIS_URL=redis://" in (ROOT / ".env.example").read_text()


def _children(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.add(int(entry.name))
    return found


@pytest.mark.redis
@pytest.mark.slow
def test_two_workers_answer_on_one_port_and_stop_together(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    database = connection.settings_dict
    env = dict(os.environ)
    if database["ENGINE"].endswith("postgresql"):
        # The server uses the test database (the real one may not be migrated).
        env["DATABASE_URL"] = (
            f"postgres://{database['USER']}@{database['HOST']}:{database['PORT']}/"
            f"{database['NAME']}"
        )
    log = (tmp_path / "serve.log").open("wb")
    server = subprocess.Popen(
        [sys.executable, "manage.py", "serve", "--port", str(port), "--workers", "2"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 90
        statuses: list[int] = []
        while time.monotonic() < deadline and len(statuses) < 6:
            try:
                answer = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=10)
                statuses.append(answer.status_code)
            except httpx.HTTPError:
                time.sleep(0.3)
        workers = _children(server.pid)
        assert statuses == [200] * 6, (tmp_path / "serve.log").read_text()
        assert len(workers) == 2
    finally:
        server.send_signal(signal.SIGTERM)
        code = server.wait(timeout=60)
    assert code == 0
    assert not [pid for pid in workers if Path(f"/proc/{pid}").exists()]


def test_daphne_requests_leave_post_bodies_to_django() -> None:
    """Twisted's form parsing (an email-package parse of every POST's Content-Type) is off
    for daphne's requests: the body reaches the application raw, as it always did."""
    from daphne.http_protocol import WebRequest
    from twisted.web.test.requesthelper import DummyChannel

    from casino.management.commands.serve import skip_form_parsing

    class Server:
        def protocol_connected(self, request: object) -> None:
            pass

    channel = DummyChannel()
    channel.factory = type("Factory", (), {"server": Server()})()  # type: ignore[attr-defined]
    skip_form_parsing()
    skip_form_parsing()  # once is enough: a second call does not wrap it again
    request = WebRequest(channel)
    assert request._parsePOSTFormSubmission is False
