"""The round's state, and evolve(state, event) -> state: the one fold both live play and
replay use.

**The state** (`RoundState`, its `Box`es and `Hand`s) is folded from events by `evolve`, never
stored as the truth. State values are NamedTuples: immutable tuples, typed, and about five
times cheaper to build than frozen dataclasses here, which matters because every event builds
a new state. `insurance_offer` (who is offered insurance or even money) is here too: decide
and evolve both ask it.

**The fold.** Each event type has one handler, which applies the event to a working copy of the
state: a list of RoundState's fields, changed in place. `evolve` folds one event (copy, apply,
build the RoundState); `fold` and `replay` fold a run of events on one working copy and build
the RoundState once at the end. Building a RoundState is the dearest step of a fold, and the
decider emits its events in runs (the close and the deal, the hole card and the dealer's draw,
a duel's opening), so a run costs about what one event does.

Two fast paths are kept, for the command that deals the first cards (`fold_deal`,
`fold_duel_opening`, used by `Run`): without them the seeded simulator fell below its
target of 30,000 rounds/s per core. They hold no rule of their own (a hand's cards go
through `_add_cards`, the one card rule) and fall back to the handlers for any other shape
of events, so their state is the plain fold's; the golden streams check it
(tests/engine/test_golden.py folds every recorded event with `evolve`).

**The Run** (`start_run`) is the decider's scratchpad: the fold as the decider emits. Every
emitted event is folded at once, so later decisions in the same command see the state the
events so far describe (and `step` returns it), by the one plain `evolve` handler for its
type: `step` returns exactly reduce(evolve, events, state), with no second copy of the fold to
keep in line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final, NamedTuple

from casino.engine.cards import CARD_POINTS
from casino.engine.errors import SHOE_REQUIRED, DomainError
from casino.engine.events import (
    BeaconAwaited,
    BeaconRecorded,
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
    new_player_card,
)
from casino.engine.rules import DUEL, RULESETS, RuleSet
from casino.engine.shoe import Shoe

# Hand status
OPEN: Final = "open"  # waiting for the player (or for its turn)
STOOD: Final = "stood"  # stood, doubled, reached 21, or a split ace got its card
BUST: Final = "bust"
BLACKJACK: Final = "blackjack"  # two-card 21 of an unsplit hand
EVEN_MONEY: Final = "even_money"  # seed 000: paid 1:1 at once, hand over

# Box insurance status
INS_NONE: Final = ""
INS_OFFERED: Final = "offered"
INS_EVEN_MONEY_OFFERED: Final = "even_money_offered"
INS_TAKEN: Final = "taken"
INS_DECLINED: Final = "declined"
INS_EVEN_MONEY: Final = "even_money"

# Round phase
BETTING: Final = "betting"
INSURANCE: Final = "insurance"
PLAYING: Final = "playing"  # house-banked: one hand at a time, in turn
DUELING: Final = "dueling"  # duel: everyone acts at once until the timer
BEACON: Final = "beacon"  # shared table: betting closed, the deal waits for the beacon round
SETTLED: Final = "settled"
VOIDED: Final = "voided"


class Hand(NamedTuple):
    cards: tuple[str, ...]
    positions: tuple[int, ...]
    stake: int
    hard: int  # total with every ace counted as 1
    has_ace: bool
    split: bool  # this hand came from a split
    split_aces: bool
    doubled: bool
    status: str

    @property
    def total(self) -> int:
        """Best total: an ace counts 11 unless that busts (cards.best_total, inlined)."""
        hard = self.hard
        return hard + 10 if self.has_ace and hard <= 11 else hard

    @property
    def is_soft(self) -> bool:
        return self.has_ace and self.hard <= 11

    @property
    def is_blackjack(self) -> bool:
        """Only the first two cards of an unsplit hand (seeds 000, 002)."""
        return len(self.cards) == 2 and not self.split and self.has_ace and self.hard == 11


EMPTY_HAND: Final = Hand((), (), 0, 0, False, False, False, False, OPEN)


class Box(NamedTuple):
    player_id: str
    box: int
    bet: int
    hands: tuple[Hand, ...]
    insurance: int  # insurance stake
    insurance_status: str


class RoundState(NamedTuple):
    opened: RoundOpened  # the static facts of the round
    rules: RuleSet
    phase: str
    boxes: tuple[Box, ...]  # deal and play order: seat order, then box number
    dealer: Hand
    next_position: int  # the shoe position the next card must come from
    turn: int  # index into boxes of the hand to act (-1: nobody)
    turn_hand: int
    deadline_ms: int | None
    revealed: bool  # banked: the hole card is face up; duel: every hidden card is shown
    dealer_blackjack: bool
    client_material: str
    settlement: RoundSettled | None
    voided: RoundVoided | None
    server_seed: str | None
    beacon_round: int  # the beacon round the deal waits for or took (0: none)

    @property
    def finished(self) -> bool:
        return self.phase in (SETTLED, VOIDED)

    def box_index(self, player_id: str, box: int) -> int:
        """Index into `boxes` of a player's box, or -1."""
        for i, b in enumerate(self.boxes):
            if b.player_id == player_id and b.box == box:
                return i
        return -1


