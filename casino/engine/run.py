"""The decider's scratchpad: every emitted event is folded at once, so later decisions in
the same command see the state the events so far describe (and `step` returns it)."""

from __future__ import annotations

from collections.abc import Callable

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
    PlayerStood,
    RoundSettled,
    TurnStarted,
    new_dealer_card,
    new_player_card,
)
from casino.engine.evolve import (
    HANDLERS,
    fold_bets,
    fold_cards,
    fold_closed_deal,
    fold_deal,
    fold_dealer_draw,
    fold_duel_card,
    fold_duel_end,
    fold_duel_opening,
    fold_duel_stood,
    fold_hole_and_draw,
    fold_peek_turn,
    fold_turn,
)
from casino.engine.shoe import Shoe
from casino.engine.state import RoundState


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
        """Record `event` and fold it (the same handlers `evolve` uses)."""
        self.events.append(event)
        self.state = HANDLERS[type(event)](self.state, event)

    def emit_cards(self, events: list[PlayerCardDealt | DealerCardDealt]) -> None:
        """Record several card events and fold them at once (`evolve.fold_cards`: the same
        state as emitting them one by one, built once)."""
        self.events.extend(events)
        self.state = fold_cards(self.state, events)

    def emit_deal(self, events: list[PlayerCardDealt | DealerCardDealt]) -> None:
        """emit_cards for the initial deal (`evolve.fold_deal`)."""
        self.events.extend(events)
        self.state = fold_deal(self.state, events)

    def emit_closed_deal(
        self, closed: BettingClosed, events: list[PlayerCardDealt | DealerCardDealt]
    ) -> None:
        """emit(closed), then emit_deal(events): one fold (`evolve.fold_closed_deal`)."""
        self.events.append(closed)
        self.events.extend(events)
        self.state = fold_closed_deal(self.state, closed, events)

    def emit_duel_opening(
        self,
        bets: list[BetPlaced],
        closed: BettingClosed,
        events: list[PlayerCardDealt | DealerCardDealt],
        timer: DuelTimerStarted,
    ) -> None:
        """A duel's bets, close, deal and timer in that order, folded as one state
        (`evolve.fold_duel_opening`)."""
        recorded = self.events
        recorded.extend(bets)
        recorded.append(closed)
        recorded.extend(events)
        recorded.append(timer)
        self.state = fold_duel_opening(self.state, bets, closed, events, timer)

    def emit_dealer_draw(self, events: list[DealerCardDealt]) -> None:
        """emit_cards for the dealer's draw (`evolve.fold_dealer_draw`)."""
        self.events.extend(events)
        self.state = fold_dealer_draw(self.state, events)

    def emit_hole_and_draw(
        self, hole: HoleCardRevealed | None, events: list[DealerCardDealt]
    ) -> None:
        """The hole card turned (unless None), then the dealer's draw, folded as one state
        (`evolve.fold_hole_and_draw`)."""
        if hole is not None:
            self.events.append(hole)
        self.events.extend(events)
        self.state = fold_hole_and_draw(self.state, hole, events)

    def emit_duel_end(self, revealed: CardsRevealed, settled: RoundSettled) -> None:
        """emit(revealed), then emit(settled): one fold (`evolve.fold_duel_end`)."""
        self.events.append(revealed)
        self.events.append(settled)
        self.state = fold_duel_end(self.state, revealed, settled)

    def emit_bets(self, events: list[BetPlaced]) -> None:
        """Record several BetPlaced and fold them at once (`evolve.fold_bets`)."""
        self.events.extend(events)
        self.state = fold_bets(self.state, events)

    def emit_turn(self, event: TurnStarted, index: int) -> None:
        """emit(TurnStarted) for the box at `index` of state.boxes (`evolve.fold_turn`)."""
        self.events.append(event)
        self.state = fold_turn(self.state, event, index)

    def emit_peek_turn(self, peeked: DealerPeeked, event: TurnStarted, index: int) -> None:
        """emit(peeked), then emit_turn(event, index): one fold (`evolve.fold_peek_turn`)."""
        self.events.append(peeked)
        self.events.append(event)
        self.state = fold_peek_turn(self.state, peeked, event, index)

    def emit_duel_card(self, event: PlayerCardDealt, index: int) -> None:
        """emit(event) for a duel hit to the box at `index` of state.boxes
        (`evolve.fold_duel_card`: no box search)."""
        self.events.append(event)
        self.state = fold_duel_card(self.state, event, index)

    def emit_duel_stood(self, event: PlayerStood, index: int) -> None:
        """emit(event) for a duel stand of the box at `index` (`evolve.fold_duel_stood`)."""
        self.events.append(event)
        self.state = fold_duel_stood(self.state, event, index)

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

    def deal_dealer(self, hole: bool = False) -> None:
        position, card = self._card()
        self.emit(new_dealer_card(position, card, hole))
