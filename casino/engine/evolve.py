"""evolve(state, event) -> state: the one fold both live play and replay use."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Final

from casino.engine.cards import CARD_POINTS
from casino.engine.events import (
    BetPlaced,
    BettingClosed,
    CardsRevealed,
    DealerCardDealt,
    DealerPeeked,
    DuelTimerStarted,
    EvenMoneyTaken,
    Event,
    HandDoubled,
    HandSplit,
    HoleCardRevealed,
    InsuranceDeclined,
    InsuranceOffered,
    InsuranceTaken,
    PlayerCardDealt,
    PlayerStood,
    RoundOpened,
    RoundSettled,
    RoundVoided,
    ServerSeedRevealed,
    TurnStarted,
)
from casino.engine.insurance import insurance_offer
from casino.engine.rules import DUEL, RULESETS
from casino.engine.state import (
    BETTING,
    BLACKJACK,
    BUST,
    DUELING,
    EMPTY_HAND,
    EVEN_MONEY,
    INS_DECLINED,
    INS_EVEN_MONEY,
    INS_NONE,
    INS_TAKEN,
    INSURANCE,
    OPEN,
    PLAYING,
    SETTLED,
    STOOD,
    VOIDED,
    Box,
    Hand,
    RoundState,
)


class ReplayError(ValueError):
    """An event that cannot follow the state (tampered or reordered stream)."""


# Field positions: the hot handlers copy the state tuple and set fields by position, which
# is several times cheaper than NamedTuple._replace (measured; see the issue 3 notes).
_F = {name: i for i, name in enumerate(RoundState._fields)}
_BOXES, _DEALER, _NEXT = _F["boxes"], _F["dealer"], _F["next_position"]
assert _DEALER == _BOXES + 1 and _NEXT == _DEALER + 1, "card handlers rely on this order"


def _setter(*names: str) -> Callable[..., RoundState]:
    """A function (state, *values) -> a copy of state with the named fields set, built as
    one tuple display: e.g. _setter("turn", "deadline_ms")(s, -1, None)."""
    items = [name if name in names else f"s[{i}]" for i, name in enumerate(RoundState._fields)]
    source = (
        f"def set_fields(s, {', '.join(names)}):\n    return new(RoundState, ({', '.join(items)},))"
    )
    namespace: dict[str, Any] = {"new": tuple.__new__, "RoundState": RoundState}
    exec(source, namespace)  # generated once at import, like dataclasses' own __init__
    setter: Callable[..., RoundState] = namespace["set_fields"]
    return setter


_set_boxes = _setter("boxes")
_set_closed = _setter("phase", "client_material", "deadline_ms")
_set_hand_over = _setter("boxes", "next_position", "turn", "deadline_ms")
_set_peeked = _setter("phase", "dealer_blackjack", "deadline_ms")
_set_revealed = _setter("revealed", "deadline_ms")
_set_turn = _setter("phase", "turn", "turn_hand", "deadline_ms")
_set_stood = _setter("boxes", "turn", "deadline_ms")
_set_settled = _setter("phase", "settlement", "turn", "deadline_ms")
_set_offered = _setter("phase", "boxes", "deadline_ms")
_set_timer = _setter("phase", "deadline_ms")
_set_cards = _setter("boxes", "dealer", "next_position", "turn", "deadline_ms")
_set_closed_deal = _setter(
    "phase", "boxes", "dealer", "next_position", "deadline_ms", "client_material"
)
_set_hole_draw = _setter("dealer", "next_position", "revealed")
_set_peek_turn = _setter("phase", "turn", "turn_hand", "deadline_ms", "dealer_blackjack")
_set_duel_end = _setter("phase", "turn", "deadline_ms", "revealed", "settlement")
_set_seed = _setter("server_seed")


def _add_card(hand: Hand, card: str, position: int) -> Hand:
    """The hand with one more card, and its status after it (auto-stand at 21, bust)."""
    # The fields unpacked at once: a NamedTuple field read by name is a descriptor call each.
    cards, positions, stake, hard, has_ace, split, split_aces, doubled, status = hand
    p = CARD_POINTS[card]
    hard += p
    has_ace = has_ace or p == 1
    total = hard + 10 if has_ace and hard <= 11 else hard
    n = len(cards) + 1
    if total > 21:
        status = BUST
    elif n == 2 and total == 21 and not split:
        status = BLACKJACK
    elif total == 21 or doubled or (split_aces and n == 2):
        status = STOOD  # 21 stands by itself; a double and a split ace take one card only
    # tuple.__new__ skips NamedTuple's Python-level __new__ (same value, one call less)
    return tuple.__new__(
        Hand,
        (
            (*cards, card),
            (*positions, position),
            stake,
            hard,
            has_ace,
            split,
            split_aces,
            doubled,
            status,
        ),
    )


def _replace_hand(box: Box, index: int, hand: Hand) -> Box:
    hands = box.hands
    return tuple.__new__(Box, (*box[:3], (*hands[:index], hand, *hands[index + 1 :]), *box[4:]))


def _replace_box(boxes: tuple[Box, ...], index: int, box: Box) -> tuple[Box, ...]:
    return (*boxes[:index], box, *boxes[index + 1 :])


def _find_box(state: RoundState, player_id: str, box: int) -> int:
    for i, b in enumerate(state.boxes):
        if b.box == box and b.player_id == player_id:
            return i
    raise ReplayError(f"no box {box} for player {player_id!r}")


def _opened(state: RoundState | None, e: RoundOpened) -> RoundState:
    if state is not None:
        raise ReplayError("round already opened")
    return tuple.__new__(  # RoundState(...) without NamedTuple's Python-level __new__
        RoundState,
        (
            e,
            RULESETS[e.ruleset],
            BETTING,
            (),
            EMPTY_HAND,
            0,
            -1,
            0,
            e.betting_deadline_ms,
            False,
            False,
            "",
            None,
            None,
            None,
        ),
    )


def _bet(s: RoundState, e: BetPlaced) -> RoundState:
    hand = tuple.__new__(Hand, ((), (), e.amount, 0, False, False, False, False, OPEN))
    box = tuple.__new__(Box, (e.player_id, e.box, e.amount, (hand,), 0, INS_NONE))
    if not s.boxes:
        return _set_boxes(s, (box,))
    seat = {p.player_id: i for i, p in enumerate(s.opened.participants)}
    last = s.boxes[-1]
    if (seat[last.player_id], last.box) <= (seat[e.player_id], e.box):
        # Seats bet in order: the boxes are already sorted, so the stable sort below would
        # put the new box last (also on an equal key: the sort keeps the earlier box first).
        return _set_boxes(s, (*s.boxes, box))
    boxes = sorted((*s.boxes, box), key=lambda b: (seat[b.player_id], b.box))
    return _set_boxes(s, tuple(boxes))


def fold_bets(s: RoundState, events: list[BetPlaced]) -> RoundState:
    """reduce(_bet, events, s), sorting the boxes once: a duel opens with every seat's bet
    at once. The boxes end in the same (seat, box) order as when sorted after each bet."""
    return _set_boxes(s, _bet_boxes(s, events))


def _bet_boxes(s: RoundState, events: list[BetPlaced]) -> tuple[Box, ...]:
    """The boxes after `events` (fold_bets), in (seat, box) order."""
    new = [
        tuple.__new__(
            Box,
            (
                e.player_id,
                e.box,
                e.amount,
                (tuple.__new__(Hand, ((), (), e.amount, 0, False, False, False, False, OPEN)),),
                0,
                INS_NONE,
            ),
        )
        for e in events
    ]
    seat = {p.player_id: i for i, p in enumerate(s.opened.participants)}
    boxes = sorted((*s.boxes, *new), key=lambda b: (seat[b.player_id], b.box))
    return tuple(boxes)


def _closed(s: RoundState, e: BettingClosed) -> RoundState:
    phase = DUELING if s.rules.kind == DUEL else PLAYING
    return _set_closed(s, phase, e.client_material, None)


def _check_position(s: RoundState, position: int) -> None:
    if position != s.next_position:
        raise ReplayError(f"card at shoe position {position}, expected {s.next_position}")


def _player_card(s: RoundState, e: PlayerCardDealt) -> RoundState:
    if e.position != s.next_position:
        _check_position(s, e.position)
    i = s.turn  # the hand in turn is the usual receiver: skip the search then
    if i < 0 or s.boxes[i].player_id != e.player_id or s.boxes[i].box != e.box:
        i = _find_box(s, e.player_id, e.box)
    boxes = s.boxes
    box = boxes[i]
    hands = box.hands
    h = e.hand
    hand = _add_card(hands[h], e.card, e.position)
    # _replace_box(boxes, i, _replace_hand(box, h, hand)), inlined: every hit folds here
    box = tuple.__new__(Box, (*box[:3], (*hands[:h], hand, *hands[h + 1 :]), *box[4:]))
    boxes = (*boxes[:i], box, *boxes[i + 1 :])
    if hand.status != OPEN and s.turn == i and s.turn_hand == h:
        # the hand in turn is over
        return _set_hand_over(s, boxes, e.position + 1, -1, None)
    # boxes, dealer and next_position are adjacent fields: one slice-and-join copy
    return tuple.__new__(
        RoundState, (*s[:_BOXES], boxes, s.dealer, e.position + 1, *s[_NEXT + 1 :])
    )


def fold_duel_card(s: RoundState, e: PlayerCardDealt, index: int) -> RoundState:
    """_player_card for a duel hit when the decider already knows the box's index in
    `s.boxes` and dealt the card from `s.next_position` itself. A duel has no hand in turn
    (turn is -1), so the card never ends a turn: only the boxes and the position change."""
    if s.turn >= 0 or e.position != s.next_position:  # not a duel hit: the general fold
        return _player_card(s, e)
    boxes = s.boxes
    box = boxes[index]
    hands = box.hands
    h = e.hand
    hand = _add_card(hands[h], e.card, e.position)
    # _replace_box(boxes, index, _replace_hand(box, h, hand)), inlined
    box = tuple.__new__(Box, (*box[:3], (*hands[:h], hand, *hands[h + 1 :]), *box[4:]))
    return tuple.__new__(
        RoundState,
        (
            *s[:_BOXES],
            (*boxes[:index], box, *boxes[index + 1 :]),
            s.dealer,
            e.position + 1,
            *s[_NEXT + 1 :],
        ),
    )


def _dealer_card(s: RoundState, e: DealerCardDealt) -> RoundState:
    if e.position != s.next_position:
        _check_position(s, e.position)
    dealer = _add_card(s.dealer, e.card, e.position)
    return tuple.__new__(RoundState, (*s[:_DEALER], dealer, e.position + 1, *s[_NEXT + 1 :]))


def fold_cards(s: RoundState, events: list[PlayerCardDealt | DealerCardDealt]) -> RoundState:
    """reduce(evolve, events, s) for a run of card events, building the state once.

    The decider deals the initial cards and the dealer's draw in one go: folding them one by
    one built a new RoundState (and Box tuple) per card, the largest cost of a round in the
    profile. This gives the same state, field for field, with the same refusals (a card out
    of shoe order, a box that is not in the round) as the one-by-one fold.
    """
    boxes = list(s.boxes)
    dealer = s.dealer
    position = s.next_position
    turn, deadline = s.turn, s.deadline_ms
    for e in events:
        if e.position != position:
            raise ReplayError(f"card at shoe position {e.position}, expected {position}")
        if type(e) is DealerCardDealt:
            dealer = _add_card(dealer, e.card, position)
        else:
            assert type(e) is PlayerCardDealt
            i = turn
            if i < 0 or boxes[i].player_id != e.player_id or boxes[i].box != e.box:
                i = _find_box_in(boxes, e.player_id, e.box)
            box = boxes[i]
            hand = _add_card(box.hands[e.hand], e.card, position)
            boxes[i] = _replace_hand(box, e.hand, hand)
            if hand.status != OPEN and turn == i and s.turn_hand == e.hand:
                turn, deadline = -1, None  # the hand in turn is over (as _player_card)
        position += 1
    return _set_cards(s, tuple(boxes), dealer, position, turn, deadline)


def fold_deal(s: RoundState, events: list[PlayerCardDealt | DealerCardDealt]) -> RoundState:
    """fold_cards for the decider's own initial deal: two passes over the boxes in order
    (each pass ending with the dealer on banked tables), as the first cards of the round.
    Every box then holds one two-card hand, built directly instead of card by card.

    Only `Run.emit_deal` calls it, with the events `banked.deal` / `duel.deal` just built, so
    their order is not checked again here (replay folds stored cards one by one through
    `evolve`, which checks each). tests/engine/test_equivalence.py proves the states equal.
    """
    dealt = _deal_boxes(s.boxes, s.dealer, events) if s.next_position == 0 else None
    if dealt is None:
        return fold_cards(s, events)  # not a first deal: the general fold
    boxes, dealer, position = dealt
    return _set_cards(s, boxes, dealer, position, s.turn, s.deadline_ms)


def _deal_boxes(
    boxes: tuple[Box, ...], dealer: Hand, events: list[PlayerCardDealt | DealerCardDealt]
) -> tuple[tuple[Box, ...], Hand, int] | None:
    """(boxes, dealer, next position) after a first deal of `events` (see fold_deal), or
    None when the events are not two passes over the boxes (with or without the dealer)."""
    n = len(boxes)
    width = n + 1 if len(events) == 2 * n + 2 else n  # cards per pass: with the dealer or not
    if len(events) != 2 * width:
        return None
    dealt = tuple(
        [  # a list display, not a generator: tuple() of a list skips the generator's frames
            tuple.__new__(
                Box,
                (*b[:3], (_two_cards(b.hands[0], events[i], events[width + i]),), *b[4:]),
            )
            for i, b in enumerate(boxes)
        ]
    )
    if width > n:
        dealer = _two_cards(dealer, events[n], events[width + n])
    return dealt, dealer, 2 * width


def fold_closed_deal(
    s: RoundState, closed: BettingClosed, events: list[PlayerCardDealt | DealerCardDealt]
) -> RoundState:
    """fold_deal(_closed(s, closed), events): betting closes and the first cards are dealt in
    the same command, so the state is built once for both (`Run.emit_closed_deal`)."""
    dealt = _deal_boxes(s.boxes, s.dealer, events) if s.next_position == 0 else None
    if dealt is None:
        return fold_deal(_closed(s, closed), events)
    boxes, dealer, position = dealt
    phase = DUELING if s.rules.kind == DUEL else PLAYING
    return _set_closed_deal(s, phase, boxes, dealer, position, None, closed.client_material)


def fold_duel_opening(
    s: RoundState,
    bets: list[BetPlaced],
    closed: BettingClosed,
    cards: list[PlayerCardDealt | DealerCardDealt],
    timer: DuelTimerStarted,
) -> RoundState:
    """reduce(evolve, [*bets, closed, *cards, timer], s) for the command that opens a duel
    (every seat's bet on box 0 in seat order, the close, two passes of cards over the seats,
    the timer): each box is built once with its two cards, the state once."""
    participants = s.opened.participants
    n = len(bets)
    if (
        s.boxes
        or s.next_position != 0
        or len(cards) != 2 * n
        or n != len(participants)
        or s.rules.kind != DUEL
    ):
        return _timer(fold_closed_deal(fold_bets(s, bets), closed, cards), timer)
    boxes = []
    for i, e in enumerate(bets):
        if e.box != 0 or e.player_id != participants[i].player_id:  # not seat order
            return _timer(fold_closed_deal(fold_bets(s, bets), closed, cards), timer)
        hand = _opening_hand(cards[i], cards[n + i], e.amount)
        boxes.append(tuple.__new__(Box, (e.player_id, 0, e.amount, (hand,), 0, INS_NONE)))
    return _set_closed_deal(
        s, DUELING, tuple(boxes), s.dealer, 2 * n, timer.deadline_ms, closed.client_material
    )


def fold_dealer_draw(s: RoundState, events: list[DealerCardDealt]) -> RoundState:
    """fold_cards for the dealer's draw (cards to the dealer only, in shoe order, after the
    deal): the dealer's hand is built once with all of them."""
    hand = _drawn_dealer(s, events)
    if hand is None:
        return fold_cards(s, list(events))
    return _set_cards(s, s.boxes, hand, s.next_position + len(events), s.turn, s.deadline_ms)


