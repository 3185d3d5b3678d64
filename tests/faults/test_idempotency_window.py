"""One Idempotency-Key, racing and dying requests, on PostgreSQL (threads, real connections).

The key's record is the first write of the command's own transaction and its answer the last,
so the command and the key commit or roll back together. A killed process is in
`test_server_kill.py`; here live requests race on one key, and a request dies half way (its
thread stops with an exception no handler catches) so that its transaction rolls back.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.db import connection

from casino.eventstore.models import StoredEvent
from casino.rounds import projections, services
from ledger.models import IdempotencyRecord
from tests.api.conftest import Api, make_player
from tests.api.test_auth_tables import assert_error
from tests.api.test_rounds import available, cards, deal, personal
from tests.faults.conftest import assert_consistent

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

Stack = Callable[[list[str]], None]
HAND = ["5S", "TH", "6C", "9D", "2C", "3C"]  # player 5+6, dealer T up; a hit draws the 2C


class Killed(BaseException):
    """Stands for the request's thread dying: no `except Exception` in the product catches it."""


def in_thread(work: Callable[[], Any]) -> tuple[threading.Thread, dict[str, Any]]:
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["result"] = work()
        except BaseException as exc:
            out["error"] = exc
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread, out


@pytest.fixture
def round_to_hit(stack: Stack) -> Iterator[tuple[Any, str]]:
    stack(HAND)
    player = make_player()
    api = Api(player)
    round_id = deal(api, personal(api), "1")["round_id"]
    yield player, round_id


def hand_cards(api: Api, round_id: str) -> list[str]:
    return cards(api.get(f"/api/rounds/{round_id}/").json()["view"]["boxes"][0]["hands"][0])


def waiting_on_a_lock(timeout: float = 30) -> None:
    """Until another session of this database waits on a lock (the duplicate on the key)."""
    with connection.cursor() as cursor:
        for _ in range(int(timeout * 20)):
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND wait_event_type = 'Lock'"
            )
            if cursor.fetchone()[0]:
                return
            threading.Event().wait(0.05)
    raise AssertionError("the duplicate never waited on the key")


