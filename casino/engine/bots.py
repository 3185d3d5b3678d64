"""Bots: the next command a basic-strategy player would send in a given round state.

Used by `manage.py play` (through the round service) and by the playing client (through the
REST API); the simulator plays whole rounds in-process with the same strategy. Pure.
"""

from __future__ import annotations

from casino.engine.commands import (
    Command,
    DeclineInsurance,
    Double,
    Hit,
    PlaceBet,
    Split,
    Stand,
)
from casino.engine.evolve import (
    BETTING,
    DUELING,
    INS_EVEN_MONEY_OFFERED,
    INS_OFFERED,
    INSURANCE,
    OPEN,
    PLAYING,
    RoundState,
)
from casino.engine.rules import DUEL
from casino.engine.strategy import DOUBLE, DUEL_DEFAULT, HIT, SPLIT, basic_strategy
from casino.engine.views import allowed_moves

_MOVES = {HIT: Hit, DOUBLE: Double, SPLIT: Split}


def bot_command(
    state: RoundState, player_id: str, bets: tuple[int, ...] | None = None
) -> Command | None:
    """The command `player_id` sends now, or None when it is not their move.

    `bets` are the amounts per box at the betting stage (default: the table minimum on one box).
    """
    if state.finished:
        return None
    if state.phase == BETTING:
        if any(b.player_id == player_id for b in state.boxes):
            return None
        return PlaceBet(player_id, bets or (state.opened.options.min_bet,))
    if state.phase == INSURANCE:
        for box in state.boxes:
            if box.player_id == player_id and box.insurance_status in (
                INS_OFFERED,
                INS_EVEN_MONEY_OFFERED,
            ):
                return DeclineInsurance(player_id, box.box)  # basic strategy never insures
        return None
    if state.phase == DUELING and state.rules.kind == DUEL:
        for box in state.boxes:
            if box.player_id == player_id and box.hands[0].status == OPEN:
                move = DUEL_DEFAULT.move(box.hands[0].cards)
                return Hit(player_id) if move == HIT else Stand(player_id)
        return None
    if state.phase == PLAYING and state.turn >= 0:
        box = state.boxes[state.turn]
        if box.player_id != player_id:
            return None
        hand = box.hands[state.turn_hand]
        up = state.dealer.cards[1 - state.rules.hole_card_index]
        move = basic_strategy(
            hand.cards,
            up,
            allowed_moves(state.rules, state),
            double_after_split=state.rules.double_after_split,
        )
        return _MOVES[move](player_id) if move in _MOVES else Stand(player_id)
    return None
