"""Proof of play: the round re-decided from the players' choices.

`evolve` only folds facts. `reenact` re-derives them: it reads the players' choices out of
the recorded events (a bet, an insurance or even-money answer, a hit, a stand, a double, a
split, a void, a seed reveal, and a timeout at its recorded time), feeds them to the
decider at the times the record implies, with the cards of the round's shoe, and requires
the decider to produce exactly the recorded events, one for one, field for field. Every
event the rules force (each dealer card, the peek, the hole card, an automatic stand, a
bust's end of turn, the next turn, a duel's reveal, the settlement and its fee, a void's
refunds) is derived, never read; so a dealer who drew on 17, a card dealt to a bust hand, a
missing turn or a wrong payout all show up, named by version with the recorded and the
derived event. `fairness.replay` runs it with the fair shoe rebuilt from the revealed seed;
the server's audit runs it on rounds still in play with the recorded cards.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, Final, cast

from casino.engine.commands import (
    Command,
    DeclineInsurance,
    Double,
    Hit,
    OpenRound,
    PlaceBet,
    RecordBeacon,
    RevealSeed,
    Split,
    Stand,
    TakeEvenMoney,
    TakeInsurance,
    Timeout,
    VoidRound,
)
from casino.engine.decider import BEACON_VOID_REASON, TIMED_FIELDS, command_time, evolve, step
from casino.engine.errors import DomainError
from casino.engine.events import (
    EVENT_TYPES,
    BeaconRecorded,
    BetPlaced,
    BettingClosed,
    DealerCardDealt,
    DealerPeeked,
    EvenMoneyTaken,
    Event,
    HandDoubled,
    HandSplit,
    HoleCardRevealed,
    InsuranceDeclined,
    InsuranceTaken,
    PlayerCardDealt,
    PlayerStood,
    RoundOpened,
    RoundSettled,
    RoundVoided,
    ServerSeedRevealed,
    TurnStarted,
    event_to_dict,
)
from casino.engine.evolve import BEACON, BETTING, BUST, OPEN, RoundState
from casino.engine.rules import DUEL, RULESETS, RuleSet
from casino.engine.shoe import Shoe
from fairness.canonical import first_difference


class _RecordedShoe:
    """The cards the events say were dealt, by position."""

    __slots__ = ("cards",)

    def __init__(self, events: Sequence[Event]) -> None:
        cards: list[Any] = [e for e in events if type(e) in _CARD_TYPES]
        self.cards: dict[int, str] = {e.position: e.card for e in cards}

    def card_at(self, position: int) -> str:
        if position not in self.cards:
            raise DomainError("card_not_recorded", f"the rules deal position {position}")
        return self.cards[position]


# Event classes are matched by exact type here (no event class is subclassed).
_CARD_TYPES = frozenset({PlayerCardDealt, DealerCardDealt})


def _bets(events: Sequence[Event], i: int, e: BetPlaced) -> PlaceBet:
    """The bet of event i's player on every box: their BetPlaced events from i on."""
    player = e.player_id
    amounts = {e.box: e.amount}
    for j in range(i + 1, len(events)):
        later: Any = events[j]
        if type(later) is not BetPlaced or later.player_id != player:
            break
        amounts[later.box] = later.amount
    if len(amounts) == 1 and e.box == 0:  # one box, the first: the common bet
        return PlaceBet(player, (e.amount,))
    return PlaceBet(player, tuple(amounts.get(b, 0) for b in range(max(amounts) + 1)))


def _voided(e: RoundVoided, state: RoundState | None) -> Command:
    """A void the rules derive at a deadline (nobody bet; the beacon never came) is the
    timeout's; any other is a staff or malfunction void, a decision of its own."""
    due = state is not None and state.deadline_ms is not None
    if due and e.voided_at_ms >= state.deadline_ms:  # type: ignore[union-attr,operator]
        derived = (state.phase == BETTING and e.reason == "no_bets") or (  # type: ignore[union-attr]
            state.phase == BEACON and e.reason == BEACON_VOID_REASON  # type: ignore[union-attr]
        )
        if derived:
            return _TIMEOUT
    return VoidRound(e.reason, e.evidence)


