"""The decider's scratchpad: every emitted event is folded at once, so later decisions in
the same command see the state the events so far describe (and `step` returns it)."""

from __future__ import annotations

from casino.engine.errors import SHOE_REQUIRED, DomainError
from casino.engine.events import DealerCardDealt, Event, PlayerCardDealt
from casino.engine.shoe import Shoe
from casino.engine.state import RoundState

from .evolve import HANDLERS


class Run:
    __slots__ = ("events", "now_ms", "shoe", "state")

    def __init__(self, state: RoundState, now_ms: int, shoe: Shoe | None) -> None:
        self.state = state
        self.now_ms = now_ms
        self.shoe = shoe
        self.events: list[Event] = []

    def emit(self, event: Event) -> None:
        """Record `event` and fold it (the same handlers `evolve` uses)."""
        self.events.append(event)
        self.state = HANDLERS[type(event)](self.state, event)

    def _card(self) -> tuple[int, str]:
        shoe = self.shoe
        if shoe is None:
            raise DomainError(SHOE_REQUIRED, "this command deals cards: pass the round's shoe")
        position = self.state.next_position
        return position, shoe.card_at(position)

    def deal_player(self, player_id: str, box: int, hand: int, hidden: bool = False) -> None:
        position, card = self._card()
        self.emit(PlayerCardDealt(position, card, player_id, box, hand, hidden))

    def deal_dealer(self, hole: bool = False) -> None:
        position, card = self._card()
        self.emit(DealerCardDealt(position, card, hole))