def _drawn_dealer(s: RoundState, events: list[DealerCardDealt]) -> Hand | None:
    """The dealer's hand after the draw `events` (fold_dealer_draw), or None when they are
    not the next cards after a dealt dealer hand."""
    dealer = s.dealer
    position = s.next_position
    if not dealer.cards or events[0].position != position:
        return None
    cards = [e.card for e in events]
    hard = dealer.hard
    has_ace = dealer.has_ace
    for card in cards:
        points = CARD_POINTS[card]
        hard += points
        has_ace = has_ace or points == 1
    total = hard + 10 if has_ace and hard <= 11 else hard
    # As _add_card on a hand of two or more cards: bust over 21, stood at 21, else unchanged
    # (the dealer's hand is never split or doubled).
    status = BUST if total > 21 else STOOD if total == 21 else dealer.status
    hand: Hand = tuple.__new__(
        Hand,
        (
            (*dealer.cards, *cards),
            (*dealer.positions, *range(position, position + len(cards))),
            dealer.stake,
            hard,
            has_ace,
            dealer.split,
            dealer.split_aces,
            dealer.doubled,
            status,
        ),
    )
    return hand


def fold_hole_and_draw(
    s: RoundState, hole: HoleCardRevealed | None, events: list[DealerCardDealt]
) -> RoundState:
    """reduce(evolve, [hole, *events], s) (hole may be None: already revealed) for the
    dealer's turn: the hole card turned, then the dealer's draw, built as one state."""
    hand = _drawn_dealer(s, events) if events else None
    if hand is None:
        if hole is not None:
            s = _hole_revealed(s, hole)
        return fold_dealer_draw(s, events) if events else s
    return _set_hole_draw(s, hand, s.next_position + len(events), True if hole else s.revealed)