def _opening(e: RoundOpened) -> OpenRound:
    return OpenRound(
        e.round_id, e.table_id, e.ruleset, e.chain_id, e.nonce, e.commitment,
        e.participants, e.options, e.beacon,
    )  # fmt: skip


# Timeout has no fields: one (frozen) instance serves every timeout the record implies.
_TIMEOUT: Final = Timeout()

# event type -> the decision an event of that type stands for (BetPlaced and RoundVoided,
# which need more than the event, are in `_command`)
_COMMANDS: dict[type[Any], Callable[[Any], Command]] = {
    RoundOpened: _opening,
    InsuranceTaken: lambda e: TakeInsurance(e.player_id, e.box, e.amount),
    InsuranceDeclined: lambda e: _TIMEOUT if e.auto else DeclineInsurance(e.player_id, e.box),
    EvenMoneyTaken: lambda e: TakeEvenMoney(e.player_id, e.box),
    PlayerStood: lambda e: _TIMEOUT if e.auto else Stand(e.player_id),
    HandDoubled: lambda e: Double(e.player_id),
    HandSplit: lambda e: Split(e.player_id),
    PlayerCardDealt: lambda e: Hit(e.player_id, True),  # confirm=True
    BettingClosed: lambda e: _TIMEOUT,  # betting closed by its deadline, not by the last bet
    ServerSeedRevealed: lambda e: RevealSeed(e.server_seed),
    BeaconRecorded: lambda e: RecordBeacon(e.round, e.signature),
}


def _command(events: Sequence[Event], i: int, state: RoundState | None) -> Command | None:
    """The decision that recorded event i stands for (None: it is no decision)."""
    e = events[i]
    kind = type(e)
    if kind is BetPlaced:
        return _bets(events, i, e)  # type: ignore[arg-type]
    if kind is RoundVoided:
        return _voided(e, state)  # type: ignore[arg-type]
    make = _COMMANDS.get(kind)
    return None if make is None else make(e)


def _implied_now(
    produced: Sequence[Event], recorded: Sequence[Event], rules: RuleSet
) -> int | None:
    """The command's time, read off the first recorded event that carries one."""
    for made, e in zip(produced, recorded, strict=False):
        kind = type(e)
        if type(made) is not kind:
            return None
        at = command_time(e.type, e, rules)
        if at is not None:
            return at
    return None


# event class -> TIMED_FIELDS' entry for its type
_TIMED_CLASSES: Final[dict[type[Any], tuple[str, str | None]]] = {
    EVENT_TYPES[type_]: timed for type_, timed in TIMED_FIELDS.items()
}
# rule set name -> (the rule set, event class -> (its timed field, the timeout added there))
_OFFSETS: dict[str, tuple[RuleSet, dict[type[Any], tuple[str, int]]]] = {}


def _command_times(events: Sequence[Event], rules: RuleSet) -> list[int | None]:
    """`command_time` of every event, in one pass."""
    cached = _OFFSETS.get(rules.name)
    if cached is None or cached[0] is not rules:
        offsets = {
            cls: (name, getattr(rules, timeout) if timeout is not None else 0)
            for cls, (name, timeout) in _TIMED_CLASSES.items()
        }
        _OFFSETS[rules.name] = cached = (rules, offsets)
    get = cached[1].get
    return [
        None if (timed := get(type(e))) is None else getattr(e, timed[0]) - timed[1] for e in events
    ]


# Recorded events that only a decision starts (a PlayerCardDealt may be a hit or a card the
# rules dealt); `_blocked` stops at them.
_DECISIONS = frozenset(
    {RoundOpened, BetPlaced, PlayerStood, HandDoubled, HandSplit, InsuranceTaken,
     InsuranceDeclined, EvenMoneyTaken, ServerSeedRevealed, BeaconRecorded}
)  # fmt: skip


def _blocked(events: Sequence[Event], i: int, k: int) -> bool:
    """Whether another decision starts between event i (a decision's first event) and event
    k: a decision's event, or a player's card beyond those the decision at i deals itself
    (a double deals one, a split two). Then k's time is not i's."""
    first: Any = events[i]
    kind = type(first)
    cards = 2 if kind is HandSplit else 1 if kind is HandDoubled else 0
    for j in range(i + 1, k):
        e: Any = events[j]
        later = type(e)
        if later in _DECISIONS:
            if later is BetPlaced and kind is BetPlaced and e.player_id == first.player_id:
                continue  # one player's bets on several boxes are one decision
            return True
        if later is PlayerCardDealt:
            if cards == 0:
                return True
            cards -= 1
    return False


