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
    HandResult,
    PlayerCardDealt,
    PlayerStood,
    RevealedCard,
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
from casino.engine.evolve import DUELING, OPEN, Box, Run
from casino.engine.settle import duel_payouts


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
    bets = []  # plain loops: a list comprehension is a function call more
    for p in participants:
        bets.append(new_bet_placed(p.player_id, 0, stake))
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


def _own_box(run: Run, player_id: str) -> Box:
    """The player's box, if its hand may still act. Every seat of a duel has its box, so a
    player without one is not seated: not_a_participant, as the decider's seat check says."""
    s = run.state
    for box in s.boxes:
        if box.player_id == player_id:
            if s.phase != DUELING:
                raise DomainError(E.ACTION_NOT_ALLOWED, "the duel is not in play")
            if box.hands[0].status != OPEN:
                raise DomainError(E.ACTION_NOT_ALLOWED, "your hand is already finished")
            return box
    raise DomainError(E.NOT_A_PARTICIPANT, "you are not seated in this round")


def hit(run: Run, player_id: str) -> None:
    box = _own_box(run, player_id)
    position = run.state.next_position
    card = run.card_source()(position)
    run.emit(new_player_card(position, card, player_id, box.box, 0, True))
    finish_if_done(run)


def stand(run: Run, player_id: str) -> None:
    box = _own_box(run, player_id)
    run.emit(new_player_stood(player_id, box.box, 0, False))
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
    # One pass over the boxes, plain loops (a list comprehension is a function call here),
    # Hand.total and .is_blackjack inlined: this runs once per duel round.
    s = run.state
    shown: list[RevealedCard | None] = [None] * s.next_position
    seats: list[tuple[str, int, int, int]] = []
    ranked: list[tuple[int, bool]] = []
    for b in boxes:
        player_id, number, _, hands, _, _ = b
        cards, positions, stake, hard, has_ace, split, _, _, _ = hands[0]
        for k in range(1, len(cards)):  # every card after the face-up first one
            position = positions[k]
            shown[position] = new_revealed_card(player_id, position, cards[k])
        total = hard + 10 if has_ace and hard <= 11 else hard
        seats.append((player_id, number, stake, total))
        ranked.append((total, has_ace and hard == 11 and len(cards) == 2 and not split))
    # Each card sits at its shoe position: what is left of the list is the shoe order.
    revealed = CardsRevealed(tuple(filter(None, shown)))
    gross, fee = duel_payouts(ranked, s.opened.options.stake, s.rules.fee_bps_for(len(boxes)))
    # the pot shared by several, or one winner
    won = "split" if len(gross) - gross.count(0) > 1 else "win"
    results: list[HandResult] = []
    for (player_id, number, stake, total), g in zip(seats, gross, strict=True):
        results.append(
            new_hand_result(player_id, number, 0, won if g > 0 else "lose", stake, g, total)
        )
    run.emit_duel_end(revealed, RoundSettled(tuple(results), (), fee, 0, run.now_ms))