def _two_cards(
    hand: Hand, first: PlayerCardDealt | DealerCardDealt, second: PlayerCardDealt | DealerCardDealt
) -> Hand:
    """An empty, unsplit hand after its first two cards (what _add_card twice gives)."""
    a = CARD_POINTS[first.card]
    b = CARD_POINTS[second.card]
    hard = a + b
    has_ace = a == 1 or b == 1
    # Two cards never bust; 21 is a blackjack (the hand is unsplit), else the status stays.
    status = BLACKJACK if has_ace and hard == 11 else hand.status
    return tuple.__new__(
        Hand,
        (
            (first.card, second.card),
            (first.position, second.position),
            hand.stake,
            hard,
            has_ace,
            False,
            False,
            hand.doubled,
            status,
        ),
    )


def _opening_hand(
    first: PlayerCardDealt | DealerCardDealt, second: PlayerCardDealt | DealerCardDealt, stake: int
) -> Hand:
    """_two_cards on a bet's empty hand (this stake, not doubled, open), built at once."""
    a = CARD_POINTS[first.card]
    b = CARD_POINTS[second.card]
    hard = a + b
    has_ace = a == 1 or b == 1
    return tuple.__new__(
        Hand,
        (
            (first.card, second.card),
            (first.position, second.position),
            stake,
            hard,
            has_ace,
            False,
            False,
            False,
            BLACKJACK if has_ace and hard == 11 else OPEN,
        ),
    )