def insurance_offer(state: RoundState, box: Box) -> str:
    """The offer a box gets when the dealer shows an ace (INS_NONE if none).

    Seed 000: insurance only with the player's "Offer Insurance" option on; a blackjack is
    offered even money instead. Reading: with the option off, even money is not offered
    either (it is insurance on a blackjack).
    """
    rules = state.rules
    if rules.insurance == "none":
        return INS_NONE
    if rules.insurance_is_player_option:
        for p in state.opened.participants:
            if p.player_id == box.player_id and not p.offer_insurance:
                return INS_NONE
    if rules.even_money and box.hands[0].status == BLACKJACK:
        return INS_EVEN_MONEY_OFFERED
    return INS_OFFERED


class ReplayError(ValueError):
    """An event that cannot follow the state (tampered or reordered stream)."""


# The positions of RoundState's fields (in the handlers' working copy).
(
    _OPENED,
    _RULES,
    _PHASE,
    _BOXES,
    _DEALER,
    _NEXT,
    _TURN,
    _TURN_HAND,
    _DEADLINE,
    _REVEALED,
    _DEALER_BLACKJACK,
    _CLIENT_MATERIAL,
    _SETTLEMENT,
    _VOIDED,
    _SERVER_SEED,
    _BEACON_ROUND,
) = range(16)
assert RoundState._fields == (
    "opened",
    "rules",
    "phase",
    "boxes",
    "dealer",
    "next_position",
    "turn",
    "turn_hand",
    "deadline_ms",
    "revealed",
    "dealer_blackjack",
    "client_material",
    "settlement",
    "voided",
    "server_seed",
    "beacon_round",
), "the positions above follow RoundState's fields"
# tuple.__new__(cls, values) builds a NamedTuple without its Python-level __new__.
_new: Final = tuple.__new__

Working = list[Any]  # the fields of a RoundState, in order, being changed by the handlers


def _add_cards(hand: tuple[Any, ...], cards: tuple[str, ...], positions: tuple[int, ...]) -> Hand:
    """The hand (a Hand, or its fields) with more cards (in shoe order), and its status
    after each: the card rule.

    21 stands by itself, over 21 is bust, two cards to 21 of an unsplit hand a blackjack; a
    doubled hand and a split ace take one card only. Most calls add one card; the first
    deal adds a hand's two at once (`fold_deal`), which builds the Hand once.
    """
    # The fields unpacked at once: a NamedTuple field read by name is a descriptor call each.
    held, at, stake, hard, has_ace, split, split_aces, doubled, status = hand
    n = len(held)
    for card in cards:
        p = CARD_POINTS[card]
        hard += p
        has_ace = has_ace or p == 1
        total = hard + 10 if has_ace and hard <= 11 else hard
        n += 1
        if total > 21:
            status = BUST
        elif n == 2 and total == 21 and not split:
            status = BLACKJACK
        elif total == 21 or doubled or (split_aces and n == 2):
            status = STOOD
    return _new(
        Hand,
        (held + cards, at + positions, stake, hard, has_ace, split, split_aces, doubled, status),
    )


