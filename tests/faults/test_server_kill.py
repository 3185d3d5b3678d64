"""SIGKILL `manage.py serve` in the middle of a request: no partial write, no stuck key.

The server runs behind `hooked_serve.py`'s test-only pause points (the product's own code,
wrapped at startup), so the kill lands at a chosen point of one HIT:

1. inside the round service's transaction (events appended, ledger legs posted, nothing
   committed): PostgreSQL rolls the transaction back when the connection dies; the key stays
   reserved but unheld, and a retry on a new server runs the HIT, once;
2. after that retry committed, before its response was stored: the key is `APPLIED`; a retry
   on a third server is refused with 409 `idempotency_interrupted` and draws no second card.

After each kill the whole database is checked: the ledger reconciles, every round audits
(hash chain, replay, ledger legs, receipt when finished) and replay equals the projections.
"""

from __future__ import annotations

import signal
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.db import connection

from casino.eventstore.models import StoredEvent
from ledger.models import IdempotencyRecord
from tests.api.conftest import make_player
from tests.faults.conftest import Client, Services, assert_consistent, login, wait_until

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.redis,
    pytest.mark.worker,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]


def round_waiting_for_my_hit(client: Client, user_id: str) -> str:
    """Deal until a round waits on this player's first decision (the fair shoe decides)."""
    table = client.post("/api/tables/personal/", {"ruleset": "classic"}, key="table").json()["id"]
    for attempt in range(20):
        dealt = client.post(f"/api/tables/{table}/deal/", {"bets": ["1"]}, key=f"deal-{attempt}")
        assert dealt.status_code == 200, dealt.text
        round_id = dealt.json()["round_id"]
        state = client.state(round_id)
        if state["status"] == "open" and state["view"]["phase"] == "insurance":
            client.post(f"/api/rounds/{round_id}/insurance/", {"take": False}, key=f"ins-{attempt}")
            state = client.state(round_id)
        turn = state["view"].get("turn")
        if state["status"] == "open" and turn and turn["player_id"] == user_id:
            return str(round_id)
    raise AssertionError("20 deals and never a hand to hit")


def hand(client: Client, round_id: str) -> list[str]:
    box = client.state(round_id)["view"]["boxes"][0]
    return [c["card"] for c in box["hands"][0]["cards"]]


def held_advisory_locks() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database "
            "WHERE l.locktype = 'advisory' AND d.datname = current_database()"
        )
        return int(cursor.fetchone()[0])


def kill_at(services: Services, proc: Any, point: str, send: Any) -> dict[str, Any]:
    """Arm `point`, send the request in a thread, SIGKILL the server once it is paused there."""
    tmp: Path = services.tmp
    (tmp / f"pause-{point}").write_text("")
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["response"] = send()
        except httpx.HTTPError as exc:
            out["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    wait_until((tmp / f"reached-{point}").exists, 60, f"the request reaches {point}", proc)
    (tmp / f"reached-{point}").unlink()
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    thread.join(30)
    return out


def test_a_server_killed_mid_request_leaves_no_partial_write_and_a_retryable_key(
    services: Services,
) -> None:
    user = make_player()
    me = str(user.pk)
    scoped = f"{me}:hit-killed"
    proc, url = services.server(hooked=True)
    client = login(url, user)
    round_id = round_waiting_for_my_hit(client, me)
    before = hand(client, round_id)
    versions = StoredEvent.objects.filter(stream_id=round_id).count()

    # 1. Killed inside the service's transaction.
    hit = f"/api/rounds/{round_id}/hit/"
    out = kill_at(services, proc, "in_transaction", lambda: client.post(hit, key="hit-killed"))
    assert "error" in out  # the connection died with the server: no answer
    assert StoredEvent.objects.filter(stream_id=round_id).count() == versions
    assert IdempotencyRecord.objects.get(key=scoped).status_code == 0  # PENDING, unheld
    assert held_advisory_locks() == 0  # died with its connection
    assert_consistent([round_id])

    # 2. A new server: the retry takes the key over and runs the HIT; killed after its commit.
    proc, url = services.server(hooked=True)
    client = login(url, user)
    out = kill_at(services, proc, "before_response", lambda: client.post(hit, key="hit-killed"))
    assert "error" in out
    assert StoredEvent.objects.filter(stream_id=round_id).count() > versions
    assert IdempotencyRecord.objects.get(key=scoped).status_code == 1  # APPLIED, no response
    assert_consistent([round_id])

    # 3. A third server: the key is never run again; it answers `interrupted`, stored.
    proc, url = services.server()
    client = login(url, user)
    after = hand(client, round_id)
    assert after[:2] == before and len(after) == 3  # exactly one card drawn by the two tries
    for _ in range(2):
        refused = client.post(hit, key="hit-killed")
        assert refused.status_code == 409, refused.text
        assert refused.json()["error"]["code"] == "idempotency_interrupted"
    assert hand(client, round_id) == after

    state = client.state(round_id)
    if state["status"] == "open":  # finish the round: it settles and its receipt verifies
        stood = client.post(f"/api/rounds/{round_id}/stand/", key="stand-after")
        assert stood.status_code == 200, stood.text
        state = client.state(round_id)
    assert state["status"] == "settled"
    assert_consistent([round_id])