def reenact(events: Sequence[Event], shoe: Shoe | None = None) -> list[str]:
    """Discrepancies between the recorded events and what the rules make of the same
    decisions (empty list: the round is exactly what the rules say). `shoe` deals the cards
    (the round's fair shoe, rebuilt from its revealed seed); None deals the recorded cards."""
    return reenact_states(events, shoe)[0]


def reenact_states(
    events: Sequence[Event], shoe: Shoe | None = None
) -> tuple[list[str], dict[int, RoundState | None]]:
    """`reenact`, and the state after events[:k] at every k where a decision's events end
    (0 included; the last k is len(events) when the round re-enacts in full): `step` returns
    the fold of the events it makes, so these are the states `evolve` folds to there."""
    boundaries: dict[int, RoundState | None] = {0: None}
    if not events or not isinstance(events[0], RoundOpened):
        return ["version 1: the round does not start with RoundOpened"], boundaries
    opened = events[0]
    rules = RULESETS.get(opened.ruleset)
    if rules is None:
        return [f"version 1: unknown rule set {opened.ruleset!r}"], boundaries
    if rules.version_hash != opened.ruleset_hash:
        return [
            f"version 1: rule set hash {opened.ruleset_hash} is not "
            f"{opened.ruleset} {rules.version_hash}"
        ], boundaries
    events = list(events)
    problems = _reenact(
        events, rules, opened.opened_at_ms, boundaries, shoe or _RecordedShoe(events)
    )
    return problems, boundaries


def _reenact(
    events: list[Event],
    rules: RuleSet,
    now: int,
    boundaries: dict[int, RoundState | None],
    shoe: Any,
) -> list[str]:
    state: RoundState | None = None
    i = 0
    count = len(events)
    times = _command_times(events, rules)
    while i < count:
        command = _command(events, i, state)
        if command is None:
            return [_no_decision(events, i, state)]
        start = now
        if command is _TIMEOUT and state is not None and state.deadline_ms is not None:
            start = max(now, state.deadline_ms)
        # The one-step path: the command at the time the record's next timed event implies,
        # if it follows before the next decision (or at `start` when none does). Taken only
        # when it reproduces the record and its own timed event implies that same time (or it
        # has none and ran at `start`), and time does not run backwards: exactly where the
        # two-step path below lands, which runs in every other case and names what differs.
        k = i  # the first timed event at or after i
        while k < count and times[k] is None:
            k += 1
        guessed = k < count and (k <= i + 1 or not _blocked(events, i, k))
        timed = times[k] if guessed else None
        at = start if timed is None else timed
        if at >= now:
            try:
                produced, after = step(state, command, at, shoe)
            except Exception:  # whatever the guess met, the two-step path says it exactly
                produced = []
            length = len(produced)
            if length and produced == events[i : i + length]:
                # The time _implied_now reads: the first timed event among those reproduced
                # (equal events have the same types, so the recorded ones' times are theirs).
                implied = times[k] if k < i + length else None
                if implied == at or (implied is None and at == start):
                    now, state, i = at, after, i + length
                    boundaries[i] = state
                    continue
        problem = _two_step(events, i, state, command, start, now, rules, shoe)
        if isinstance(problem, str):
            return [problem]
        now, state, length = problem
        i += length
        boundaries[i] = state
    return []