def _replaced(items: tuple[Any, ...], index: int, item: Any) -> tuple[Any, ...]:
    """`items` with the one at `index` replaced."""
    if len(items) == 1:
        return (item,)
    changed = list(items)
    changed[index] = item
    return tuple(changed)


def _with_hand(box: Box, index: int, hand: Hand) -> Box:
    """The box with its hand at `index` replaced."""
    player_id, number, bet, hands, insurance, insurance_status = box
    hands = _replaced(hands, index, hand)
    return _new(Box, (player_id, number, bet, hands, insurance, insurance_status))


def _find_box(boxes: tuple[Box, ...], player_id: str, box: int) -> int:
    for i, b in enumerate(boxes):
        if b.box == box and b.player_id == player_id:
            return i
    raise ReplayError(f"no box {box} for player {player_id!r}")


def _refuse_card(m: Working, position: int) -> None:
    """A card that is not the next one of the shoe."""
    raise ReplayError(f"card at shoe position {position}, expected {m[_NEXT]}")


def _opened(e: RoundOpened) -> RoundState:
    state: RoundState = _new(
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
            0,
        ),
    )
    return state


def _reopened(m: Working, e: RoundOpened) -> None:
    raise ReplayError("round already opened")


def _bet_hand(amount: int) -> tuple[Any, ...]:
    """The fields of a bet's hand: no card yet, open."""
    return ((), (), amount, 0, False, False, False, False, OPEN)


def _bet(m: Working, e: BetPlaced) -> None:
    hand = _new(Hand, _bet_hand(e.amount))
    box = _new(Box, (e.player_id, e.box, e.amount, (hand,), 0, INS_NONE))
    boxes = m[_BOXES]
    if not boxes:
        m[_BOXES] = (box,)
        return
    # The boxes are kept in (seat, box) order. Seats bet in order, so the new box usually
    # goes last: then (also on an equal key, where a stable sort keeps the earlier box
    # first) it is appended without sorting.
    last = boxes[-1]
    if last.player_id == e.player_id:
        last_first = last.box <= e.box
    else:
        last_first = False  # which of the two seats comes first
        for p in m[_OPENED].participants:
            if p.player_id == last.player_id:
                last_first = True
                break
            if p.player_id == e.player_id:
                break
    if last_first:
        m[_BOXES] = (*boxes, box)
        return
    seat = {p.player_id: i for i, p in enumerate(m[_OPENED].participants)}
    m[_BOXES] = tuple(sorted((*boxes, box), key=lambda b: (seat[b.player_id], b.box)))


def _closed(m: Working, e: BettingClosed) -> None:
    m[_PHASE] = DUELING if m[_RULES].kind == DUEL else PLAYING
    m[_CLIENT_MATERIAL] = e.client_material
    m[_DEADLINE] = None


def _player_card(m: Working, e: PlayerCardDealt) -> None:
    position = e.position
    if position != m[_NEXT]:
        _refuse_card(m, position)
    m[_NEXT] = position + 1
    boxes = m[_BOXES]
    player_id, number, h = e.player_id, e.box, e.hand
    turn = i = m[_TURN]  # the hand in turn is the usual receiver: skip the search then
    if i < 0 or boxes[i].player_id != player_id or boxes[i].box != number:
        i = 0  # _find_box, inlined (as _with_hand below): every player card folds here
        for b in boxes:
            if b.box == number and b.player_id == player_id:
                break
            i += 1
        else:
            _find_box(boxes, player_id, number)  # refuses it
    player_id, number, bet, hands, insurance, insurance_status = boxes[i]
    hand = _add_cards(hands[h], (e.card,), (position,))
    hands = (hand,) if len(hands) == 1 else _replaced(hands, h, hand)
    box = _new(Box, (player_id, number, bet, hands, insurance, insurance_status))
    m[_BOXES] = (box,) if len(boxes) == 1 else _replaced(boxes, i, box)
    if turn == i and hand.status != OPEN and m[_TURN_HAND] == h:
        m[_TURN] = -1  # the hand in turn is over
        m[_DEADLINE] = None


