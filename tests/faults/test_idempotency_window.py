"""The Idempotency-Key crash window on PostgreSQL, in process (threads, real connections).

A killed process is in `test_server_kill.py`; here two live requests race on one key, and a
request dies half way (its thread stops with an exception no handler catches) so that its
transaction rolls back.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.db import connection

from casino import projections, services
from casino.eventstore.models import StoredEvent
from ledger.models import IdempotencyRecord
from tests.api.conftest import Api, make_player
from tests.api.test_auth_tables import assert_error
from tests.api.test_rounds import cards, deal, personal
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


@pytest.mark.parametrize("where", ["inside_the_transaction", "after_the_commit"])
def test_a_retry_while_the_first_runs_is_409_in_progress_then_replays_the_one_answer(
    round_to_hit: tuple[Any, str], monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    player, round_id = round_to_hit
    reached, release = threading.Event(), threading.Event()

    def hold() -> None:
        reached.set()
        assert release.wait(30)

    if where == "inside_the_transaction":  # events appended, legs posted, nothing committed
        project = projections.project
        monkeypatch.setattr(projections, "project", lambda **kw: (hold(), project(**kw))[1])
    else:
        command = services.round_command
        monkeypatch.setattr(services, "round_command", lambda **kw: (command(**kw), hold())[0])
    url = f"/api/rounds/{round_id}/hit/"
    first, out = in_thread(lambda: Api(player).post(url, key="hit-once"))
    assert reached.wait(30)
    try:
        duplicate = Api(player).post(url, key="hit-once")
        assert_error(duplicate, 409, "idempotency_in_progress")
        assert IdempotencyRecord.objects.get(key=f"{player.pk}:hit-once").status_code == (
            0 if where == "inside_the_transaction" else 1  # PENDING, or APPLIED once committed
        )
    finally:
        release.set()
        first.join(30)
    assert out["result"].status_code == 200, out
    again = Api(player).post(url, key="hit-once")
    assert again.status_code == 200 and again["Idempotent-Replayed"] == "true"
    assert again.json() == out["result"].json()
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
    answers = sorted(out["result"].status_code for _, out in runs)
    # Either the second saw the first in flight (409) or after it finished (its replay).
    assert answers in ([200, 200], [200, 409]), answers
    for _, out in runs:
        if out["result"].status_code == 409:
            assert_error(out["result"], 409, "idempotency_in_progress")
    assert hand_cards(Api(player), round_id) == ["5S", "6C", "2C"]
    final = Api(player).post(url, key="racing")
    assert final.status_code == 200 and final["Idempotent-Replayed"] == "true"


def test_a_request_dying_inside_its_transaction_leaves_nothing_and_its_key_retryable(
    round_to_hit: tuple[Any, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    player, round_id = round_to_hit
    events_before = StoredEvent.objects.filter(stream_id=round_id).count()
    project = projections.project

    def die(**kwargs: Any) -> Any:
        raise Killed("the request's thread died half way")

    monkeypatch.setattr(projections, "project", die)
    url = f"/api/rounds/{round_id}/hit/"
    thread, out = in_thread(lambda: Api(player).post(url, key="hit-dies"))
    thread.join(30)
    assert isinstance(out.get("error"), Killed)
    # Rolled back: no event, no ledger leg, no stuck key (its APPLIED mark rolled back too).
    assert StoredEvent.objects.filter(stream_id=round_id).count() == events_before
    assert not IdempotencyRecord.objects.filter(key=f"{player.pk}:hit-dies").exists()
    monkeypatch.setattr(projections, "project", project)
    assert hand_cards(Api(player), round_id) == ["5S", "6C"]
    assert_consistent([round_id])
    retry = Api(player).post(url, key="hit-dies")
    assert retry.status_code == 200 and "Idempotent-Replayed" not in retry
    assert hand_cards(Api(player), round_id) == ["5S", "6C", "2C"]


def test_a_409_from_the_round_frees_the_key(round_to_hit: tuple[Any, str]) -> None:
    player, round_id = round_to_hit
    api = Api(player)
    stood = api.post(f"/api/rounds/{round_id}/stand/", key="stand-1")
    assert stood.status_code == 200
    late = api.post(f"/api/rounds/{round_id}/hit/", key="late-hit")
    assert_error(late, 409, "round_finished")
    assert not IdempotencyRecord.objects.filter(key=f"{player.pk}:late-hit").exists()


def test_a_request_dying_after_its_commit_is_never_run_again(
    round_to_hit: tuple[Any, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    player, round_id = round_to_hit
    command = services.round_command

    def commit_then_die(**kwargs: Any) -> Any:
        command(**kwargs)
        raise Killed("the request's thread died after the commit")

    monkeypatch.setattr(services, "round_command", commit_then_die)
    url = f"/api/rounds/{round_id}/hit/"
    thread, out = in_thread(lambda: Api(player).post(url, key="hit-after"))
    thread.join(30)
    assert isinstance(out.get("error"), Killed)
    monkeypatch.setattr(services, "round_command", command)
    assert hand_cards(Api(player), round_id) == ["5S", "6C", "2C"]  # the HIT committed
    for _ in range(2):  # the retry is refused, from the stored answer, and draws nothing
        retry = Api(player).post(url, key="hit-after")
        assert_error(retry, 409, "idempotency_interrupted")
        assert retry["Idempotent-Replayed"] == "true"
    assert hand_cards(Api(player), round_id) == ["5S", "6C", "2C"]
    assert_consistent([round_id])
