"""Re-enactment: the strongest replay check an auditor can run on a round's events.

`evolve` only folds facts. `reenact` re-derives them: it reads the players' decisions out of
the recorded events (a bet, an insurance answer, a hit, a stand, a double, a split, a void,
a timeout), feeds them to the decider at the recorded times with the recorded cards, and
requires the decider to produce exactly the recorded events, one for one. So a dealer who
drew on 18, a wrong payout, a missing peek or a timeout before its deadline all show up.
Whether each card is the fair shoe's card is fairness/verify.py's job (fairness-v1 5.3).
"""

from __future__ import annotations

from collections.abc import Sequence

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
        self.cards = {
            e.position: e.card for e in events if isinstance(e, PlayerCardDealt | DealerCardDealt)
        }

    def card_at(self, position: int) -> str:
        if position not in self.cards:
            raise DomainError("card_not_recorded", f"the rules deal position {position}")
        return self.cards[position]


def _command(events: Sequence[Event], i: int, state: RoundState | None) -> Command | None:
    """The decision that recorded event i stands for (None: it is no decision)."""
    e = events[i]
    if isinstance(e, RoundOpened):
        return OpenRound(
            e.round_id, e.table_id, e.ruleset, e.chain_id, e.nonce, e.commitment,
            e.participants, e.options,
        )  # fmt: skip
    if isinstance(e, BetPlaced):
        amounts: dict[int, int] = {}
        for later in events[i:]:
            if not isinstance(later, BetPlaced) or later.player_id != e.player_id:
                break
            amounts[later.box] = later.amount
        return PlaceBet(e.player_id, tuple(amounts.get(b, 0) for b in range(max(amounts) + 1)))
    if isinstance(e, InsuranceTaken):
        return TakeInsurance(e.player_id, e.box, e.amount)
    if isinstance(e, InsuranceDeclined | PlayerStood) and e.auto:
        return Timeout()
    if isinstance(e, InsuranceDeclined):
        return DeclineInsurance(e.player_id, e.box)
    if isinstance(e, EvenMoneyTaken):
        return TakeEvenMoney(e.player_id, e.box)
    if isinstance(e, PlayerStood):
        return Stand(e.player_id)
    if isinstance(e, HandDoubled):
        return Double(e.player_id)
    if isinstance(e, HandSplit):
        return Split(e.player_id)
    if isinstance(e, PlayerCardDealt):
        return Hit(e.player_id, confirm=True)
    if isinstance(e, BettingClosed):
        return Timeout()  # betting closed by its deadline, not by the last bet
    if isinstance(e, RoundVoided):
        no_bets = state is not None and state.phase == BETTING and e.reason == "no_bets"
        return Timeout() if no_bets else VoidRound(e.reason, e.evidence)
    if isinstance(e, ServerSeedRevealed):
        return RevealSeed(e.server_seed)
    return None


def _implied_now(
    produced: Sequence[Event], recorded: Sequence[Event], rules: RuleSet
) -> int | None:
    """The command's time, read off the first recorded event that carries one."""
    for made, e in zip(produced, recorded, strict=False):
        if type(made) is not type(e):
            return None
        if isinstance(e, RoundOpened):
            return e.opened_at_ms
        if isinstance(e, BettingClosed):
            return e.closed_at_ms
        if isinstance(e, InsuranceOffered):
            return e.deadline_ms - rules.insurance_timeout_ms
        if isinstance(e, TurnStarted):
            return e.deadline_ms - rules.turn_timeout_ms
        if isinstance(e, DuelTimerStarted):
            return e.deadline_ms - rules.duel_timer_ms
        if isinstance(e, RoundSettled):
            return e.settled_at_ms
        if isinstance(e, RoundVoided):
            return e.voided_at_ms
    return None


def reenact(events: Sequence[Event]) -> list[str]:
    """Discrepancies between the recorded events and what the rules make of the same
    decisions and cards (empty list: the round is exactly what the rules say)."""
    if not events or not isinstance(events[0], RoundOpened):
        return ["the round does not start with RoundOpened"]
    opened = events[0]
    rules = RULESETS.get(opened.ruleset)
    if rules is None:
        return [f"unknown rule set {opened.ruleset!r}"]
    if rules.version_hash != opened.ruleset_hash:
        return [f"rule set hash {opened.ruleset_hash} is not {opened.ruleset} {rules.version_hash}"]
    shoe = _RecordedShoe(events)
    state: RoundState | None = None
    now = opened.opened_at_ms
    i = 0
    while i < len(events):
        where = f"event {i + 1} ({events[i].type})"
        command = _command(events, i, state)
        if command is None:
            return [f"{where} follows from no decision"]
        if isinstance(command, Timeout) and state is not None and state.deadline_ms is not None:
            now = max(now, state.deadline_ms)
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
    return []