def hold_inside_the_transaction(
    monkeypatch: pytest.MonkeyPatch, then: Callable[[], None] = lambda: None
) -> tuple[threading.Event, threading.Event]:
    """The next command stops after its events and ledger legs, before its commit."""
    reached, release = threading.Event(), threading.Event()
    project = projections.project
    calls = {"n": 0}

    def held(**kwargs: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 1:
            reached.set()
            assert release.wait(30)
            then()
        return project(**kwargs)

    monkeypatch.setattr(projections, "project", held)
    return reached, release


def test_a_duplicate_sent_while_the_first_runs_waits_for_it_then_replays_its_answer(
    round_to_hit: tuple[Any, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    player, round_id = round_to_hit
    reached, release = hold_inside_the_transaction(monkeypatch)
    url = f"/api/rounds/{round_id}/hit/"
    first, first_out = in_thread(lambda: Api(player).post(url, key="hit-once"))
    assert reached.wait(30)  # the first is inside its transaction: events appended, uncommitted
    second, second_out = in_thread(lambda: Api(player).post(url, key="hit-once"))
    try:
        waiting_on_a_lock()  # the duplicate waits on the key's unique index ...
        assert second.is_alive() and not second_out  # ... and has not answered
    finally:
        release.set()
        first.join(30)
        second.join(30)
    one, two = first_out["result"], second_out["result"]
    assert one.status_code == two.status_code == 200, (one.content, two.content)
    assert "Idempotent-Replayed" not in one and two["Idempotent-Replayed"] == "true"
    assert two.json() == one.json()
    assert hand_cards(Api(player), round_id) == ["5S", "6C", "2C"]  # one card, drawn once
    assert_consistent([round_id])


def test_two_simultaneous_requests_with_one_key_run_the_command_once(
    round_to_hit: tuple[Any, str],
) -> None:
    player, round_id = round_to_hit
    url = f"/api/rounds/{round_id}/hit/"
    gate = threading.Barrier(2)

    def send() -> Any:
        gate.wait(10)
        return Api(player).post(url, key="racing")

    runs = [in_thread(send) for _ in range(2)]
    for thread, _ in runs:
        thread.join(30)
    answers = [out["result"] for _, out in runs]
    assert [a.status_code for a in answers] == [200, 200], [a.content for a in answers]
    assert sorted(a.get("Idempotent-Replayed", "no") for a in answers) == ["no", "true"]
    assert answers[0].json() == answers[1].json()  # one answer, the same for both
    assert hand_cards(Api(player), round_id) == ["5S", "6C", "2C"]
    assert_consistent([round_id])


def test_a_request_dying_inside_its_transaction_leaves_nothing_and_its_key_free(
    round_to_hit: tuple[Any, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    player, round_id = round_to_hit
    events_before = StoredEvent.objects.filter(stream_id=round_id).count()
    balance = available(Api(player))
    project = projections.project

    def die(**kwargs: Any) -> Any:
        raise Killed("the request's thread died half way")

    monkeypatch.setattr(projections, "project", die)
    url = f"/api/rounds/{round_id}/hit/"
    thread, out = in_thread(lambda: Api(player).post(url, key="hit-dies"))
    thread.join(30)
    assert isinstance(out.get("error"), Killed)
    # Rolled back together: no event, no ledger leg, no key.
    assert StoredEvent.objects.filter(stream_id=round_id).count() == events_before
    assert not IdempotencyRecord.objects.filter(key=f"{player.pk}:hit-dies").exists()
    monkeypatch.setattr(projections, "project", project)
    assert hand_cards(Api(player), round_id) == ["5S", "6C"]
    assert_consistent([round_id])
    retry = Api(player).post(url, key="hit-dies")
    assert retry.status_code == 200 and "Idempotent-Replayed" not in retry
    assert hand_cards(Api(player), round_id) == ["5S", "6C", "2C"]
    assert available(Api(player)) == balance  # a hit moves no money
    again = Api(player).post(url, key="hit-dies")
    assert again["Idempotent-Replayed"] == "true" and again.json() == retry.json()


def test_a_duplicate_waiting_on_a_first_that_dies_runs_the_command_itself_once(
    round_to_hit: tuple[Any, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    player, round_id = round_to_hit

    def die() -> None:
        raise Killed("the first request's thread died while the duplicate waited")

    reached, release = hold_inside_the_transaction(monkeypatch, then=die)
    url = f"/api/rounds/{round_id}/hit/"
    first, first_out = in_thread(lambda: Api(player).post(url, key="hit-twice"))
    assert reached.wait(30)
    second, second_out = in_thread(lambda: Api(player).post(url, key="hit-twice"))
    try:
        waiting_on_a_lock()
    finally:
        release.set()
        first.join(30)
        second.join(30)
    assert isinstance(first_out.get("error"), Killed)
    answer = second_out["result"]
    assert answer.status_code == 200 and "Idempotent-Replayed" not in answer, answer.content
    assert hand_cards(Api(player), round_id) == ["5S", "6C", "2C"]  # the duplicate's one card
    assert_consistent([round_id])


def test_a_409_from_the_round_frees_the_key(round_to_hit: tuple[Any, str]) -> None:
    player, round_id = round_to_hit
    api = Api(player)
    stood = api.post(f"/api/rounds/{round_id}/stand/", key="stand-1")
    assert stood.status_code == 200
    late = api.post(f"/api/rounds/{round_id}/hit/", key="late-hit")
    assert_error(late, 409, "round_finished")
    assert not IdempotencyRecord.objects.filter(key=f"{player.pk}:late-hit").exists()


def test_a_request_dying_after_its_commit_is_replayed_not_run_again(
    round_to_hit: tuple[Any, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    player, round_id = round_to_hit
    command = services.round_command
    committed: dict[str, Any] = {}

    def commit_then_die(**kwargs: Any) -> Any:
        committed["result"] = command(**kwargs)
        raise Killed("the request's thread died after the commit, before it answered")

    monkeypatch.setattr(services, "round_command", commit_then_die)
    url = f"/api/rounds/{round_id}/hit/"
    thread, out = in_thread(lambda: Api(player).post(url, key="hit-after"))
    thread.join(30)
    assert isinstance(out.get("error"), Killed)
    monkeypatch.setattr(services, "round_command", command)
    assert hand_cards(Api(player), round_id) == ["5S", "6C", "2C"]  # the HIT committed
    for _ in range(2):  # the answer committed with it: each retry replays it, draws nothing
        retry = Api(player).post(url, key="hit-after")
        assert retry.status_code == 200 and retry["Idempotent-Replayed"] == "true"
        assert retry.json()["version"] == committed["result"].round.version
    assert hand_cards(Api(player), round_id) == ["5S", "6C", "2C"]
    assert_consistent([round_id])


def test_parallel_duplicate_deals_open_one_round_and_stake_once(stack: Stack) -> None:
    stack(HAND)
    player = make_player()
    api = Api(player)
    table = personal(api)
    balance = available(api)
    gate = threading.Barrier(3)

    def send() -> Any:
        gate.wait(10)
        return Api(player).post(f"/api/tables/{table}/deal/", {"bets": ["1"]}, key="deal-race")

    runs = [in_thread(send) for _ in range(3)]
    for thread, _ in runs:
        thread.join(30)
    answers = [out["result"] for _, out in runs]
    assert [a.status_code for a in answers] == [200] * 3, [a.content for a in answers]
    assert sorted(a.get("Idempotent-Replayed", "no") for a in answers) == ["no", "true", "true"]
    assert all(a.json() == answers[0].json() for a in answers)  # one answer
    assert StoredEvent.objects.filter(type="RoundOpened").count() == 1
    assert available(api) == f"{float(balance) - 1:.6f}"  # staked once
    assert_consistent([answers[0].json()["round_id"]])
