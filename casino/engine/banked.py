"""House-banked play (classic, atlantic_city, duel_classic): insurance, peek, turns, dealer."""

from __future__ import annotations

from casino.engine import errors as E
from casino.engine.cards import CARD_POINTS
from casino.engine.commands import Double, Hit, Split, Stand
from casino.engine.errors import DomainError
from casino.engine.events import (
    BettingClosed,
    DealerCardDealt,
    DealerPeeked,
    EvenMoneyTaken,
    HandDoubled,
    HandSplit,
    InsuranceDeclined,
    InsuranceOffered,
    InsuranceTaken,
    PlayerCardDealt,
    PlayerStood,
    RoundSettled,
    new_dealer_card,
    new_dealer_peeked,
    new_hole_card_revealed,
    new_player_card,
    new_player_stood,
    new_turn_started,
)
from casino.engine.evolve import (
    BLACKJACK,
    INS_EVEN_MONEY_OFFERED,
    INS_NONE,
    INS_OFFERED,
    INSURANCE,
    OPEN,
    PLAYING,
    STOOD,
    Box,
    Hand,
    Run,
    insurance_offer,
)
from casino.engine.rules import INSURANCE_HALF, INSURANCE_NONE
from casino.engine.settle import banked_results


def deal(run: Run, closed: BettingClosed | None = None) -> None:
    """Initial deal: two passes of every box in order, then the dealer (rules.hole_card_index
    says which dealer card is face down). Then insurance, peek, or the first turn.

    `closed`: the BettingClosed this command emits first, if not emitted yet (then both are
    folded as one state)."""
    s = run.state
    hole = s.rules.hole_card_index
    card_at = run.card_source()
    position = s.next_position
    cards: list[PlayerCardDealt | DealerCardDealt] = []
    for round_of_cards in (0, 1):
        for box in s.boxes:
            cards.append(
                new_player_card(position, card_at(position), box.player_id, box.box, 0, False)
            )
            position += 1
        cards.append(new_dealer_card(position, card_at(position), round_of_cards == hole))
        position += 1
    if closed is None:
        run.emit_deal(cards)  # one fold for the whole deal (the same state as card by card)
    else:
        run.emit_closed_deal(closed, cards)
    _after_deal(run)


def up_card(run: Run) -> str:
    dealer = run.state.dealer
    return dealer.cards[1 - run.state.rules.hole_card_index]


def _after_deal(run: Run) -> None:
    s = run.state
    rules = s.rules
    if (
        rules.insurance != INSURANCE_NONE
        and CARD_POINTS[s.dealer.cards[1 - rules.hole_card_index]] == 1  # up_card, inlined
        and any(insurance_offer(s, b) != INS_NONE for b in s.boxes)
    ):
        run.emit(InsuranceOffered(run.now_ms + rules.insurance_timeout_ms))
        return
    _after_insurance(run)


def _after_insurance(run: Run) -> None:
    s = run.state
    dealer = s.dealer
    if CARD_POINTS[dealer.cards[1 - s.rules.hole_card_index]] in s.rules.peek_up_points:
        # Two cards, never split: a blackjack is an ace and a ten (Hand.is_blackjack, inlined)
        blackjack = dealer.hard == 11 and dealer.has_ace
        if blackjack:
            run.emit(new_dealer_peeked(blackjack))
            _reveal_hole(run)
            settle(run)
            return
        next_turn(run, new_dealer_peeked(blackjack))
        return
    next_turn(run)


def _reveal_hole(run: Run) -> None:
    s = run.state
    if not s.revealed:
        index = s.rules.hole_card_index
        run.emit(new_hole_card_revealed(s.dealer.positions[index], s.dealer.cards[index]))


def next_turn(run: Run, peeked: DealerPeeked | None = None) -> None:
    """Start the first hand still open (play order = box order, then hand order), or let
    the dealer play when none is left. `peeked`: a DealerPeeked to emit first (folded with
    the TurnStarted as one state)."""
    s = run.state
    for i, box in enumerate(s.boxes):
        for index, hand in enumerate(box.hands):
            if hand.status == OPEN:
                deadline = run.now_ms + s.rules.turn_timeout_ms
                turn = new_turn_started(box.player_id, box.box, index, deadline)
                if peeked is None:
                    run.emit_turn(turn, i)
                else:
                    run.emit_peek_turn(peeked, turn, i)
                return
    if peeked is not None:
        run.emit(peeked)
    _dealer_plays(run)


