"""Duel (player against player): everyone acts at once until all stand or the 30 s timer ends.

Visibility (reading of 004 "only 1 of the other players cards"): each player's *first*
card (the lower shoe position) is dealt face up; the second card and every hit are hidden
from the other players until CardsRevealed. Others see that a card was drawn, not which.
"""

from __future__ import annotations

from casino.engine import errors as E
from casino.engine.errors import DomainError
from casino.engine.events import (
    CardsRevealed,
    DealerCardDealt,
    PlayerCardDealt,
    PlayerStood,
    RoundSettled,
    new_duel_timer_started,
    new_hand_result,
    new_player_card,
    new_player_stood,
    new_revealed_card,
)
from casino.engine.run import Run
from casino.engine.settle import duel_payouts
from casino.engine.state import DUELING, OPEN


def deal(run: Run) -> None:
    """Two passes over the seats in order; the first card face up, the second hidden."""
    card_at = run.card_source()
    position = run.state.next_position
    cards: list[PlayerCardDealt | DealerCardDealt] = []
    for round_of_cards in (0, 1):
        for box in run.state.boxes:
            card = card_at(position)
            cards.append(
                new_player_card(position, card, box.player_id, box.box, 0, round_of_cards == 1)
            )
            position += 1
    run.emit_deal(cards)  # one fold for the whole deal (the same state as card by card)
    run.emit(new_duel_timer_started(run.now_ms + run.state.rules.duel_timer_ms))
    finish_if_done(run)


def _own_box(run: Run, player_id: str) -> int:
    """The index in state.boxes of the player's box, if its hand may still act."""
    s = run.state
    if s.phase != DUELING:
        raise DomainError(E.ACTION_NOT_ALLOWED, "the duel is not in play")
    for i, box in enumerate(s.boxes):
        if box.player_id == player_id:
            if box.hands[0].status != OPEN:
                raise DomainError(E.ACTION_NOT_ALLOWED, "your hand is already finished")
            return i
    raise DomainError(E.NOT_A_PARTICIPANT, "you are not in this duel")


def hit(run: Run, player_id: str) -> None:
    index = _own_box(run, player_id)
    position = run.state.next_position
    card = run.card_source()(position)
    # The box's index is known here: fold without searching the boxes again.
    run.emit_duel_card(
        new_player_card(position, card, player_id, run.state.boxes[index].box, 0, True), index
    )
    finish_if_done(run)


def stand(run: Run, player_id: str) -> None:
    index = _own_box(run, player_id)
    run.emit_duel_stood(new_player_stood(player_id, run.state.boxes[index].box, 0, False), index)
    finish_if_done(run)


def expire(run: Run) -> None:
    """The timer ran out: whoever has not finished stands (004)."""
    for box in run.state.boxes:
        if box.hands[0].status == OPEN:
            run.emit(PlayerStood(box.player_id, box.box, 0, True))
    finish_if_done(run)


def finish_if_done(run: Run) -> None:
    """Once no hand is open: CardsRevealed (every hidden card), then RoundSettled."""
    boxes = run.state.boxes
    for b in boxes:  # runs after every duel action: a plain loop, no generator
        if b.hands[0].status != OPEN:
            continue
        return
    # Plain loops and list displays below instead of nested generators, zip(strict=True) and
    # a list copy per hand: this runs once per duel round (issue 3 speed work).
    hidden: list[tuple[int, str, str]] = []
    for b in boxes:
        hand = b.hands[0]
        player_id, cards = b.player_id, hand.cards
        for k in range(1, len(cards)):  # every card after the face-up first one
            hidden.append((hand.positions[k], player_id, cards[k]))
    hidden.sort()  # shoe order across the seats
    run.emit(CardsRevealed(tuple([new_revealed_card(pid, pos, card) for pos, pid, card in hidden])))
    s = run.state  # CardsRevealed leaves the boxes as they were
    hands = [b.hands[0] for b in boxes]
    totals = [h.total for h in hands]
    gross, fee = duel_payouts(
        [(t, h.is_blackjack) for t, h in zip(totals, hands, strict=True)],
        s.opened.options.stake,
        s.rules.fee_bps_for(len(hands)),
    )
    winners = 0
    for g in gross:
        if g:
            winners += 1
    won = "split" if winners > 1 else "win"  # the pot shared by several, or one winner
    results = tuple(
        [
            new_hand_result(b.player_id, b.box, 0, won if g > 0 else "lose", h.stake, g, t)
            for b, h, g, t in zip(boxes, hands, gross, totals, strict=True)
        ]
    )
    run.emit(RoundSettled(results, (), fee, 0, run.now_ms))


_finish_if_done = finish_if_done  # the old private name, still used by fairness/replay.py
