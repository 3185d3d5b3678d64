"""The playing client's table feed survives a server restart (the embedded default: SQLite).

`manage.py serve` is SIGKILLed under a connected `casino.client.cli.Feed`. While it is down a
`manage.py shell` process (another writer on the same database) lets the open round's timers
fire and deals the next round. The server comes back on the same port; the client, which
kept retrying, reconnects, sends `resume` with the last version it saw, and receives every
version it missed: the settled round version by version, the new round's current view.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import ROOT, base_env, free_port, manage
from tests.faults.conftest import Services, deal_an_open_round, following, wait_until

SETUP = """
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from casino.tables.services import table_personal
from ledger.services import wallet_deposit
user = get_user_model().objects.create_user(username="feeder", password="unused-pw-123")
wallet_deposit(user=user, amount_micro=100_000_000, idempotency_key="fund-feeder")
table = table_personal(user=user, ruleset="classic")
print(Token.objects.create(user=user).key, table.pk)
"""

WHILE_DOWN = """
import json
from django.contrib.auth import get_user_model
from casino.rounds import services
from casino.rounds import stream
from casino.models import Table
from casino.tables.services import table_deal
round_id = {round_id!r}
for _ in range(20):  # the round's own timers fire: insurance declined, the hand stood
    state = stream.round_state_for(round_id=round_id)
    if state.finished:
        break
    services.round_timeout(round_id=round_id, at_ms=state.deadline_ms)
user = get_user_model().objects.get(username="feeder")
second = table_deal(table=Table.objects.get(pk={table}), user=user, mode="bet", bets=[1_000_000])
print(json.dumps({{"second": second.round.id}}))
"""


def shell(env: dict[str, str], code: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip().splitlines()[-1]


def versions(url: str, token: str, round_id: str) -> set[int]:
    """Every version of the round, from the server (GET gives the latest)."""
    body = httpx.get(
        f"{url}/api/rounds/{round_id}/", headers={"Authorization": f"Token {token}"}, timeout=30
    ).json()
    return set(range(1, int(body["version"]) + 1))


def got(feed: Any, round_id: str) -> list[int]:
    ranges = [(f, t) for r, f, t in list(feed.received) if r == round_id]
    return [v for f, t in ranges for v in range(f, t + 1)]


@pytest.mark.slow
def test_the_client_reconnects_after_a_server_restart_and_resumes_what_it_missed(
    tmp_path: Path,
) -> None:
    env = base_env(DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}", FAULT_DIR=str(tmp_path))
    manage(env, "migrate", "--noinput", "-v0")
    token, table = shell(env, SETUP).split()
    running = Services(env=env, tmp=tmp_path)
    port = free_port()
    try:
        proc, url = running.server(port=port)
        with following(url, int(table), token) as feed:
            first, _ = deal_an_open_round(
                lambda key: httpx.post(
                    f"{url}/api/tables/{table}/deal/",
                    json={"bets": ["1"]},
                    headers={"Authorization": f"Token {token}", "Idempotency-Key": key},
                    timeout=30,
                )
            )
            live = versions(url, token, first)
            wait_until(lambda: set(got(feed, first)) == live, 30, "the deal arrives live")

            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=10)
            wait_until(lambda: feed.drops >= 1, 30, "the client sees the socket drop")
            second = json.loads(shell(env, WHILE_DOWN.format(round_id=first, table=table)))[
                "second"
            ]

            proc, url = running.server(port=port)  # the same address the client retries
            final = versions(url, token, first)
            assert len(final) > len(live)  # the round went on while the server was down
            wait_until(
                lambda: (
                    set(got(feed, first)) == final
                    and set(got(feed, second)) == versions(url, token, second)
                ),
                30,
                "the client resumes",
            )
        resumed = [(r, f, t) for r, f, t in feed.received if r == first and f > max(live)]
        assert resumed == [(first, v, v) for v in sorted(final - live)]
        assert sorted(got(feed, first)) == sorted(final)  # each version once
    finally:
        running.stop_all()
