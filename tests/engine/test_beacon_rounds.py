"""Shared tables wait for public randomness: the lock names a future beacon round, the deal
waits for it, its randomness joins the shoe's client material, and no beacon means a void."""

from __future__ import annotations

import hashlib

import pytest

from casino.engine import errors as E
from casino.engine.audit import reenact
from casino.engine.commands import Hit, PlaceBet, RecordBeacon, Stand, Timeout
from casino.engine.errors import DomainError
from casino.engine.events import (
    BeaconAwaited,
    BeaconRecorded,
    BeaconSpec,
    BetPlaced,
    BettingClosed,
    DuelTimerStarted,
    PlayerCardDealt,
    RoundOpened,
    RoundVoided,
    beacon_round_after,
    event_from_dict,
    event_to_dict,
)
from casino.engine.evolve import BEACON, DUELING, PLAYING, VOIDED

from .helpers import T0, open_table, usdc

SPEC = BeaconSpec("local-beacon", "cd" * 32, "aa" * 96, 1_692_803_367, 3, 3, 30)
SIGNATURE = "8d" * 48
RANDOMNESS = hashlib.sha256(bytes.fromhex(SIGNATURE)).hexdigest()
# T0 is 1_700_000_000 s: + 3 s margin = ...003; rounds fall on genesis + 3k, so the first
# round strictly after it is at 1_700_000_004 s.
ROUND = (1_700_000_003 - SPEC.genesis_time) // 3 + 2
ROUND_TIME = SPEC.genesis_time + (ROUND - 1) * 3
DUEL_CARDS = ["TS", "9H", "5S", "7D", "5C"]


def test_the_round_is_the_first_after_lock_plus_margin() -> None:
    assert ROUND_TIME == 1_700_000_004
    assert beacon_round_after(SPEC, T0) == ROUND
    assert beacon_round_after(SPEC, T0 + 999) == ROUND  # the lock's second, floored
    # a lock at 1_700_000_001 s: + 3 = ...004, a round's own time: the next one is taken
    assert beacon_round_after(SPEC, T0 + 1_000) == ROUND + 1
    assert beacon_round_after(SPEC, 0) == 1  # before genesis: round 1


def _duel_waiting():  # type: ignore[no-untyped-def]
    return open_table("duel", DUEL_CARDS, players=2, stake=usdc(10), beacon=SPEC)


def test_a_duel_locks_and_waits_for_the_beacon() -> None:
    t = _duel_waiting()
    assert [type(e) for e in t.events] == [
        RoundOpened, BetPlaced, BetPlaced, BettingClosed, BeaconAwaited,
    ]  # fmt: skip
    assert t.events[-1] == BeaconAwaited(ROUND, ROUND_TIME, (ROUND_TIME + 30) * 1000)
    assert t.s.phase == BEACON and t.s.beacon_round == ROUND
    assert t.s.deadline_ms == (ROUND_TIME + 30) * 1000
    assert t.s.next_position == 0  # no card dealt
    with pytest.raises(DomainError) as err:
        t.do(Hit("p1"))
    assert err.value.code == E.ACTION_NOT_ALLOWED
    assert f"beacon round {ROUND}" in err.value.message


def test_the_beacon_deals_with_its_randomness_in_the_material() -> None:
    t = _duel_waiting()
    at = ROUND_TIME * 1000 + 250
    events = t.do(RecordBeacon(ROUND, SIGNATURE), at)
    material = f"seed-1|seed-2|local-beacon:{ROUND}:{RANDOMNESS}"
    assert events[0] == BeaconRecorded(ROUND, SIGNATURE, RANDOMNESS, material, at)
    assert [type(e) for e in events[1:]] == [PlayerCardDealt] * 4 + [DuelTimerStarted]
    assert [e.card for e in events[1:5]] == DUEL_CARDS[:4]  # type: ignore[union-attr]
    assert t.s.phase == DUELING and t.s.client_material == material
    t.do(Stand("p1"), at + 1000)
    t.do(Stand("p2"), at + 2000)
    assert t.s.settlement is not None
    assert reenact(t.events) == []


@pytest.mark.parametrize(
    ("command", "code"),
    [
        (RecordBeacon(ROUND + 1, SIGNATURE), E.BEACON_MISMATCH),
        (RecordBeacon(ROUND, SIGNATURE.upper()), E.BEACON_MISMATCH),
        (RecordBeacon(ROUND, SIGNATURE[:-2]), E.BEACON_MISMATCH),
    ],
)
def test_only_the_awaited_round_is_recorded(command: RecordBeacon, code: str) -> None:
    t = _duel_waiting()
    before = (t.state, len(t.events))
    with pytest.raises(DomainError) as err:
        t.do(command, ROUND_TIME * 1000)
    assert err.value.code == code
    assert (t.state, len(t.events)) == before