def _find_box_in(boxes: list[Box], player_id: str, box: int) -> int:
    for i, b in enumerate(boxes):
        if b.box == box and b.player_id == player_id:
            return i
    raise ReplayError(f"no box {box} for player {player_id!r}")


def _insurance_offered(s: RoundState, e: InsuranceOffered) -> RoundState:
    boxes = tuple(b._replace(insurance_status=insurance_offer(s, b)) for b in s.boxes)
    return _set_offered(s, INSURANCE, boxes, e.deadline_ms)


def _insurance_taken(s: RoundState, e: InsuranceTaken) -> RoundState:
    i = _find_box(s, e.player_id, e.box)
    box = s.boxes[i]._replace(insurance=e.amount, insurance_status=INS_TAKEN)
    return s._replace(boxes=_replace_box(s.boxes, i, box))


def _insurance_declined(s: RoundState, e: InsuranceDeclined) -> RoundState:
    i = _find_box(s, e.player_id, e.box)
    box = tuple.__new__(Box, (*s.boxes[i][:5], INS_DECLINED))  # insurance_status is last
    return _set_boxes(s, _replace_box(s.boxes, i, box))


def _even_money(s: RoundState, e: EvenMoneyTaken) -> RoundState:
    i = _find_box(s, e.player_id, e.box)
    box = s.boxes[i]
    hand = box.hands[0]._replace(status=EVEN_MONEY)
    box = _replace_hand(box, 0, hand)._replace(insurance_status=INS_EVEN_MONEY)
    return s._replace(boxes=_replace_box(s.boxes, i, box))


