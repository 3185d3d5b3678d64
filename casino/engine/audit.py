"""Re-enactment: the strongest replay check an auditor can run on a round's events.

`evolve` only folds facts. `reenact` re-derives them: it reads the players' decisions out of
the recorded events (a bet, an insurance answer, a hit, a stand, a double, a split, a void,
a timeout), feeds them to the decider at the recorded times with the recorded cards, and
requires the decider to produce exactly the recorded events, one for one. So a dealer who
drew on 18, a wrong payout, a missing peek or a timeout before its deadline all show up.
Whether each card is the fair shoe's card is fairness/verify.py's job (fairness-v1 5.3).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

from casino.engine.commands import (
    Command,
    DeclineInsurance,
    Double,
    Hit,
    OpenRound,
    PlaceBet,
    RevealSeed,
    Split,
    Stand,
    TakeEvenMoney,
    TakeInsurance,
    Timeout,
    VoidRound,
)
from casino.engine.decider import step
from casino.engine.errors import DomainError
from casino.engine.events import (
    BetPlaced,
    BettingClosed,
    DealerCardDealt,
    DuelTimerStarted,
    EvenMoneyTaken,
    Event,
    HandDoubled,
    HandSplit,
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
from casino.engine.rules import RULESETS, RuleSet
from casino.engine.state import BETTING, RoundState


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
    amounts: dict[int, int] = {}
    for later in events[i:]:
        if type(later) is not BetPlaced or later.player_id != e.player_id:
            break
        amounts[later.box] = later.amount
    return PlaceBet(e.player_id, tuple(amounts.get(b, 0) for b in range(max(amounts) + 1)))


def _voided(e: RoundVoided, state: RoundState | None) -> Command:
    no_bets = state is not None and state.phase == BETTING and e.reason == "no_bets"
    return _TIMEOUT if no_bets else VoidRound(e.reason, e.evidence)


def _opening(e: RoundOpened) -> OpenRound:
    return OpenRound(
        e.round_id, e.table_id, e.ruleset, e.chain_id, e.nonce, e.commitment,
        e.participants, e.options,
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


# timed event type -> (event, rules) -> the time of the command that made it
_TIME_OF: dict[type[Any], Callable[[Any, RuleSet], int]] = {
    RoundOpened: lambda e, _: e.opened_at_ms,
    BettingClosed: lambda e, _: e.closed_at_ms,
    InsuranceOffered: lambda e, rules: e.deadline_ms - rules.insurance_timeout_ms,
    TurnStarted: lambda e, rules: e.deadline_ms - rules.turn_timeout_ms,
    DuelTimerStarted: lambda e, rules: e.deadline_ms - rules.duel_timer_ms,
    RoundSettled: lambda e, _: e.settled_at_ms,
    RoundVoided: lambda e, _: e.voided_at_ms,
}


def _implied_now(
    produced: Sequence[Event], recorded: Sequence[Event], rules: RuleSet
) -> int | None:
    """The command's time, read off the first recorded event that carries one."""
    for made, e in zip(produced, recorded, strict=False):
        kind = type(e)
        if type(made) is not kind:
            return None
        time_of = _TIME_OF.get(kind)
        if time_of is not None:
            return time_of(e, rules)
    return None


# Recorded events that only a decision starts (a PlayerCardDealt may be a hit or a card the
# rules dealt); `_time_guess` stops at them.
_DECISIONS = frozenset(
    {RoundOpened, BetPlaced, PlayerStood, HandDoubled, HandSplit, InsuranceTaken,
     InsuranceDeclined, EvenMoneyTaken, ServerSeedRevealed}
)  # fmt: skip