def _dealer_plays(run: Run) -> None:
    s = run.state
    rules = s.rules
    hole = None  # the hole card is turned first (emitted with the draw, one fold for both)
    if not s.revealed:
        index = rules.hole_card_index
        hole = new_hole_card_revealed(s.dealer.positions[index], s.dealer.cards[index])
    live_statuses = (STOOD, BLACKJACK) if rules.blackjack_waits_for_dealer else (STOOD,)
    live = False
    for box in run.state.boxes:
        for hand in box.hands:
            live = live or hand.status in live_statuses
    # Reading (standard): with no hand left to beat, the dealer turns the hole card only.
    if live:
        # The dealer's cards are drawn on plain totals and folded in one go at the end.
        dealer = run.state.dealer
        hard, has_ace = dealer.hard, dealer.has_ace
        position = run.state.next_position
        card_at = None  # asked of the run only when a card is needed (no shoe: shoe_required)
        drawn: list[DealerCardDealt] = []
        while True:
            soft = has_ace and hard <= 11
            total = hard + 10 if soft else hard
            if total > 17 or (total == 17 and not (rules.dealer_hits_soft_17 and soft)):
                break
            if card_at is None:
                card_at = run.card_source()
            card = card_at(position)
            drawn.append(new_dealer_card(position, card, False))
            position += 1
            points = CARD_POINTS[card]
            hard += points
            has_ace = has_ace or points == 1
        if drawn or hole is not None:
            run.emit_hole_and_draw(hole, drawn)
    elif hole is not None:
        run.emit(hole)
    settle(run)


def settle(run: Run) -> None:
    """Emit RoundSettled: every hand against the dealer's hand as it stands."""
    hands, insurance = banked_results(run.state)
    dealer = run.state.dealer
    total = dealer.hard + 10 if dealer.has_ace and dealer.hard <= 11 else dealer.hard
    run.emit(RoundSettled(hands, insurance, 0, total, run.now_ms))


# --- insurance ---------------------------------------------------------------------------


def _offered_box(run: Run, player_id: str, box_no: int) -> Box:
    s = run.state
    if s.phase != INSURANCE:
        raise DomainError(E.ACTION_NOT_ALLOWED, "insurance is not on offer now")
    i = s.box_index(player_id, box_no)
    if i < 0:
        raise DomainError(E.ACTION_NOT_ALLOWED, f"no box {box_no} of yours in this round")
    box = s.boxes[i]
    if box.insurance_status not in (INS_OFFERED, INS_EVEN_MONEY_OFFERED):
        raise DomainError(E.ACTION_NOT_ALLOWED, "this box has no open insurance offer")
    return box


def take_insurance(run: Run, player_id: str, box_no: int, amount: int | None) -> None:
    box = _offered_box(run, player_id, box_no)
    if box.insurance_status != INS_OFFERED:
        raise DomainError(E.ACTION_NOT_ALLOWED, "a blackjack is offered even money instead")
    half = box.bet // 2
    chip = run.state.opened.options.chip_unit
    if amount is None:
        amount = half
    elif run.state.rules.insurance == INSURANCE_HALF and amount != half:
        raise DomainError(E.INVALID_AMOUNT, f"insurance is exactly half the bet: {half}")
    if amount <= 0:
        raise DomainError(E.INSUFFICIENT_STAKE, "insurance needs a positive amount")
    if amount > half:
        raise DomainError(E.BET_ABOVE_MAXIMUM, f"insurance is at most half the bet: {half}")
    if amount % chip and amount != half:
        raise DomainError(E.INVALID_AMOUNT, f"insurance must be a multiple of {chip}")
    run.emit(InsuranceTaken(player_id, box_no, amount))
    _after_answer(run)


def decline_insurance(run: Run, player_id: str, box_no: int) -> None:
    _offered_box(run, player_id, box_no)
    run.emit(InsuranceDeclined(player_id, box_no, False))
    _after_answer(run)