def _dealer_card(m: Working, e: DealerCardDealt) -> None:
    position = e.position
    if position != m[_NEXT]:
        _refuse_card(m, position)
    m[_NEXT] = position + 1
    m[_DEALER] = _add_cards(m[_DEALER], (e.card,), (position,))


def _insurance_offered(m: Working, e: InsuranceOffered) -> None:
    s: RoundState = _new(RoundState, m)  # insurance_offer reads the state
    m[_PHASE] = INSURANCE
    m[_BOXES] = tuple([b._replace(insurance_status=insurance_offer(s, b)) for b in s.boxes])
    m[_DEADLINE] = e.deadline_ms


def _insurance_taken(m: Working, e: InsuranceTaken) -> None:
    boxes = m[_BOXES]
    i = _find_box(boxes, e.player_id, e.box)
    box = boxes[i]._replace(insurance=e.amount, insurance_status=INS_TAKEN)
    m[_BOXES] = _replaced(boxes, i, box)


def _insurance_declined(m: Working, e: InsuranceDeclined) -> None:
    boxes = m[_BOXES]
    i = _find_box(boxes, e.player_id, e.box)
    m[_BOXES] = _replaced(boxes, i, boxes[i]._replace(insurance_status=INS_DECLINED))


def _even_money(m: Working, e: EvenMoneyTaken) -> None:
    boxes = m[_BOXES]
    i = _find_box(boxes, e.player_id, e.box)
    box = boxes[i]
    box = _with_hand(box, 0, box.hands[0]._replace(status=EVEN_MONEY))
    m[_BOXES] = _replaced(boxes, i, box._replace(insurance_status=INS_EVEN_MONEY))


def _peeked(m: Working, e: DealerPeeked) -> None:
    m[_PHASE] = PLAYING
    m[_DEALER_BLACKJACK] = e.blackjack
    m[_DEADLINE] = None


def _hole_revealed(m: Working, e: HoleCardRevealed) -> None:
    m[_REVEALED] = True


def _turn(m: Working, e: TurnStarted) -> None:
    m[_PHASE] = PLAYING
    m[_TURN] = _find_box(m[_BOXES], e.player_id, e.box)
    m[_TURN_HAND] = e.hand
    m[_DEADLINE] = e.deadline_ms


def _stood(m: Working, e: PlayerStood) -> None:
    boxes = m[_BOXES]
    i = _find_box(boxes, e.player_id, e.box)
    box = boxes[i]
    hand = _new(Hand, (*box.hands[e.hand][:-1], STOOD))  # status is the last field
    m[_BOXES] = _replaced(boxes, i, _with_hand(box, e.hand, hand))
    if m[_PHASE] != DUELING:  # in a duel the timer keeps running for the others
        m[_TURN] = -1
        m[_DEADLINE] = None


def _doubled(m: Working, e: HandDoubled) -> None:
    boxes = m[_BOXES]
    i = _find_box(boxes, e.player_id, e.box)
    box = boxes[i]
    hand = box.hands[e.hand]
    hand = hand._replace(stake=hand.stake + e.amount, doubled=True)
    m[_BOXES] = _replaced(boxes, i, _with_hand(box, e.hand, hand))


def _split(m: Working, e: HandSplit) -> None:
    boxes = m[_BOXES]
    i = _find_box(boxes, e.player_id, e.box)
    box = boxes[i]
    hand = box.hands[e.hand]
    aces = hand.has_ace and hand.hard == 2
    halves = tuple(
        Hand((card,), (pos,), stake, CARD_POINTS[card], aces, True, aces, False, OPEN)
        for card, pos, stake in zip(hand.cards, hand.positions, (hand.stake, e.amount), strict=True)
    )
    hands = (*box.hands[: e.hand], *halves, *box.hands[e.hand + 1 :])
    m[_BOXES] = _replaced(boxes, i, box._replace(hands=hands))


