"""Shared tables on the local beacon, through the round service: the lock waits for a beacon
round, the timer's sweep records it once it is published and the cards come; no beacon by
the deadline voids the round with every stake refunded; a nudge delivered twice is harmless."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from django.test import override_settings
from rest_framework.test import APIClient

from casino.engine.commands import PlaceBet
from casino.engine.events import beacon_round_time
from casino.engine.rules import USDC
from casino.eventstore.models import StoredEvent
from casino.models import Round
from casino.rounds.services import round_command, round_open, round_timeout
from casino.rounds.stream import round_load
from casino.rounds.tasks import record_beacon, sweep_beacons
from casino.tables.timers import tick
from fairness import beacon, beaconsource
from fairness.models import RoundProof
from tests.casino.conftest import FUNDS, available, make_player, make_table, stand_open_hands

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def local_beacon() -> Iterator[None]:
    """The local beacon, and a lock that takes the next round (no margin): a round's beacon
    is at most one period (3 s) away."""
    with override_settings(BEACON="local", BEACON_MARGIN_S=0, BEACON_WAIT_S=30):
        beaconsource.clear_caches()
        yield
    beaconsource.clear_caches()


def _types(round_id: str) -> list[str]:
    return list(
        StoredEvent.objects.filter(stream_id=round_id)
        .order_by("version")
        .values_list("type", flat=True)
    )


def _wait_until_published(round_id: str) -> int:
    _, state = round_load(round_id=round_id)
    assert state is not None and state.opened.beacon is not None
    due = beacon_round_time(state.opened.beacon, state.beacon_round)
    time.sleep(max(0.0, due - time.time()) + 0.05)
    return state.beacon_round


def test_a_duel_deals_once_its_beacon_round_is_published() -> None:
    players = [make_player("ann"), make_player("bob")]
    table = make_table("duel")
    opened = round_open(table=table, players=players)
    round_id = opened.round.id
    assert opened.state.phase == "beacon"
    assert Round.objects.get(pk=round_id).phase == "beacon"
    assert _types(round_id) == [
        "RoundOpened", "BetPlaced", "BetPlaced", "BettingClosed", "BeaconAwaited",
    ]  # fmt: skip
    assert [available(p) for p in players] == [FUNDS - USDC, FUNDS - USDC]  # staked
    spec = opened.state.opened.beacon
    assert spec == beaconsource.spec() and spec is not None and spec.name == "local-beacon"
    assert record_beacon(round_id) == "waiting"  # not published yet: nothing recorded
    assert _types(round_id)[-1] == "BeaconAwaited"
    beacon_round = _wait_until_published(round_id)
    tick()  # the in-process timer's pass: the sweep records the beacon and the deal follows
    types = _types(round_id)
    assert types[5:11] == ["BeaconRecorded", *["PlayerCardDealt"] * 4, "DuelTimerStarted"]
    recorded = StoredEvent.objects.get(stream_id=round_id, type="BeaconRecorded").data
    assert recorded["round"] == beacon_round
    randomness = beacon.verify(beacon_round, recorded["signature"], spec.public_key)
    assert recorded["randomness"] == randomness.hex()
    seeds = "|".join(p.client_seed for p in opened.state.opened.participants)
    assert recorded["client_material"] == f"{seeds}|local-beacon:{beacon_round}:{randomness.hex()}"
    state = stand_open_hands(round_id)  # the beacon's cards are live: a 21 has stood already
    assert state.phase == "settled" and state.server_seed is not None
    assert sum(available(p) for p in players) == 2 * FUNDS - state.settlement.fee  # type: ignore[union-attr]
    assert RoundProof.objects.filter(round_id=round_id).exists()


def test_duel_classic_waits_only_with_two_seats() -> None:
    ann, bob = make_player("ann"), make_player("bob")
    table = make_table("duel_classic")
    shared = round_open(table=table, players=[ann, bob]).round.id
    round_command(round_id=shared, command=PlaceBet(str(ann.pk), (USDC,)))
    waiting = round_command(round_id=shared, command=PlaceBet(str(bob.pk), (USDC,)))
    assert waiting.state.phase == "beacon"
    _wait_until_published(shared)
    assert sweep_beacons() == 1
    _, state = round_load(round_id=shared)
    assert state is not None and state.phase not in ("beacon", "voided")  # dealt
    assert "BeaconRecorded" in _types(shared) and "PlayerCardDealt" in _types(shared)
    assert state.client_material.count("|") == 2  # two seeds and the beacon's element
    alone = round_open(table=make_table("duel_classic"), players=[make_player("cy")]).round.id
    _, state = round_load(round_id=alone)
    assert state is not None and state.opened.beacon is not None  # the table has the beacon
    cy = state.opened.participants[0].player_id
    dealt = round_command(round_id=alone, command=PlaceBet(cy, (USDC,)))
    assert dealt.state.beacon_round == 0 and "BeaconAwaited" not in _types(alone)


def test_no_beacon_by_the_deadline_voids_and_refunds_every_stake(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(beaconsource, "signature_for", lambda round: None)  # unreachable
    players = [make_player("ann"), make_player("bob")]
    opened = round_open(table=make_table("duel"), players=players)
    round_id, deadline = opened.round.id, opened.state.deadline_ms
    assert deadline is not None
    assert sweep_beacons() == 0 and record_beacon(round_id) == "waiting"
    assert round_timeout(round_id=round_id, at_ms=deadline - 1).state.phase == "beacon"
    voided = round_timeout(round_id=round_id, at_ms=deadline).state
    assert voided.phase == "voided" and voided.voided is not None
    assert voided.voided.reason == "beacon_unavailable"
    assert voided.voided.evidence == (
        f"local-beacon round {voided.beacon_round} was not recorded within 30 s"
    )
    assert voided.server_seed is not None  # the seed is revealed
    assert [available(p) for p in players] == [FUNDS, FUNDS]  # nothing lost
    assert _types(round_id)[-2:] == ["RoundVoided", "ServerSeedRevealed"]
    assert RoundProof.objects.filter(round_id=round_id).exists()


def test_a_beacon_nudge_delivered_twice_records_once() -> None:
    players = [make_player("ann"), make_player("bob")]
    round_id = round_open(table=make_table("duel"), players=players).round.id
    _wait_until_published(round_id)
    assert record_beacon(round_id) == "recorded"
    count = len(_types(round_id))
    assert record_beacon(round_id) == "not_waiting"
    assert len(_types(round_id)) == count


def test_a_round_locked_under_another_beacon_is_left_to_void() -> None:
    players = [make_player("ann"), make_player("bob")]
    round_id = round_open(table=make_table("duel"), players=players).round.id
    with override_settings(LOCAL_BEACON_SEED="another operator key"):
        beaconsource.clear_caches()
        assert record_beacon(round_id) == "beacon_changed"
    beaconsource.clear_caches()
    assert _types(round_id)[-1] == "BeaconAwaited"


def test_the_players_view_names_the_beacon_round() -> None:
    players = [make_player("ann"), make_player("bob")]
    round_id = round_open(table=make_table("duel"), players=players).round.id
    client = APIClient()
    client.force_authenticate(players[0])
    view = client.get(f"/api/rounds/{round_id}/").json()["view"]
    _, state = round_load(round_id=round_id)
    assert state is not None and state.opened.beacon is not None
    assert view["phase"] == "beacon"
    assert view["beacon"] == {
        "name": "local-beacon",
        "public_key": state.opened.beacon.public_key,
        "round": state.beacon_round,
        "round_time": beacon_round_time(state.opened.beacon, state.beacon_round),
    }
    assert view["actions"] == []


def test_the_beacon_in_use_is_public() -> None:
    info = APIClient().get("/api/fairness/beacon/").json()
    spec = beaconsource.spec()
    assert spec is not None
    assert info == {
        "beacon": "local",
        "name": "local-beacon",
        "chain_hash": spec.chain_hash,
        "public_key": spec.public_key,
        "genesis_time": spec.genesis_time,
        "period": 3,
        "independent": False,
        "description": "operator-run beacon: not independent",
        "margin_s": 0,
        "wait_s": 30,
    }
    with override_settings(BEACON="off"):
        assert APIClient().get("/api/fairness/beacon/").json() == {"beacon": "off"}
