"""SIGKILL `manage.py serve` in the middle of a request: no partial write, no stuck key.

The server runs behind `hooked_serve.py`'s test-only pause points (the product's own code,
wrapped at startup), so the kill lands at a chosen point of one request. The request's
Idempotency-Key is written inside the command's own transaction, so:

1. killed inside the transaction (events appended, ledger legs posted, nothing committed):
   PostgreSQL rolls the command back with its key when the connection dies; nothing
   happened, and a retry on a new server runs the command, once;
2. killed after the commit, before the response was sent: the answer committed with the
   command; a retry on a third server replays it and runs nothing.

After each kill the whole database is checked: the ledger reconciles, every round audits
(hash chain, replay, ledger legs, receipt when finished) and replay equals the projections.
"""

from __future__ import annotations

import signal
import threading
from pathlib import Path
from typing import Any

import httpx

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


def round_waiting_for_my_hit(client: Client, user_id: str, table: int) -> str:
    """Deal until a round waits on this player's first decision (the fair shoe decides)."""
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


def available(client: Client) -> str:
    return str(client.http.get("/api/wallet/balance/").json()["available"])


def rounds_at(table: int) -> int:
    return StoredEvent.objects.filter(type="RoundOpened", data__table_id=str(table)).count()


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


def test_a_deal_killed_mid_request_runs_once_on_retry_and_stakes_once(
    services: Services,
) -> None:
    user = make_player()
    scoped = f"{user.pk}:deal-killed"
    proc, url = services.server(hooked=True)
    client = login(url, user)
    table = int(client.post("/api/tables/personal/", {"ruleset": "classic"}, key="t").json()["id"])
    before = available(client)
    deal = f"/api/tables/{table}/deal/"

    # 1. Killed inside the transaction that opens the round and stakes the bet.
    out = kill_at(
        services,
        proc,
        "in_transaction",
        lambda: client.post(deal, {"bets": ["1"]}, key="deal-killed"),
    )
    assert "error" in out  # the connection died with the server: no answer
    assert rounds_at(table) == 0  # no round, no stake, no key: all rolled back together
    assert not IdempotencyRecord.objects.filter(key=scoped).exists()
    assert_consistent([])

    # 2. A new server: the retry runs the DEAL; killed after its commit, before its response.
    proc, url = services.server(hooked=True)
    client = login(url, user)
    assert available(client) == before
    out = kill_at(
        services,
        proc,
        "before_response",
        lambda: client.post(deal, {"bets": ["1"]}, key="deal-killed"),
    )
    assert "error" in out
    assert rounds_at(table) == 1
    stored = IdempotencyRecord.objects.get(key=scoped)
    assert stored.status_code == 200  # the answer committed with the DEAL

    # 3. A third server: the key replays that answer; nothing runs again.
    proc, url = services.server()
    client = login(url, user)
    for _ in range(2):
        again = client.post(deal, {"bets": ["1"]}, key="deal-killed")
        assert again.status_code == 200, again.text
        assert again.headers["Idempotent-Replayed"] == "true"
        assert again.json() == stored.response
    assert rounds_at(table) == 1
    round_id = stored.response["round_id"]
    state = client.state(round_id)
    if state["status"] == "open":  # one stake of 1.00 is in play
        assert float(available(client)) == float(before) - 1
    assert_consistent([round_id])


def test_a_hit_killed_inside_its_transaction_draws_one_card_on_retry(services: Services) -> None:
    user = make_player()
    me = str(user.pk)
    proc, url = services.server(hooked=True)
    client = login(url, user)
    table = int(client.post("/api/tables/personal/", {"ruleset": "classic"}, key="t").json()["id"])
    round_id = round_waiting_for_my_hit(client, me, table)
    before = hand(client, round_id)
    versions = StoredEvent.objects.filter(stream_id=round_id).count()
    hit = f"/api/rounds/{round_id}/hit/"
    out = kill_at(services, proc, "in_transaction", lambda: client.post(hit, key="hit-killed"))
    assert "error" in out
    assert StoredEvent.objects.filter(stream_id=round_id).count() == versions
    assert not IdempotencyRecord.objects.filter(key=f"{me}:hit-killed").exists()
    assert_consistent([round_id])

    proc, url = services.server()
    client = login(url, user)
    retry = client.post(hit, key="hit-killed")
    assert retry.status_code == 200 and "Idempotent-Replayed" not in retry.headers, retry.text
    again = client.post(hit, key="hit-killed")
    assert again.headers["Idempotent-Replayed"] == "true" and again.json() == retry.json()
    after = hand(client, round_id)
    assert after[:2] == before and len(after) == 3  # exactly one card drawn by the three tries
    state = client.state(round_id)
    if state["status"] == "open":  # finish the round: it settles and its receipt verifies
        stood = client.post(f"/api/rounds/{round_id}/stand/", key="stand-after")
        assert stood.status_code == 200, stood.text
        state = client.state(round_id)
    assert state["status"] == "settled"
    assert_consistent([round_id])


class InFlight:
    """How many commands (POSTs) the players have sent and not had answered yet."""

    def __init__(self) -> None:
        self.count = 0
        self._changed = threading.Condition()

    def __enter__(self) -> None:
        with self._changed:
            self.count += 1
            self._changed.notify_all()

    def __exit__(self, *exc: object) -> None:
        with self._changed:
            self.count -= 1

    def wait_for_one(self, timeout: float) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: self.count > 0, timeout)


def play_until_stopped(
    client: Client, me: str, table: int, stop: threading.Event, in_flight: InFlight
) -> list[Any]:
    """Deal and play with basic moves; return the requests that got no answer (key, path, body)."""
    unanswered: list[Any] = []
    n = 0

    def send(path: str, body: Any) -> httpx.Response | None:
        nonlocal n
        n += 1
        key = f"burst-{me}-{n}"
        try:
            with in_flight:
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


def test_a_server_killed_during_a_burst_leaves_every_key_answered_or_free(
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
    in_flight = InFlight()
    results: dict[int, list[Any]] = {}
    threads = [
        threading.Thread(
            target=lambda i=i: results.update(
                {i: play_until_stopped(clients[i], str(users[i].pk), tables[i], stop, in_flight)}
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
    # A player's command in flight, not only state reads (those carry no key): a kill that
    # landed while every player was reading left nothing to check (about one run in eight).
    assert in_flight.wait_for_one(30), "no player sent a command"
    proc.send_signal(signal.SIGKILL)  # wherever the six players' requests are
    proc.wait(timeout=10)
    stop.set()
    for thread in threads:
        thread.join(60)
    unanswered = [(i, *r) for i, reqs in results.items() for r in reqs]
    assert unanswered, "the kill hit no request in flight"
    rounds = list(
        StoredEvent.objects.filter(type="RoundOpened").values_list("stream_id", flat=True)
    )
    assert_consistent(rounds)  # whatever was cut short left no partial write

    _, url = services.server()
    clients = [login(url, u) for u in users]
    # No key committed without its answer: each was rolled back with its command, or answered.
    assert list(IdempotencyRecord.objects.filter(status_code__lt=100).values("key")) == []
    for i, key, path, body in unanswered:  # each retry completes (replayed, or run now)
        retry = clients[i].post(path, body, key=key)
        assert retry.status_code < 500, retry.text
        again = clients[i].post(path, body, key=key)
        if retry.status_code != 409:  # a 409 stores nothing: the key stays free
            assert again.headers["Idempotent-Replayed"] == "true", again.text
            assert (again.status_code, again.json()) == (retry.status_code, retry.json())
    assert_consistent(rounds)
