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
from django.db import connection

from casino.eventstore.models import StoredEvent
from ledger.models import IdempotencyRecord
from tests.api.conftest import make_player
from tests.faults.conftest import (
    REAL_SERVICES,
    Client,
    Services,
    assert_consistent,
    login,
    wait_until,
)

pytestmark = REAL_SERVICES


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
    # Released once PostgreSQL sees the dead connection (at once for a killed process).
    wait_until(lambda: held_advisory_locks() == 0, 15, "the dead request's lock is released")
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


def play_until_stopped(client: Client, me: str, table: int, stop: threading.Event) -> list[Any]:
    """Deal and play with basic moves; return the requests that got no answer (key, path, body)."""
    unanswered: list[Any] = []
    n = 0

    def send(path: str, body: Any) -> httpx.Response | None:
        nonlocal n
        n += 1
        key = f"burst-{me}-{n}"
        try:
            return client.post(path, body, key=key)
        except httpx.HTTPError:
            unanswered.append((key, path, body))
            stop.set()
            return None

    while not stop.is_set():
        dealt = send(f"/api/tables/{table}/deal/", {"bets": ["1"]})
        if dealt is None or dealt.status_code != 200:
            continue
        round_id = dealt.json()["round_id"]
        while not stop.is_set():
            try:
                state = client.state(round_id)
            except httpx.HTTPError:
                stop.set()
                break
            if state["status"] != "open":
                break
            view = state["view"]
            if view["phase"] == "insurance":
                send(f"/api/rounds/{round_id}/insurance/", {"take": False})
            elif (view.get("turn") or {}).get("player_id") == me:
                hand = view["boxes"][0]["hands"][view["turn"]["hand"]]
                total = sum(min(10, "A23456789TJQK".index(c["card"][0]) + 1) for c in hand["cards"])
                send(f"/api/rounds/{round_id}/{'hit' if total < 12 else 'stand'}/", {})
            else:
                break
    return unanswered


def test_a_server_killed_during_a_burst_leaves_every_key_completed_or_retryable(
    services: Services,
) -> None:
    users = [make_player() for _ in range(6)]
    proc, url = services.server()
    clients = [login(url, u) for u in users]
    tables = [
        int(c.post("/api/tables/personal/", {"ruleset": "classic"}, key="t").json()["id"])
        for c in clients
    ]
    stop = threading.Event()
    results: dict[int, list[Any]] = {}
    threads = [
        threading.Thread(
            target=lambda i=i: results.update(
                {i: play_until_stopped(clients[i], str(users[i].pk), tables[i], stop)}
            )
        )
        for i in range(len(users))
    ]
    for thread in threads:
        thread.start()
    wait_until(
        lambda: StoredEvent.objects.filter(type="RoundSettled").count() >= 6,
        60,
        "rounds settle under the burst",
        proc,
    )
    proc.send_signal(signal.SIGKILL)  # wherever the six players' requests are
    proc.wait(timeout=10)
    stop.set()
    for thread in threads:
        thread.join(60)
    unanswered = [(i, *r) for i, reqs in results.items() for r in reqs]
    assert unanswered, "the kill hit no request in flight"
    wait_until(lambda: held_advisory_locks() == 0, 15, "the dead requests' locks are released")
    rounds = list(
        StoredEvent.objects.filter(type="RoundOpened").values_list("stream_id", flat=True)
    )
    assert_consistent(rounds)  # whatever was cut short left no partial write

    _, url = services.server()
    clients = [login(url, u) for u in users]
    for i, key, path, body in unanswered:  # each retry completes: never stuck in progress
        retry = clients[i].post(path, body, key=key)
        code = retry.json().get("error", {}).get("code") if retry.status_code >= 400 else None
        assert code != "idempotency_in_progress", retry.text
        assert retry.status_code < 500, retry.text
    stuck = IdempotencyRecord.objects.filter(status_code__in=(0, 1))  # PENDING, APPLIED
    assert list(stuck.values_list("key", flat=True)) == []
    assert_consistent(rounds)