def _two_step(
    events: list[Event],
    i: int,
    state: RoundState | None,
    command: Command,
    start: int,
    now: int,
    rules: RuleSet,
    shoe: Any,
) -> str | tuple[int, RoundState, int]:
    """The command stepped at `start` (a RecordBeacon at its own recorded time), then again at
    the time the recorded events imply when that differs: (time, state after, events made)
    when the record is reproduced, else the discrepancy in words."""
    where = f"version {i + 1} ({_show(events[i])})"
    try:
        at = start
        own = command_time(events[i].type, events[i], rules)
        if own is not None and own > start and type(command) is RecordBeacon:
            at = own  # a beacon round is recorded at its own time, never before it is published
        produced, after = step(state, command, at, shoe)
        implied = _implied_now(produced, events[i:], rules)
        if implied is not None and implied != at:
            if implied < now:
                return (
                    f"{where}: time runs backwards: the record implies {_name(command)} "
                    f"at {implied} ms, after an earlier decision at {now} ms"
                )
            at = implied
            produced, after = step(state, command, at, shoe)
    except DomainError as err:
        return f"{where}: the rules refuse {_name(command)} here ({err.code}: {err.message})"
    recorded = events[i : i + len(produced)]
    for n, made in enumerate(produced):
        if n >= len(recorded):
            return (
                f"version {i + n + 1}: the record ends, the rules derive {_show(made)}"
                f"{_rule(state, produced[:n], made, None)}"
            )
        if made != recorded[n]:
            return (
                f"version {i + n + 1}: recorded {_show(recorded[n])}, the rules derive "
                f"{_show(made)}{_rule(state, produced[:n], made, recorded[n])}"
            )
    if not produced:
        return f"{where}: the rules derive no event from {_name(command)} at {at} ms"
    return at, after, len(produced)


def _name(command: Command) -> str:
    player = getattr(command, "player_id", None)
    return type(command).__name__ + (f" by {player}" if player is not None else "")


def _show(event: Event) -> str:
    """An event as the verifier prints it: its type and its data as compact JSON."""
    data = event_to_dict(event)
    del data["type"]
    return f"{event.type} {json.dumps(data, separators=(',', ':'), sort_keys=True)}"


def _no_decision(events: list[Event], i: int, state: RoundState | None) -> str:
    e = events[i]
    return (
        f"version {i + 1}: recorded {_show(e)}, which no player's choice makes here and the "
        f"rules do not derive{_rule(state, [], None, e)}"
    )


def _rule(
    state: RoundState | None, made_before: Sequence[Event], made: Event | None, recorded: Any
) -> str:
    """The rule the difference breaks, in words, where one can be named (else "")."""
    if state is None:
        return ""
    s = state
    for e in made_before:
        s = evolve(s, e)
    dealer = s.dealer
    kind, recorded_kind = type(made), type(recorded)
    if recorded_kind is PlayerCardDealt:
        index = s.box_index(recorded.player_id, recorded.box)
        if index >= 0 and 0 <= recorded.hand < len(s.boxes[index].hands):
            hand = s.boxes[index].hands[recorded.hand]
            if hand.status == BUST:
                return f" (the hand is bust at {hand.hard}: it takes no more cards)"
            if hand.status != OPEN:
                return f" (the hand is {hand.status}: it takes no more cards)"
    if recorded_kind is DealerCardDealt and kind is not DealerCardDealt:
        if s.rules.kind == DUEL:
            return " (a duel has no dealer)"
        if s.turn >= 0:
            return " (the dealer draws only after every hand is played)"
        if not s.revealed and s.dealer.cards:
            return " (the dealer draws only after the hole card is turned over)"
        if dealer.total >= 17:
            soft = " soft" if dealer.is_soft else ""
            return f" (the dealer stands on{soft} {dealer.total})"
    if kind is HoleCardRevealed:
        return " (the hole card is turned over before the dealer draws)"
    if kind is DealerPeeked:
        return " (the dealer peeks for blackjack here)"
    if kind is TurnStarted:
        return f" (the turn of {made.player_id} box {made.box} hand {made.hand} starts here)"  # type: ignore[union-attr]
    if kind is DealerCardDealt:
        return f" (the dealer draws on {dealer.total})"
    if kind is PlayerStood and not made.auto:  # type: ignore[union-attr]
        return " (a hand that reaches 21 stands)"
    if made is not None and kind is recorded_kind:
        what = "the settlement" if kind is RoundSettled else "the fields"
        recorded_data = event_to_dict(cast(Event, recorded))
        return f" ({what} differs: {first_difference(recorded_data, event_to_dict(made))})"
    if made is None and s.turn >= 0 and s.boxes:
        box = s.boxes[s.turn]
        return (
            f" ({box.player_id} box {box.box} hand {s.turn_hand} is still to act: "
            "nothing happens until that hand stands, busts or times out)"
        )
    return ""