def test_a_round_is_not_recorded_before_it_is_published() -> None:
    t = _duel_waiting()
    with pytest.raises(DomainError) as err:
        t.do(RecordBeacon(ROUND, SIGNATURE), ROUND_TIME * 1000 - 1)
    assert err.value.code == E.ACTION_NOT_ALLOWED
    assert err.value.message == f"beacon round {ROUND} is published at {ROUND_TIME * 1000} ms"
    assert t.s.phase == BEACON


def test_no_beacon_by_the_deadline_voids_with_refunds() -> None:
    t = _duel_waiting()
    deadline = (ROUND_TIME + 30) * 1000
    with pytest.raises(DomainError) as err:
        t.do(RecordBeacon(ROUND, SIGNATURE), deadline)
    assert err.value.code == E.DEADLINE_PASSED
    assert t.do(Timeout(), deadline - 1) == []
    (voided,) = t.do(Timeout(), deadline)
    assert isinstance(voided, RoundVoided)
    assert voided.reason == "beacon_unavailable"
    assert voided.evidence == f"local-beacon round {ROUND} was not recorded within 30 s"
    assert [(r.player_id, r.amount) for r in voided.refunds] == [
        ("p1", usdc(10)), ("p2", usdc(10)),
    ]  # fmt: skip
    assert t.s.phase == VOIDED
    assert sum(t.balances().values()) == 0 and t.balances()["player:p1"] == 0
    assert reenact(t.events) == []


def test_duel_classic_waits_with_two_seats_and_not_with_one() -> None:
    cards = ["TS", "9H", "6C", "7D", "5C", "8S", "2H"]
    two = open_table("duel_classic", cards, players=2, beacon=SPEC)
    two.do(PlaceBet("p1", (usdc(1),)))
    two.do(PlaceBet("p2", (usdc(1),)))
    assert two.s.phase == BEACON
    events = two.do(RecordBeacon(ROUND, SIGNATURE), ROUND_TIME * 1000)
    assert type(events[0]) is BeaconRecorded and two.s.phase == PLAYING
    assert [e.card for e in events if type(e) is PlayerCardDealt] == ["TS", "9H", "7D", "5C"]  # type: ignore[union-attr]
    one = open_table("duel_classic", cards, players=1, beacon=SPEC)
    one.do(PlaceBet("p1", (usdc(1),)))
    assert one.s.phase == PLAYING and one.s.beacon_round == 0  # nothing to grind alone


def test_forged_beacon_records_fail_proof_of_play() -> None:
    t = _duel_waiting()
    t.do(RecordBeacon(ROUND, SIGNATURE), ROUND_TIME * 1000)
    i = next(i for i, e in enumerate(t.events) if type(e) is BeaconRecorded)
    recorded = t.events[i]
    assert isinstance(recorded, BeaconRecorded)
    forged = BeaconRecorded(
        recorded.round, recorded.signature, "00" * 32, recorded.client_material,
        recorded.recorded_at_ms,
    )  # fmt: skip
    problems = reenact([*t.events[:i], forged, *t.events[i + 1 :]])
    assert problems and "randomness" in problems[0]
    awaited = t.events[i - 1]
    early = BeaconAwaited(ROUND - 1, ROUND_TIME - 3, (ROUND_TIME + 27) * 1000)
    assert awaited != early
    problems = reenact([*t.events[: i - 1], early, *t.events[i:]])
    assert problems and f"version {i}" in problems[0]


def test_the_spec_is_in_the_opened_event_only_when_set() -> None:
    with_beacon = _duel_waiting().events[0]
    data = event_to_dict(with_beacon)
    assert data["beacon"] == {
        "name": "local-beacon", "chain_hash": "cd" * 32, "public_key": "aa" * 96,
        "genesis_time": 1_692_803_367, "period": 3, "margin_s": 3, "wait_s": 30,
    }  # fmt: skip
    assert event_from_dict(data) == with_beacon
    plain = open_table("duel", DUEL_CARDS, players=2, stake=usdc(10)).events[0]
    assert "beacon" not in event_to_dict(plain)
    assert event_from_dict(event_to_dict(plain)) == plain
