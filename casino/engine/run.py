"""The decider's scratchpad: every emitted event is folded at once, so later decisions in
the same command see the state the events so far describe (and `step` returns it).

Every event is folded by the one plain `evolve` handler for its type: `step` returns exactly
reduce(evolve, events, state), with no second copy of the fold to keep in line.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from casino.engine.errors import SHOE_REQUIRED, DomainError
from casino.engine.events import (
    BetPlaced,
    BettingClosed,
    CardsRevealed,
    DealerCardDealt,
    DealerPeeked,
    DuelTimerStarted,
    Event,
    HoleCardRevealed,
    PlayerCardDealt,
    RoundSettled,
    TurnStarted,
    new_player_card,
)
from casino.engine.evolve import RoundState, evolve, fold, fold_deal, fold_duel_opening
from casino.engine.shoe import Shoe


def start_run(state: RoundState, now_ms: int, shoe: Shoe | None) -> Run:
    """A Run with no events yet. (Run has no __init__: a Python __init__, reached through
    type_call once a command, cost more than these four stores.)"""
    run = Run()
    run.state = state
    run.now_ms = now_ms
    run.shoe = shoe
    run.events = []
    return run


class Run:
    __slots__ = ("events", "now_ms", "shoe", "state")

    state: RoundState
    now_ms: int
    shoe: Shoe | None
    events: list[Event]

    def emit(self, event: Event) -> None:
        """Record `event` and fold it."""
        self.events.append(event)
        self.state = evolve(self.state, event)

    def emit_all(self, events: Sequence[Event]) -> None:
        """emit(event) for each of `events`, in order (`evolve.fold`: the state is built
        once for all of them)."""
        self.state = fold(self.state, events)
        self.events.extend(events)

    # The decider's runs of events, named after the moment of the round that emits them:
    # each is emit_all of its events in stream order.

    def emit_deal(self, events: list[PlayerCardDealt | DealerCardDealt]) -> None:
        """The initial deal's cards (`evolve.fold_deal`)."""
        self.state = fold_deal(self.state, (), events, ())
        self.events.extend(events)

    def emit_closed_deal(
        self, closed: BettingClosed, events: list[PlayerCardDealt | DealerCardDealt]
    ) -> None:
        """Betting closes, then the initial deal (`evolve.fold_deal`)."""
        self.state = fold_deal(self.state, (closed,), events, ())
        self.events.append(closed)
        self.events.extend(events)

    def emit_duel_opening(
        self,
        bets: list[BetPlaced],
        closed: BettingClosed,
        events: list[PlayerCardDealt | DealerCardDealt],
        timer: DuelTimerStarted,
    ) -> None:
        """A duel's bets, close, deal and timer, in that order (`evolve.fold_duel_opening`)."""
        self.state = fold_duel_opening(self.state, bets, closed, events, timer)
        self.events.extend([*bets, closed, *events, timer])

    def emit_hole_and_draw(
        self, hole: HoleCardRevealed | None, events: list[DealerCardDealt]
    ) -> None:
        """The hole card turned (unless None: already face up), then the dealer's draw."""
        self.emit_all(events if hole is None else [hole, *events])

    def emit_duel_end(self, revealed: CardsRevealed, settled: RoundSettled) -> None:
        """The end of a duel: every hidden card shown, then the settlement (`evolve.fold`)."""
        events = (revealed, settled)
        self.state = fold(self.state, events)
        self.events.extend(events)

    def emit_turn(self, event: TurnStarted, index: int) -> None:
        """emit(event). `index` (the box's place in state.boxes) is not needed: the fold
        finds the box itself."""
        self.events.append(event)
        self.state = evolve(self.state, event)

    def emit_peek_turn(self, peeked: DealerPeeked, event: TurnStarted, index: int) -> None:
        """The dealer's peek, then the first turn (`index`: as emit_turn)."""
        self.emit_all((peeked, event))

    def card_source(self) -> Callable[[int], str]:
        """The shoe's `card_at`, for callers that build a batch of card events (one call per
        card instead of two), or shoe_required when the command came without a shoe."""
        shoe = self.shoe
        if shoe is None:
            raise DomainError(SHOE_REQUIRED, "this command deals cards: pass the round's shoe")
        return shoe.card_at

    def _card(self) -> tuple[int, str]:
        shoe = self.shoe
        if shoe is None:
            raise DomainError(SHOE_REQUIRED, "this command deals cards: pass the round's shoe")
        position = self.state.next_position
        return position, shoe.card_at(position)

    def deal_player(self, player_id: str, box: int, hand: int, hidden: bool = False) -> None:
        position, card = self._card()
        self.emit(new_player_card(position, card, player_id, box, hand, hidden))