def _time_guess(events: Sequence[Event], i: int, rules: RuleSet) -> tuple[int, int] | None:
    """The time of the decision at event i as the record implies it, if a timed event
    follows before the next decision (a guess: `reenact` takes it only when it holds), and
    the index of that timed event (the first one at or after i)."""
    first: Any = events[i]
    kind = type(first)
    time_of = _TIME_OF.get(kind)
    if time_of is not None:
        return time_of(first, rules), i
    cards = 2 if kind is HandSplit else 1 if kind is HandDoubled else 0
    for j in range(i + 1, len(events)):
        e: Any = events[j]
        later = type(e)
        time_of = _TIME_OF.get(later)
        if time_of is not None:
            return time_of(e, rules), j
        if later in _DECISIONS:
            if later is BetPlaced and kind is BetPlaced and e.player_id == first.player_id:
                continue  # one player's bets on several boxes are one decision
            return None
        if later is PlayerCardDealt:
            if cards == 0:
                return None
            cards -= 1
    return None


def reenact(events: Sequence[Event]) -> list[str]:
    """Discrepancies between the recorded events and what the rules make of the same
    decisions and cards (empty list: the round is exactly what the rules say)."""
    return reenact_states(events)[0]


def reenact_states(
    events: Sequence[Event],
) -> tuple[list[str], dict[int, RoundState | None]]:
    """`reenact`, and the state after events[:k] at every k where a decision's events end
    (0 included; the last k is len(events) when the round re-enacts in full): `step` returns
    the fold of the events it makes, so these are the states `evolve` folds to there."""
    boundaries: dict[int, RoundState | None] = {0: None}
    if not events or not isinstance(events[0], RoundOpened):
        return ["the round does not start with RoundOpened"], boundaries
    opened = events[0]
    rules = RULESETS.get(opened.ruleset)
    if rules is None:
        return [f"unknown rule set {opened.ruleset!r}"], boundaries
    if rules.version_hash != opened.ruleset_hash:
        return [
            f"rule set hash {opened.ruleset_hash} is not {opened.ruleset} {rules.version_hash}"
        ], boundaries
    problems = _reenact(list(events), rules, opened.opened_at_ms, boundaries)
    return problems, boundaries


def _reenact(
    events: list[Event], rules: RuleSet, now: int, boundaries: dict[int, RoundState | None]
) -> list[str]:
    shoe = _RecordedShoe(events)
    state: RoundState | None = None
    i = 0
    count = len(events)
    while i < count:
        command = _command(events, i, state)
        if command is None:
            return [f"event {i + 1} ({events[i].type}) follows from no decision"]
        if command is _TIMEOUT and state is not None and state.deadline_ms is not None:
            now = max(now, state.deadline_ms)
        # The one-step path: the command at the time the record's next timed event implies
        # (or at `now` when none follows). Taken only when it reproduces the record and its
        # own timed event implies that same time (or it has none and ran at `now`): exactly
        # where the two-step path below lands, which runs in every other case.
        guess = _time_guess(events, i, rules)
        at = now if guess is None else guess[0]
        try:
            produced, after = step(state, command, at, shoe)
        except Exception:  # whatever the guess met, the two-step path below says it exactly
            produced = []
        length = len(produced)
        recorded = events[i : i + length]
        if length and produced == recorded:
            if guess is not None and guess[1] < i + length:
                # The guess's timed event is among the events reproduced, and no timed event
                # comes before it from i on: it is the one _implied_now would read (equal
                # events have the same types), so the implied time is the guess itself.
                implied: int | None = at
            else:
                implied = _implied_now(produced, recorded, rules)
            if implied == at or (implied is None and at == now):
                now, state, i = at, after, i + length
                boundaries[i] = state
                continue
        where = f"event {i + 1} ({events[i].type})"
        try:
            produced, after = step(state, command, now, shoe)
            implied = _implied_now(produced, events[i:], rules)
            if implied is not None and implied != now:
                now = implied
                produced, after = step(state, command, now, shoe)
        except DomainError as err:
            return [
                f"{where}: the rules refuse {type(command).__name__} ({err.code}: {err.message})"
            ]
        recorded = list(events[i : i + len(produced)])
        if not produced or produced != recorded:
            for n, (made, e) in enumerate(zip(produced, recorded, strict=False)):
                if made != e:
                    return [f"event {i + n + 1}: the rules make {made}, the record says {e}"]
            return [f"{where}: the rules make {len(produced)} events here, the record differs"]
        state = after
        i += len(produced)
        boundaries[i] = state
    return []