def take_even_money(run: Run, player_id: str, box_no: int) -> None:
    box = _offered_box(run, player_id, box_no)
    if box.insurance_status != INS_EVEN_MONEY_OFFERED:
        raise DomainError(E.ACTION_NOT_ALLOWED, "even money is only offered on a blackjack")
    run.emit(EvenMoneyTaken(player_id, box_no))
    _after_answer(run)


def _after_answer(run: Run) -> None:
    if all(
        b.insurance_status not in (INS_OFFERED, INS_EVEN_MONEY_OFFERED) for b in run.state.boxes
    ):
        _after_insurance(run)


def expire_insurance(run: Run) -> None:
    for b in run.state.boxes:
        if b.insurance_status in (INS_OFFERED, INS_EVEN_MONEY_OFFERED):
            run.emit(InsuranceDeclined(b.player_id, b.box, True))
    _after_insurance(run)


# --- the player's turn ---------------------------------------------------------------------


def _turn_hand(run: Run, player_id: str) -> tuple[Box, int, Hand]:
    s = run.state
    if s.phase != PLAYING or s.turn < 0:
        raise DomainError(E.ACTION_NOT_ALLOWED, "no hand is waiting for a decision")
    box = s.boxes[s.turn]
    if box.player_id != player_id:
        raise DomainError(E.NOT_YOUR_TURN, "another seat is playing")
    return box, s.turn_hand, box.hands[s.turn_hand]


def _after_action(run: Run) -> None:
    if run.state.turn < 0:  # the hand is over: stood, doubled, bust or 21
        next_turn(run)


def hit(run: Run, command: Hit, safety_net: bool) -> None:
    box, index, hand = _turn_hand(run, command.player_id)
    if hand.split_aces:
        raise DomainError(E.ACTION_NOT_ALLOWED, "split aces take one card each")
    if safety_net and not command.confirm:
        soft = hand.is_soft
        total = hand.total
        if (soft and total == 20) or (not soft and total >= 17):
            raise DomainError(E.CONFIRM_REQUIRED, f"hit on {'soft' if soft else 'hard'} {total}?")
    run.deal_player(box.player_id, box.box, index)
    _after_action(run)


def stand(run: Run, command: Stand) -> None:
    box, index, _ = _turn_hand(run, command.player_id)
    run.emit(new_player_stood(box.player_id, box.box, index, False))
    next_turn(run)


def stand_on_timeout(run: Run) -> None:
    s = run.state
    box = s.boxes[s.turn]
    run.emit(PlayerStood(box.player_id, box.box, s.turn_hand, True))
    next_turn(run)


def double(run: Run, command: Double) -> None:
    box, index, hand = _turn_hand(run, command.player_id)
    if len(hand.cards) != 2:
        raise DomainError(E.ACTION_NOT_ALLOWED, "double only on the first two cards of a hand")
    if hand.split and not run.state.rules.double_after_split:
        raise DomainError(E.ACTION_NOT_ALLOWED, "no double after a split at this table")
    run.emit(HandDoubled(box.player_id, box.box, index, hand.stake))
    run.deal_player(box.player_id, box.box, index)
    _after_action(run)


def split(run: Run, command: Split) -> None:
    box, index, hand = _turn_hand(run, command.player_id)
    rules = run.state.rules
    if len(hand.cards) != 2 or CARD_POINTS[hand.cards[0]] != CARD_POINTS[hand.cards[1]]:
        raise DomainError(E.ACTION_NOT_ALLOWED, "split needs two cards of equal value")
    if len(box.hands) >= rules.max_hands:
        raise DomainError(E.ACTION_NOT_ALLOWED, f"at most {rules.max_hands} hands per box")
    if hand.split_aces and not rules.resplit_aces:
        raise DomainError(E.ACTION_NOT_ALLOWED, "aces split once")
    run.emit(HandSplit(box.player_id, box.box, index, hand.stake))
    # Reading: both new hands get their second card at once, this hand first.
    run.deal_player(box.player_id, box.box, index)
    run.deal_player(box.player_id, box.box, index + 1)
    _after_action(run)  # this hand may already be over (21, or a split ace)
