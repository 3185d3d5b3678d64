"""Builders for engine tests: open a round on a stacked shoe and play commands through it."""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field

from casino.engine.commands import Command, OpenRound, PlaceBet
from casino.engine.decider import step
from casino.engine.events import BeaconSpec, Event, Participant, RoundOptions
from casino.engine.evolve import RoundState
from casino.engine.money import ledger_legs
from casino.engine.rules import USDC
from casino.engine.shoe import Shoe, StackedShoe

SERVER_SEED = "ab" * 32
COMMITMENT = hashlib.sha256(SERVER_SEED.encode("ascii")).hexdigest()
T0 = 1_700_000_000_000


def usdc(amount: float) -> int:
    return round(amount * USDC)


def options_for(ruleset: str, stake: int = 0) -> RoundOptions:
    if ruleset == "duel":
        return RoundOptions(min_bet=stake, max_bet=stake, stake=stake)
    if ruleset == "duel_classic":
        return RoundOptions(min_bet=usdc(0.5), max_bet=usdc(5000))
    return RoundOptions(min_bet=usdc(1), max_bet=usdc(1000))


@dataclass
class Table:
    """A round being played: every step appends its events and keeps the folded state."""

    shoe: Shoe
    state: RoundState | None = None
    events: list[Event] = field(default_factory=list)
    now: int = T0

    def do(self, command: Command, now: int | None = None) -> list[Event]:
        if now is not None:
            self.now = now
        events, state = step(self.state, command, self.now, self.shoe)
        self.events.extend(events)
        self.state = state
        return events

    @property
    def s(self) -> RoundState:
        assert self.state is not None
        return self.state

    def balances(self) -> Counter[str]:
        totals: Counter[str] = Counter()
        for event in self.events:
            for leg in ledger_legs(event):
                totals[leg.source] -= leg.amount
                totals[leg.destination] += leg.amount
        return totals


def participants(n: int, **player_options: bool) -> tuple[Participant, ...]:
    return tuple(Participant(f"p{i + 1}", f"seed-{i + 1}", **player_options) for i in range(n))


def open_table(
    ruleset: str,
    cards: list[str] | None = None,
    players: int = 1,
    shoe: Shoe | None = None,
    stake: int = 0,
    beacon: BeaconSpec | None = None,
    **player_options: bool,
) -> Table:
    table = Table(shoe if shoe is not None else StackedShoe(cards or []))
    table.do(
        OpenRound(
            round_id="round-1",
            table_id="table-1",
            ruleset=ruleset,
            chain_id="chain-1",
            nonce=7,
            commitment=COMMITMENT,
            participants=participants(players, **player_options),
            options=options_for(ruleset, stake),
            beacon=beacon,
        )
    )
    return table


def deal(ruleset: str, cards: list[str], bet: float = 10, **player_options: bool) -> Table:
    """One player, one box, bet placed: the cards are dealt."""
    table = open_table(ruleset, cards, **player_options)
    table.do(PlaceBet("p1", (usdc(bet),)))
    return table


def result(table: Table, hand: int = 0, box: int = 0, player: str = "p1") -> tuple[str, int]:
    """(outcome, gross return) of one hand in the settlement."""
    settlement = table.s.settlement
    assert settlement is not None, f"not settled: {table.s.phase}"
    for r in settlement.hands:
        if r.player_id == player and r.box == box and r.hand == hand:
            return r.outcome, r.gross_return
    raise AssertionError(f"no result for {player} box {box} hand {hand}")