def _peeked(s: RoundState, e: DealerPeeked) -> RoundState:
    return _set_peeked(s, PLAYING, e.blackjack, None)


def _hole_revealed(s: RoundState, e: HoleCardRevealed) -> RoundState:
    return _set_revealed(s, True, s.deadline_ms)


def _turn(s: RoundState, e: TurnStarted) -> RoundState:
    i = _find_box(s, e.player_id, e.box)
    return _set_turn(s, PLAYING, i, e.hand, e.deadline_ms)


def fold_turn(s: RoundState, e: TurnStarted, index: int) -> RoundState:
    """_turn when the decider already knows the box's index in `s.boxes` (no search)."""
    return _set_turn(s, PLAYING, index, e.hand, e.deadline_ms)


def fold_peek_turn(s: RoundState, peeked: DealerPeeked, e: TurnStarted, index: int) -> RoundState:
    """fold_turn(_peeked(s, peeked), e, index): the peek and the first turn, one state."""
    return _set_peek_turn(s, PLAYING, index, e.hand, e.deadline_ms, peeked.blackjack)


def _stood(s: RoundState, e: PlayerStood) -> RoundState:
    i = _find_box(s, e.player_id, e.box)
    box = s.boxes[i]
    hand = box.hands[e.hand]
    hand = tuple.__new__(Hand, (*hand[:-1], STOOD))
    boxes = _replace_box(s.boxes, i, _replace_hand(box, e.hand, hand))
    if s.phase == DUELING:
        return _set_boxes(s, boxes)  # the duel timer keeps running for the others
    return _set_stood(s, boxes, -1, None)


