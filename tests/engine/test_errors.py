"""One test per domain error code: each refusal leaves the state unchanged."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from casino.engine import errors as E
from casino.engine.commands import (
    Double,
    Hit,
    OpenRound,
    PlaceBet,
    RecordBeacon,
    RevealSeed,
    Stand,
    TakeInsurance,
    Timeout,
    VoidRound,
)
from casino.engine.decider import decide
from casino.engine.errors import DomainError
from casino.engine.events import RoundOptions

from .helpers import COMMITMENT, SERVER_SEED, T0, Table, deal, open_table, participants, usdc


def _refused(table: Table, command: object, now: int | None = None) -> str:
    before = (table.state, len(table.events))
    with pytest.raises(DomainError) as err:
        table.do(command, now)  # type: ignore[arg-type]
    assert (table.state, len(table.events)) == before
    return err.value.code


def _settled() -> Table:
    t = deal("classic", ["TS", "TD", "9H", "8C"])
    t.do(Stand("p1"))
    return t


def not_your_turn() -> str:
    t = open_table("duel_classic", ["TS", "9S", "6D", "6H", "9H", "TC"], players=2)
    t.do(PlaceBet("p1", (usdc(1),)))
    t.do(PlaceBet("p2", (usdc(1),)))
    return _refused(t, Stand("p2"))


def action_not_allowed() -> str:
    t = deal("classic", ["TS", "7D", "5H", "9C", "2S"])
    t.do(Hit("p1"))
    return _refused(t, Double("p1"))  # three cards


def bet_below_minimum() -> str:
    return _refused(open_table("classic"), PlaceBet("p1", (usdc(0.99),)))


def bet_above_maximum() -> str:
    return _refused(open_table("classic"), PlaceBet("p1", (usdc(1000.01),)))


def insufficient_stake() -> str:
    return _refused(open_table("atlantic_city"), PlaceBet("p1", (0, 0, 0)))


def round_finished() -> str:
    return _refused(_settled(), Hit("p1"))


def invalid_amount() -> str:
    return _refused(open_table("classic"), PlaceBet("p1", (usdc(1) + 5_000,)))


def not_a_participant() -> str:
    return _refused(deal("classic", ["TS", "7D", "5H", "9C"]), Hit("stranger"))


def already_bet() -> str:
    t = open_table("duel_classic", players=2)
    t.do(PlaceBet("p1", (usdc(1),)))
    return _refused(t, PlaceBet("p1", (usdc(1),)))


def confirm_required() -> str:
    return _refused(deal("classic", ["TS", "7D", "7H", "9C"], safety_net=True), Hit("p1"))


def deadline_passed() -> str:
    t = deal("classic", ["TS", "7D", "5H", "9C"])
    return _refused(t, Stand("p1"), now=T0 + 60_000)


def shoe_required() -> str:
    t = open_table("classic")
    with pytest.raises(DomainError) as err:
        decide(t.s, PlaceBet("p1", (usdc(1),)), T0, None)
    return err.value.code


def invalid_table() -> str:
    command = OpenRound(
        "r", "t", "classic", "c", 1, COMMITMENT, participants(2), RoundOptions(usdc(1), usdc(10))
    )
    return _refused(Table(shoe=open_table("classic").shoe), command)


def round_already_open() -> str:
    t = open_table("classic")
    command = OpenRound(
        "r", "t", "classic", "c", 1, COMMITMENT, participants(1), RoundOptions(usdc(1), usdc(10))
    )
    return _refused(t, command)


def round_not_open() -> str:
    return _refused(Table(shoe=open_table("classic").shoe), Hit("p1"))


def round_not_finished() -> str:
    return _refused(deal("classic", ["TS", "7D", "5H", "9C"]), RevealSeed(SERVER_SEED))


def seed_mismatch() -> str:
    return _refused(_settled(), RevealSeed("cd" * 32))


def seed_already_revealed() -> str:
    t = _settled()
    t.do(RevealSeed(SERVER_SEED))
    return _refused(t, RevealSeed(SERVER_SEED))


def already_voided() -> str:
    t = deal("classic", ["TS", "7D", "5H", "9C"])
    t.do(VoidRound("shoe malfunction"))
    return _refused(t, VoidRound("again"))


def beacon_mismatch() -> str:
    from tests.engine.test_beacon_rounds import ROUND, SIGNATURE, SPEC

    t = open_table("duel", ["TS", "9H", "AS", "7D"], players=2, stake=usdc(10), beacon=SPEC)
    return _refused(t, RecordBeacon(ROUND + 1, SIGNATURE))


SCENARIOS: dict[str, Callable[[], str]] = {
    E.NOT_YOUR_TURN: not_your_turn,
    E.ACTION_NOT_ALLOWED: action_not_allowed,
    E.BET_BELOW_MINIMUM: bet_below_minimum,
    E.BET_ABOVE_MAXIMUM: bet_above_maximum,
    E.INSUFFICIENT_STAKE: insufficient_stake,
    E.ROUND_FINISHED: round_finished,
    E.INVALID_AMOUNT: invalid_amount,
    E.NOT_A_PARTICIPANT: not_a_participant,
    E.ALREADY_BET: already_bet,
    E.CONFIRM_REQUIRED: confirm_required,
    E.DEADLINE_PASSED: deadline_passed,
    E.SHOE_REQUIRED: shoe_required,
    E.INVALID_TABLE: invalid_table,
    E.ROUND_ALREADY_OPEN: round_already_open,
    E.ROUND_NOT_OPEN: round_not_open,
    E.ROUND_NOT_FINISHED: round_not_finished,
    E.SEED_MISMATCH: seed_mismatch,
    E.SEED_ALREADY_REVEALED: seed_already_revealed,
    E.ALREADY_VOIDED: already_voided,
    E.BEACON_MISMATCH: beacon_mismatch,
}


def test_every_code_has_a_scenario() -> None:
    assert set(SCENARIOS) == set(E.ALL_CODES)


@pytest.mark.parametrize("code", sorted(SCENARIOS))
def test_error_code(code: str) -> None:
    assert SCENARIOS[code]() == code


def test_insurance_refused_when_not_offered() -> None:
    t = deal("classic", ["TS", "7D", "5H", "9C"])
    assert _refused(t, TakeInsurance("p1")) == E.ACTION_NOT_ALLOWED


def test_timeout_without_an_expired_deadline_changes_nothing() -> None:
    t = deal("classic", ["TS", "7D", "5H", "9C"])
    assert t.do(Timeout(), now=T0 + 59_999) == []


def test_a_table_that_passed_its_checks_is_checked_again_under_other_rules() -> None:
    # The decider skips re-checking the very same participants and options objects it last
    # accepted; under another rule set (duel seats 2..8) the same one seat must be refused.
    seats = participants(1)
    limits = RoundOptions(min_bet=usdc(1), max_bet=usdc(1), stake=usdc(1))

    def opening(ruleset: str) -> OpenRound:
        return OpenRound("r", "t", ruleset, "c", 1, COMMITMENT, seats, limits)

    for _ in range(2):
        assert [e.type for e in decide(None, opening("classic"), T0, None)] == ["RoundOpened"]
        with pytest.raises(DomainError) as refused:
            decide(None, opening("duel"), T0, None)
        assert refused.value.code == E.INVALID_TABLE
