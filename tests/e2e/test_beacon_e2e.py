"""End to end on the local beacon: a served process deals duel and duel_classic rounds of two
seats only once the beacon round they locked on is published, and their public proofs are
fairness-v2 rounds the verifier accepts and marks as run on the operator's own beacon.

Embedded default: `serve` on its own SQLite file, the in-process timer records the beacon.
Services: `serve` and a real Celery worker on PostgreSQL and Redis; the worker records the
beacon round (the nudge sent for the round's time).
"""

from __future__ import annotations

import io
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from casino.client.cli import banked_move
from casino.client.cli import main as client_main
from casino.engine.rules import RULESETS
from fairness.verify import main as verify_main
from tests.e2e.conftest import base_env, manage, postgres_url, served

BEACON_ENV = {"BEACON": "local", "BEACON_MARGIN_S": "0"}


def _login(url: str, user: str, password: str) -> httpx.Client:
    token = httpx.post(
        f"{url}/api/auth/login/", json={"username": user, "password": password}
    ).json()["token"]
    return httpx.Client(base_url=url, headers={"Authorization": f"Token {token}"}, timeout=30)


def _post(client: httpx.Client, path: str, body: dict[str, Any] | None = None) -> Any:
    answer = client.post(path, json=body or {}, headers={"Idempotency-Key": str(time.time_ns())})
    assert answer.status_code == 200, (path, answer.text)
    return answer.json()


def _beacon_then_cards(client: httpx.Client, round_id: str) -> dict[str, Any]:
    """The round's view while it waits for the beacon, then once the cards came."""
    waiting = client.get(f"/api/rounds/{round_id}/").json()["view"]
    assert waiting["phase"] == "beacon", waiting["phase"]
    assert waiting["beacon"]["name"] == "local-beacon" and waiting["actions"] == []
    assert all(not hand["cards"] for box in waiting["boxes"] for hand in box["hands"])
    refused = client.post(
        f"/api/rounds/{round_id}/stand/", json={}, headers={"Idempotency-Key": "early-stand"}
    )
    assert refused.status_code == 409, refused.text
    assert refused.json()["error"]["code"] == "action_not_allowed"
    deadline = time.monotonic() + 20  # the round's time is at most 3 s off, plus a timer tick
    while time.monotonic() < deadline:
        view = client.get(f"/api/rounds/{round_id}/").json()["view"]
        if view["phase"] != "beacon":
            assert time.time() >= waiting["beacon"]["round_time"]
            return waiting
        time.sleep(0.2)  # polling a subprocess's timer, not a timing assumption of the test
    raise AssertionError("the beacon round was never recorded")


def _verified_v2(client: httpx.Client, round_id: str, tmp_path: Path) -> None:
    proof = client.get(f"/api/fairness/rounds/{round_id}/").json()
    line = proof["bundle"]
    assert line["format"] == "fairness-v2-bundle"
    receipt = line["receipt"]
    assert receipt["spec"] == "fairness-v2" and receipt["beacon"]["signature"]
    path = tmp_path / f"{round_id}.jsonl"
    path.write_text(json.dumps(line) + "\n")
    out = io.StringIO()
    assert verify_main([str(path)], out=out) == 0, out.getvalue()
    assert "operator-run beacon" in out.getvalue() and "not independent" in out.getvalue()


def play_duel_classic(url: str, password: str, tmp_path: Path) -> None:
    ann, ben = _login(url, "alice", password), _login(url, "bob", password)
    table = ann.get("/api/tables/?ruleset=duel_classic").json()[0]["id"]
    for client in (ann, ben):
        client.post(f"/api/tables/{table}/sit/", headers={"Idempotency-Key": str(time.time_ns())})
    round_id = _post(ann, f"/api/tables/{table}/deal/", {"bets": ["0.50"]})["round_id"]
    _post(ben, f"/api/tables/{table}/deal/", {"bets": ["0.50"]})
    _beacon_then_cards(ann, round_id)
    rules = RULESETS["duel_classic"]
    me = {
        ann: str(ann.get("/api/auth/me/").json()["id"]),
        ben: str(ben.get("/api/auth/me/").json()["id"]),
    }
    for _ in range(40):
        state = ann.get(f"/api/rounds/{round_id}/").json()
        if state["status"] != "open":
            break
        for client in (ann, ben):
            view = client.get(f"/api/rounds/{round_id}/").json()["view"]
            move = banked_move(view, me[client], rules)
            if move is not None:
                _post(client, f"/api/rounds/{round_id}/{move[0]}/", move[1])
                break
        else:
            time.sleep(0.2)  # the dealer's turn runs in the same command; a push may lag
    assert ann.get(f"/api/rounds/{round_id}/").json()["status"] == "settled"
    _verified_v2(ann, round_id, tmp_path)


def play_duel(url: str, password: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["play", "--url", url, "--user", "alice", "--password", password, "--ruleset", "duel"]
    code = client_main([*args, "--rounds", "1", "--json", "--opponent", "bob"])
    out = capsys.readouterr()
    assert code == 0, (out.out, out.err)
    result = json.loads(out.out.strip().splitlines()[-1])
    assert result["verified"] == 1 and result["leaks"] == [], result
    alice = _login(url, "alice", password)
    recalled = alice.get("/api/me/rounds/?limit=1").json()["results"][0]
    assert recalled["view"]["ruleset"] == "duel" and recalled["view"]["beacon"]["round"]
    _verified_v2(alice, recalled["round_id"], tmp_path)


@pytest.fixture
def beacon_server(tmp_path: Path) -> Iterator[str]:
    env = base_env(DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}", **BEACON_ENV)
    manage(env, "migrate", "--noinput", "-v0")
    manage(env, "seed_demo")
    yield from served(env)


@pytest.mark.slow
def test_shared_tables_deal_after_the_beacon_on_the_embedded_default(
    beacon_server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    play_duel_classic(beacon_server, "demo-password", tmp_path)
    play_duel(beacon_server, "demo-password", tmp_path, capsys)


@pytest.fixture
def beacon_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The local beacon for every process the test starts (the worker records the rounds)."""
    for name, value in BEACON_ENV.items():
        monkeypatch.setenv(name, value)


@pytest.mark.slow
@pytest.mark.postgres
@pytest.mark.redis
@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_shared_tables_deal_after_the_beacon_with_a_real_worker(
    beacon_environment: None,
    celery_worker_process: Any,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from django.conf import settings  # the test database exists inside the test only
    from django.contrib.auth import get_user_model

    from casino.tables.services import demo_table
    from ledger.services import wallet_deposit

    for name in ("alice", "bob"):
        user = get_user_model().objects.create_user(username=name, password="pw-e2e-123")
        wallet_deposit(user=user, amount_micro=100_000_000, idempotency_key=f"e2e-{name}")
    for ruleset in ("duel_classic", "duel"):
        demo_table(ruleset)
    env = base_env(
        DATABASE_URL=postgres_url(),
        REDIS_URL=str(settings.REDIS_URL),
        **BEACON_ENV,
    )
    for url in served(env):  # no in-process timer: the worker's beacon nudge deals
        play_duel_classic(url, "pw-e2e-123", tmp_path)
        play_duel(url, "pw-e2e-123", tmp_path, capsys)