def fold_duel_stood(s: RoundState, e: PlayerStood, index: int) -> RoundState:
    """_stood in a duel when the decider already knows the box's index (no search)."""
    if s.phase != DUELING:
        return _stood(s, e)
    box = s.boxes[index]
    hand = tuple.__new__(Hand, (*box.hands[e.hand][:-1], STOOD))  # status is the last field
    return _set_boxes(s, _replace_box(s.boxes, index, _replace_hand(box, e.hand, hand)))


def _doubled(s: RoundState, e: HandDoubled) -> RoundState:
    i = _find_box(s, e.player_id, e.box)
    box = s.boxes[i]
    hand = box.hands[e.hand]
    hand = hand._replace(stake=hand.stake + e.amount, doubled=True)
    return _set_boxes(s, _replace_box(s.boxes, i, _replace_hand(box, e.hand, hand)))


def _split(s: RoundState, e: HandSplit) -> RoundState:
    i = _find_box(s, e.player_id, e.box)
    box = s.boxes[i]
    hand = box.hands[e.hand]
    aces = hand.has_ace and hand.hard == 2
    halves = tuple(
        Hand((card,), (pos,), stake, CARD_POINTS[card], aces, True, aces, False, OPEN)
        for card, pos, stake in zip(hand.cards, hand.positions, (hand.stake, e.amount), strict=True)
    )
    hands = (*box.hands[: e.hand], *halves, *box.hands[e.hand + 1 :])
    box = box._replace(hands=hands)
    return s._replace(boxes=_replace_box(s.boxes, i, box))


