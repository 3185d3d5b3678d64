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
    client_material,
    new_bet_placed,
    new_betting_closed,
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


def bet_and_deal(run: Run, stake: int) -> None:
    """The rest of the command that opens a duel (004: "all players betting the set limit"):
    every seat bets `stake` on box 0, betting closes, `deal` and its timer; the state is
    folded once for all of them (`Run.emit_duel_opening`)."""
    s = run.state
    participants = s.opened.participants
    bets = [new_bet_placed(p.player_id, 0, stake) for p in participants]
    closed = new_betting_closed(client_material(participants), run.now_ms)
    card_at = run.card_source()
    position = s.next_position
    cards: list[PlayerCardDealt | DealerCardDealt] = []
    for hidden in (False, True):  # as `deal`: the boxes are the seats in order, box 0 each
        for p in participants:
            cards.append(new_player_card(position, card_at(position), p.player_id, 0, 0, hidden))
            position += 1
    timer = new_duel_timer_started(run.now_ms + s.rules.duel_timer_ms)
    run.emit_duel_opening(bets, closed, cards, timer)
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
        if b.hands[0].status == OPEN:
            return
    # One pass over the boxes, plain loops and list displays, Hand.total and .is_blackjack
    # inlined: this runs once per duel round (issue 3 speed work).
    hidden: list[tuple[int, str, str]] = []
    stakes: list[int] = []
    totals: list[int] = []
    ranked: list[tuple[int, bool]] = []
    for b in boxes:
        hand = b.hands[0]
        player_id, cards, positions = b.player_id, hand.cards, hand.positions
        for k in range(1, len(cards)):  # every card after the face-up first one
            hidden.append((positions[k], player_id, cards[k]))
        hard = hand.hard
        total = hard + 10 if hand.has_ace and hard <= 11 else hard
        stakes.append(hand.stake)
        totals.append(total)
        ranked.append((total, hand.has_ace and hard == 11 and len(cards) == 2 and not hand.split))
    hidden.sort()  # shoe order across the seats
    revealed = CardsRevealed(tuple([new_revealed_card(p, pos, card) for pos, p, card in hidden]))
    s = run.state
    gross, fee = duel_payouts(ranked, s.opened.options.stake, s.rules.fee_bps_for(len(boxes)))
    # the pot shared by several, or one winner
    won = "split" if len(gross) - gross.count(0) > 1 else "win"
    results = tuple(
        [
            new_hand_result(b.player_id, b.box, 0, won if g > 0 else "lose", stake, g, t)
            for b, stake, g, t in zip(boxes, stakes, gross, totals, strict=True)
        ]
    )
    run.emit_duel_end(revealed, RoundSettled(results, (), fee, 0, run.now_ms))
