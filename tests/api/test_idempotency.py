"""The Idempotency-Key inside the command's own transaction: what commits with what.

Races and dying requests on PostgreSQL are in tests/faults/test_idempotency_window.py; here
the single-request paths: refusals stored or freed, an expired deadline before a refusal,
the service's concurrency retry, malfunctions, and DEAL's open and bet as one transaction.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from casino.api.commands import idempotent_command, own_round_body
from casino.engine.commands import Hit
from casino.eventstore import store
from casino.eventstore.models import StoredEvent
from casino.models import Round, Seat, Table
from casino.platform.errors import ApplicationError
from casino.rounds import projections, services, stream
from casino.tables.services import table_add
from ledger.models import IdempotencyRecord
from tests.api.conftest import Api, make_player
from tests.api.test_auth_tables import assert_error
from tests.api.test_rounds import available, cards, deal, personal

pytestmark = pytest.mark.django_db
Stack = Callable[[list[str]], None]
HAND = ["5S", "TH", "6C", "9D", "2C", "3C"]  # player 5+6, dealer T up; a hit draws the 2C


def record(user: Any, key: str) -> IdempotencyRecord | None:
    return IdempotencyRecord.objects.filter(key=f"{user.pk}:{key}").first()


def test_a_refused_deal_opens_no_round_and_its_400_is_stored_and_replayed(stack: Stack) -> None:
    api = Api(make_player())
    table = personal(api)
    events = list(StoredEvent.objects.values_list("type", flat=True))
    assert events == ["SeedChainCreated"]  # the table's first chain, published with it
    below = api.post(f"/api/tables/{table}/deal/", {"bets": ["0.05"]}, key="small")
    assert_error(below, 400, "bet_below_minimum")
    assert not Round.objects.filter(table_id=table).exists()  # the open rolled back with it
    assert list(StoredEvent.objects.values_list("type", flat=True)) == events
    again = api.post(f"/api/tables/{table}/deal/", {"bets": ["0.05"]}, key="small")
    assert again.status_code == 400 and again["Idempotent-Replayed"] == "true"
    assert again.json() == below.json()


def test_a_deal_opens_and_stakes_in_one_transaction_and_replays(stack: Stack) -> None:
    stack(HAND)
    api = Api(make_player())
    table = personal(api)
    before = available(api)
    first = api.post(f"/api/tables/{table}/deal/", {"bets": ["1"]}, key="d")
    again = api.post(f"/api/tables/{table}/deal/", {"bets": ["1"]}, key="d")
    assert first.status_code == 200 and again["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
    round_id = first.json()["round_id"]
    assert Round.objects.filter(table_id=table).count() == 1
    types = list(
        StoredEvent.objects.filter(stream_id=round_id).order_by("version").values_list("type")
    )
    assert [t for (t,) in types][:2] == ["RoundOpened", "BetPlaced"]
    assert float(available(api)) == float(before) - 1
    stored = record(api.user, "d")
    assert stored is not None and stored.status_code == 200


def test_a_409_frees_the_key_and_a_403_is_stored(stack: Stack) -> None:
    stack(HAND)
    owner, other = Api(make_player()), Api(make_player())
    table = personal(owner)
    refused = other.post(f"/api/tables/{table}/deal/", {"bets": ["1"]}, key="x")
    assert_error(refused, 403, "permission_denied")
    assert record(other.user, "x") is not None  # stored: the same key answers the same
    assert other.post(f"/api/tables/{table}/deal/", {"bets": ["1"]}, key="x")[
        "Idempotent-Replayed"
    ] == ("true")
    poor = Api(make_player(funds=500_000))
    mine = personal(poor)
    assert_error(
        poor.post(f"/api/tables/{mine}/deal/", {"bets": ["1"]}, key="y"), 409, "insufficient_funds"
    )
    assert record(poor.user, "y") is None
    assert not Round.objects.filter(table_id=mine).exists()


def test_an_expired_deadline_then_a_409_commits_the_deadline_and_frees_the_key(
    stack: Stack,
) -> None:
    stack(HAND)
    player = make_player()
    round_id = deal(Api(player), personal(Api(player)), "1")["round_id"]
    deadline = stream.round_state_for(round_id=round_id).deadline_ms
    assert deadline is not None
    command = Hit(str(player.pk))

    def late_hit() -> Any:
        return idempotent_command(
            user_id=int(player.pk),
            key="late",
            operation="rounds_hit",
            payload={"round": round_id},
            perform=lambda claim: (
                200,
                own_round_body(
                    services.round_command(
                        round_id=round_id, command=command, at_ms=deadline + 1, hook=claim
                    ),
                    str(player.pk),
                ),
            ),
            respond=lambda result: (200, own_round_body(result, str(player.pk))),
        )

    with pytest.raises(ApplicationError) as caught:
        late_hit()
    assert (caught.value.code, caught.value.status_code) == ("round_finished", 409)
    # The turn timer's stand and the settlement committed; the refused hit's key did not.
    assert Round.objects.get(id=round_id).status == "settled"
    assert record(player, "late") is None
    version = Round.objects.get(id=round_id).version
    with pytest.raises(ApplicationError):
        late_hit()  # the key is free: it runs again, is refused again, changes nothing
    assert Round.objects.get(id=round_id).version == version


def test_the_services_concurrency_retry_writes_the_key_once(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    stack(HAND)
    api = Api(make_player())
    round_id = deal(api, personal(api), "1")["round_id"]
    real_append = store.append
    calls = {"n": 0}

    def conflicts_once(**kwargs: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 1:
            raise store.ConcurrencyError(kwargs["stream_id"], kwargs["expected_version"], "test")
        return real_append(**kwargs)

    monkeypatch.setattr(services, "append", conflicts_once)
    hit = api.post(f"/api/rounds/{round_id}/hit/", key="h")
    assert hit.status_code == 200 and calls["n"] == 2
    assert IdempotencyRecord.objects.filter(key=f"{api.user.pk}:h").count() == 1
    again = api.post(f"/api/rounds/{round_id}/hit/", key="h")
    assert again["Idempotent-Replayed"] == "true" and again.json() == hit.json()
    state = api.get(f"/api/rounds/{round_id}/").json()
    assert cards(state["view"]["boxes"][0]["hands"][0]) == ["5S", "6C", "2C"]


def test_a_malfunction_voids_the_round_and_frees_the_key(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    stack(HAND)
    api = Api(make_player())
    round_id = deal(api, personal(api), "1")["round_id"]
    real = projections.project
    calls = {"n": 0}

    def broken_once(**kwargs: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("disk on fire")
        return real(**kwargs)

    monkeypatch.setattr(projections, "project", broken_once)
    failed = api.post(f"/api/rounds/{round_id}/hit/", key="m")
    assert_error(failed, 500, "round_voided_malfunction")
    assert Round.objects.get(id=round_id).status == "voided"
    assert record(api.user, "m") is None


def test_a_deal_malfunction_leaves_no_round_no_stake_and_a_free_key(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    stack(HAND)
    api = Api(make_player())
    table = personal(api)
    before = available(api)
    events = StoredEvent.objects.count()  # the table's SeedChainCreated
    real = projections.project

    def broken(**kwargs: Any) -> Any:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(projections, "project", broken)
    api.client.raise_request_exception = False
    failed = api.post(f"/api/tables/{table}/deal/", {"bets": ["1"]}, key="dm")
    assert failed.status_code == 500
    assert StoredEvent.objects.count() == events and not Round.objects.exists()
    assert available(api) == before and record(api.user, "dm") is None
    monkeypatch.setattr(projections, "project", real)
    retry = api.post(f"/api/tables/{table}/deal/", {"bets": ["1"]}, key="dm")
    assert retry.status_code == 200 and "Idempotent-Replayed" not in retry
    assert float(available(api)) == float(before) - 1


def test_table_posts_replay_their_answer() -> None:
    table = table_add(
        Table(name="t", ruleset="duel", min_bet=10**6, max_bet=10**6, stake=10**6, seats=2)
    )
    api = Api(make_player())
    sat = api.post(f"/api/tables/{table.pk}/sit/", key="sit")
    again = api.post(f"/api/tables/{table.pk}/sit/", key="sit")
    assert again["Idempotent-Replayed"] == "true" and again.json() == sat.json()
    ready = api.post(f"/api/tables/{table.pk}/ready/", key="ready")
    assert ready.json()["seated"][0]["ready"] is True
    api.post(f"/api/tables/{table.pk}/ready/", {"ready": False}, key="not-ready")
    replayed = api.post(f"/api/tables/{table.pk}/ready/", key="ready")
    assert replayed["Idempotent-Replayed"] == "true" and replayed.json() == ready.json()
    assert Seat.objects.get(table=table).ready is False  # the replay ran nothing
    left = api.post(f"/api/tables/{table.pk}/leave/", key="leave")
    assert left.json()["seated"] == []
    assert api.post(f"/api/tables/{table.pk}/leave/", key="leave")["Idempotent-Replayed"] == (
        "true"
    )


def test_an_action_on_a_strangers_round_records_nothing(stack: Stack) -> None:
    # The service checks the seat as it locks the round, inside the command's transaction,
    # after the key's record: the 403 (or 404) rolls the record back, as a check made before
    # the transaction would have left none. Bad input from a stranger is still a 403 first.
    stack(HAND)
    owner, other = Api(make_player()), Api(make_player())
    round_id = deal(owner, personal(owner), "1")["round_id"]
    refused = other.post(f"/api/rounds/{round_id}/hit/", {}, key="h")
    assert_error(refused, 403, "not_a_participant")
    assert record(other.user, "h") is None
    assert_error(
        other.post(f"/api/rounds/{round_id}/hit/", {"confirm": "maybe"}), 403, "not_a_participant"
    )
    missing = "00000000-0000-4000-8000-000000000000"
    assert_error(other.post(f"/api/rounds/{missing}/hit/", {}, key="m"), 404, "not_found")
    assert record(other.user, "m") is None
    assert_error(
        owner.post(f"/api/rounds/{round_id}/hit/", {"confirm": "maybe"}), 400, "invalid_input"
    )
    hit = owner.post(f"/api/rounds/{round_id}/hit/", {}, key="h")  # the same key, its owner
    assert hit.status_code == 200
    assert cards(hit.json()["view"]["boxes"][0]["hands"][0]) == ["5S", "6C", "2C"]