def _timer(s: RoundState, e: DuelTimerStarted) -> RoundState:
    return _set_timer(s, DUELING, e.deadline_ms)


def fold_duel_end(s: RoundState, revealed: CardsRevealed, settled: RoundSettled) -> RoundState:
    """reduce(evolve, [revealed, settled], s): the end of a duel, built as one state."""
    return _set_duel_end(s, SETTLED, -1, None, True, settled)


def _revealed(s: RoundState, e: CardsRevealed) -> RoundState:
    return _set_revealed(s, True, None)


def _settled(s: RoundState, e: RoundSettled) -> RoundState:
    return _set_settled(s, SETTLED, e, -1, None)


def _voided(s: RoundState, e: RoundVoided) -> RoundState:
    return s._replace(phase=VOIDED, voided=e, turn=-1, deadline_ms=None)


def _seed(s: RoundState, e: ServerSeedRevealed) -> RoundState:
    return _set_seed(s, e.server_seed)


_HANDLERS: Final[dict[type[Any], Callable[[Any, Any], RoundState]]] = {
    RoundOpened: _opened,
    BetPlaced: _bet,
    BettingClosed: _closed,
    PlayerCardDealt: _player_card,
    DealerCardDealt: _dealer_card,
    InsuranceOffered: _insurance_offered,
    InsuranceTaken: _insurance_taken,
    InsuranceDeclined: _insurance_declined,
    EvenMoneyTaken: _even_money,
    DealerPeeked: _peeked,
    HoleCardRevealed: _hole_revealed,
    TurnStarted: _turn,
    PlayerStood: _stood,
    HandDoubled: _doubled,
    HandSplit: _split,
    DuelTimerStarted: _timer,
    CardsRevealed: _revealed,
    RoundSettled: _settled,
    RoundVoided: _voided,
    ServerSeedRevealed: _seed,
}


HANDLERS: Final = _HANDLERS


def evolve(state: RoundState | None, event: Event) -> RoundState:
    """The state after `event`. Raises ReplayError if the event cannot follow the state."""
    if state is None and type(event) is not RoundOpened:
        raise ReplayError(f"{event.type} before RoundOpened")
    return _HANDLERS[type(event)](state, event)


def replay(events: Iterable[Event]) -> RoundState:
    """reduce(evolve, events, None): the state a stream of events describes."""
    state: RoundState | None = None
    for event in events:
        state = evolve(state, event)
    if state is None:
        raise ReplayError("no events")
    return state
