"""The beacon against PostgreSQL, for real: the sweeps of several workers and a nudge
delivered twice reach the same waiting round at the same moment, and it records its beacon
round once, deals once, and a stand racing the beacon is refused without touching the round."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from django.test import override_settings

from casino.engine.commands import Stand
from casino.engine.events import beacon_round_time
from casino.eventstore.models import StoredEvent
from casino.platform.errors import ApplicationError
from casino.rounds import services
from casino.rounds.stream import round_load
from casino.rounds.tasks import record_beacon, sweep_beacons
from fairness import beaconsource
from ledger.reconcile import ledger_reconcile
from tests.casino.conftest import make_player, make_table
from tests.casino.test_round_concurrency import in_parallel

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def local_beacon() -> Iterator[None]:
    with override_settings(BEACON="local", BEACON_MARGIN_S=0):
        beaconsource.clear_caches()
        yield
    beaconsource.clear_caches()


def test_racing_sweeps_and_nudges_record_the_beacon_once() -> None:
    players = [make_player(f"racer{i}") for i in range(3)]
    opened = services.round_open(table=make_table("duel"), players=players)
    round_id, state = opened.round.id, opened.state
    assert state.phase == "beacon" and state.opened.beacon is not None
    due = beacon_round_time(state.opened.beacon, state.beacon_round)
    time.sleep(max(0.0, due - time.time()) + 0.05)

    def stand() -> object:
        return services.round_command(round_id=round_id, command=Stand(str(players[0].pk)))

    results = in_parallel(
        [sweep_beacons, sweep_beacons, lambda: record_beacon(round_id),
         lambda: record_beacon(round_id), stand]
    )  # fmt: skip
    recorded = [r for r in results[:4] if r in (1, "recorded")]
    assert len(recorded) == 1, results  # one sweep or nudge recorded it; the rest found it done
    assert all(r in (0, 1, "recorded", "not_waiting") for r in results[:4]), results
    stood = results[4]
    if isinstance(stood, ApplicationError):  # the stand came first: refused while waiting
        assert stood.code == "action_not_allowed"
    types = list(
        StoredEvent.objects.filter(stream_id=round_id)
        .order_by("version")
        .values_list("type", flat=True)
    )
    assert types.count("BeaconRecorded") == 1
    assert types.count("PlayerCardDealt") == 2 * len(players)  # dealt once
    versions = list(
        StoredEvent.objects.filter(stream_id=round_id).values_list("version", flat=True)
    )
    assert sorted(versions) == list(range(1, len(versions) + 1))
    _, after = round_load(round_id=round_id)
    assert after is not None and after.phase in ("dueling", "settled")
    assert ledger_reconcile().ok