def _beacon_awaited(m: Working, e: BeaconAwaited) -> None:
    if m[_PHASE] not in (PLAYING, DUELING) or m[_OPENED].beacon is None or m[_BEACON_ROUND]:
        raise ReplayError("BeaconAwaited: only after betting closes at a beacon table, once")
    m[_PHASE] = BEACON
    m[_BEACON_ROUND] = e.round
    m[_DEADLINE] = e.deadline_ms


def _beacon_recorded(m: Working, e: BeaconRecorded) -> None:
    if m[_PHASE] != BEACON or e.round != m[_BEACON_ROUND]:
        raise ReplayError("BeaconRecorded: only the awaited round, while the deal waits for it")
    m[_PHASE] = DUELING if m[_RULES].kind == DUEL else PLAYING
    m[_CLIENT_MATERIAL] = e.client_material
    m[_DEADLINE] = None


def _timer(m: Working, e: DuelTimerStarted) -> None:
    m[_PHASE] = DUELING
    m[_DEADLINE] = e.deadline_ms


def _revealed(m: Working, e: CardsRevealed) -> None:
    m[_REVEALED] = True
    m[_DEADLINE] = None


def _settled(m: Working, e: RoundSettled) -> None:
    m[_PHASE] = SETTLED
    m[_SETTLEMENT] = e
    m[_TURN] = -1
    m[_DEADLINE] = None


def _voided(m: Working, e: RoundVoided) -> None:
    m[_PHASE] = VOIDED
    m[_VOIDED] = e
    m[_TURN] = -1
    m[_DEADLINE] = None


def _seed(m: Working, e: ServerSeedRevealed) -> None:
    m[_SERVER_SEED] = e.server_seed


