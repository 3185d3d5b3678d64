"""Restart Redis under a live table: the WebSocket client reconnects, resumes, loses nothing.

`manage.py serve` runs on our own redis-server (its channel layer, cache and broker). The
playing client's `Feed` (`casino.client.cli`) follows the player's table. When Redis dies, every
consumer's read on the layer fails and the server closes the sockets (1011); handshakes fail
until Redis is back. The client retries with backoff and, on the next `hello`, sends
`{"type": "resume", "rounds": {round: last version}}`.

While Redis is down, another writer (this test process, through the round service, like a
second server or a worker would) finishes the open round and deals the next one, so events
are committed that no socket could carry. After the restart the client must receive every
version of every round, checked against the event store; then play goes on over HTTP. One
more lost push after the restart (the round ends through this process again) is recovered by
the client when the next round's first message arrives (it asks for the round it last saw in
play).
"""

from __future__ import annotations

import pytest

from casino.client.cli import Feed
from casino.eventstore.models import StoredEvent
from casino.models import Round, RoundStatus, Table
from casino.rounds import publish, services, stream
from casino.tables.services import table_deal
from tests.api.conftest import make_player
from tests.faults.conftest import (
    REAL_SERVICES,
    OwnRedis,
    Services,
    assert_consistent,
    deal_an_open_round,
    following,
    login,
    wait_until,
)

pytestmark = REAL_SERVICES


def stored_versions(round_id: str) -> set[int]:
    return set(StoredEvent.objects.filter(stream_id=round_id).values_list("version", flat=True))


def received_versions(feed: Feed, round_id: str) -> set[int]:
    return {
        v for r, first, last in list(feed.received) if r == round_id for v in range(first, last + 1)
    }


def caught_up(feed: Feed, round_ids: list[str]) -> bool:
    return all(received_versions(feed, r) == stored_versions(r) for r in round_ids)


def finish_by_its_timers(round_id: str) -> None:
    """Let the round's own deadlines fire (insurance declined, hands stood) until it settles."""
    for _ in range(20):
        state = stream.round_state_for(round_id=round_id)
        if state.finished:
            return
        assert state.deadline_ms is not None
        services.round_timeout(round_id=round_id, at_ms=state.deadline_ms)
    raise AssertionError(f"round {round_id} did not finish")


def test_a_redis_restart_drops_the_sockets_and_the_client_resumes_every_version(
    services: Services, own_redis: OwnRedis, monkeypatch: pytest.MonkeyPatch
) -> None:
    # This process writes too (as another server would); its timer nudges would go to the
    # suite's broker, not the one under test, so it schedules none.
    monkeypatch.setattr(publish, "schedule_nudge", lambda round_id, deadline_ms: None)
    user = make_player()
    _, url = services.server()
    client = login(url, user)
    table = int(client.post("/api/tables/personal/", {"ruleset": "classic"}, key="t").json()["id"])
    token = client.http.headers["Authorization"].split()[1]

    with following(url, table, token) as feed:
        r1, ended = deal_an_open_round(
            lambda key: client.post(f"/api/tables/{table}/deal/", {"bets": ["1"]}, key=key)
        )
        wait_until(lambda: caught_up(feed, [*ended, r1]), 30, "the deal arrives live")
        live_r1 = max(stored_versions(r1))

        own_redis.kill()
        wait_until(lambda: feed.drops >= 1, 30, "the socket drops with Redis")

        # Events no socket can carry: the round settles, the next one is dealt.
        finish_by_its_timers(r1)
        r2 = table_deal(
            table=Table.objects.get(pk=table), user=user, mode="bet", bets=[1_000_000]
        ).round.id
        assert max(stored_versions(r1)) > live_r1
        assert received_versions(feed, r1) == set(range(1, live_r1 + 1))

        own_redis.start()
        wait_until(lambda: caught_up(feed, [r1, r2]), 60, "the client resumes both rounds")
        # The settled round came back version by version through the resume request.
        resumed = [(r, f, t) for r, f, t in feed.received if r == r1 and f > live_r1]
        assert resumed == [(r1, v, v) for v in range(live_r1 + 1, max(stored_versions(r1)) + 1)]

        # A publish lost after the restart: this process's writes reach no socket of the
        # server, so r2 ends unseen. The next round's first message (live, over HTTP) makes
        # the client ask for r2 again, since it last saw r2 in play.
        finish_by_its_timers(r2)
        third = client.post(f"/api/tables/{table}/deal/", {"bets": ["1"]}, key="deal-last")
        assert third.status_code == 200, third.text
        r3 = third.json()["round_id"]
        wait_until(lambda: caught_up(feed, [r1, r2, r3]), 30, "play after the restart arrives")

    rounds = list(Round.objects.filter(table_id=table).values_list("id", flat=True))
    assert sorted(rounds) == sorted([*ended, r1, r2, r3])
    for round_id in rounds:  # every version of every round, received, none twice as new
        got = [v for r, f, t in feed.received if r == round_id for v in range(f, t + 1)]
        assert set(got) == stored_versions(round_id) and len(got) == len(set(got)), got
    assert Round.objects.get(id=r1).status == RoundStatus.SETTLED
    assert_consistent(rounds)