_HANDLERS: Final[dict[type[Any], Callable[[Working, Any], None]]] = {
    RoundOpened: _reopened,
    BetPlaced: _bet,
    BettingClosed: _closed,
    BeaconAwaited: _beacon_awaited,
    BeaconRecorded: _beacon_recorded,
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


def evolve(state: RoundState | None, event: Event) -> RoundState:
    """The state after `event`. Raises ReplayError if the event cannot follow the state."""
    if state is None:
        if type(event) is not RoundOpened:
            raise ReplayError(f"{event.type} before RoundOpened")
        return _opened(event)
    m = list(state)
    _HANDLERS[type(event)](m, event)
    folded: RoundState = _new(RoundState, m)
    return folded


def fold(state: RoundState, events: Iterable[Event]) -> RoundState:
    """reduce(evolve, events, state), with the RoundState built once at the end."""
    m = list(state)
    handlers = _HANDLERS
    for event in events:
        handlers[type(event)](m, event)
    folded: RoundState = _new(RoundState, m)
    return folded


def fold_deal(
    state: RoundState,
    before: Iterable[Event],
    cards: list[PlayerCardDealt | DealerCardDealt],
    after: Iterable[Event],
) -> RoundState:
    """fold(state, [*before, *cards, *after]) for the command that deals the first cards.

    The first fast path of the fold, kept because it pays: the initial deal is most of the
    events of a short round (a heads-up duel or classic round deals four or six of its
    twelve or so), and folding it card by card rebuilds every box once per card. When
    `cards` are the first deal (two passes over the boxes in order, each pass ending with
    the dealer on a banked table, from the shoe's first card) each box is built once here,
    its hand by `_add_card` like every other card; any other run of cards is folded one by
    one. Either way the state is the one `evolve` gives, event by event.
    """
    m = list(state)
    handlers = _HANDLERS
    for event in before:
        handlers[type(event)](m, event)
    if not _deal(m, cards):
        for event in cards:
            handlers[type(event)](m, event)
    for event in after:
        handlers[type(event)](m, event)
    folded: RoundState = _new(RoundState, m)
    return folded


def _deal(m: Working, cards: list[PlayerCardDealt | DealerCardDealt]) -> bool:
    """Apply the first deal `cards` to the working copy (see fold_deal), or return False
    and change nothing when they are not one."""
    boxes = m[_BOXES]
    n = len(boxes)
    width = n + 1 if len(cards) == 2 * n + 2 else n  # cards per pass, with the dealer or not
    if m[_NEXT] != 0 or m[_TURN] >= 0 or len(cards) != 2 * width:
        return False
    dealt = []
    for i, box in enumerate(boxes):
        first, second = cards[i], cards[width + i]
        player_id, number, bet, hands, insurance, insurance_status = box
        if (
            type(first) is not PlayerCardDealt
            or type(second) is not PlayerCardDealt
            or first.position != i
            or second.position != width + i
            or first.player_id != player_id
            or second.player_id != player_id
            or first.box != number
            or second.box != number
            or first.hand != 0
            or second.hand != 0
            or len(hands) != 1
        ):
            return False
        hand = _add_cards(hands[0], (first.card, second.card), (i, width + i))
        dealt.append(_new(Box, (player_id, number, bet, (hand,), insurance, insurance_status)))
    dealer = m[_DEALER]
    if width > n:
        first, second = cards[n], cards[width + n]
        if (
            type(first) is not DealerCardDealt
            or type(second) is not DealerCardDealt
            or first.position != n
            or second.position != width + n
        ):
            return False
        dealer = _add_cards(dealer, (first.card, second.card), (n, width + n))
    m[_BOXES] = tuple(dealt)
    m[_DEALER] = dealer
    m[_NEXT] = 2 * width
    return True


def fold_duel_opening(
    state: RoundState,
    bets: list[BetPlaced],
    closed: BettingClosed,
    cards: list[PlayerCardDealt | DealerCardDealt],
    timer: DuelTimerStarted,
) -> RoundState:
    """fold(state, [*bets, closed, *cards, timer]) for the command that opens a duel: every
    seat's bet on box 0 in seat order, the close, two passes of cards over the seats, the
    timer.

    The second fast path, kept because it pays: these events are most of a duel's, and
    `fold_deal` would still build each seat's box twice (at its bet, then dealt). Here each
    box is built once, from its bet and its two cards (`_add_cards`, the card rule); any
    other shape of events goes to `fold_deal`. Either way the state is the one `evolve`
    gives, event by event.
    """
    participants = state.opened.participants
    n = len(participants)
    if state.boxes or state.next_position != 0 or len(bets) != n or len(cards) != 2 * n:
        return fold_deal(state, [*bets, closed], cards, (timer,))
    boxes = []
    for i, bet in enumerate(bets):
        player_id = participants[i].player_id
        at = n + i  # the seat's second card
        first, second = cards[i], cards[at]
        if (
            bet.player_id != player_id
            or bet.box != 0
            or type(first) is not PlayerCardDealt
            or type(second) is not PlayerCardDealt
            or first.position != i
            or second.position != at
            or first.player_id != player_id
            or second.player_id != player_id
            or first.box != 0
            or second.box != 0
            or first.hand != 0
            or second.hand != 0
        ):
            return fold_deal(state, [*bets, closed], cards, (timer,))
        amount = bet.amount
        hand = _add_cards(_bet_hand(amount), (first.card, second.card), (i, at))
        boxes.append(_new(Box, (player_id, 0, amount, (hand,), 0, INS_NONE)))
    m = list(state)
    _closed(m, closed)
    m[_BOXES] = tuple(boxes)
    m[_NEXT] = 2 * n
    _timer(m, timer)
    folded: RoundState = _new(RoundState, m)
    return folded


def replay(events: Iterable[Event]) -> RoundState:
    """reduce(evolve, events, None): the state a stream of events describes."""
    stream = iter(events)
    first = next(stream, None)
    if first is None:
        raise ReplayError("no events")
    return fold(evolve(None, first), stream)


# ---- the Run: the fold as the decider emits ----


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
