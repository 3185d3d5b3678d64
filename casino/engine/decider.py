"""The decider: decide(state, command, now_ms, shoe) -> events; evolve; replay; expire.

Pure: no I/O, no clock (now_ms is an argument), no randomness (the shoe is injected).
The live path and replay share `evolve`: `step` returns exactly reduce(evolve, events, state).

Service flow for every command: state = replay(stored events); events = expire(state, now,
shoe) (append them if any, fold); then decide(state, command, now, shoe). A command
arriving after an expired deadline without that first step raises `deadline_passed`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from typing import Any, Final

from casino.engine import banked, duel
from casino.engine import errors as E
from casino.engine.commands import (
    Command,
    DeclineInsurance,
    Double,
    Hit,
    OpenRound,
    PlaceBet,
    PlayerCommand,
    RecordBeacon,
    RevealSeed,
    Split,
    Stand,
    TakeEvenMoney,
    TakeInsurance,
    Timeout,
    VoidRound,
)
from casino.engine.errors import DomainError
from casino.engine.events import (
    BeaconAwaited,
    BeaconRecorded,
    Event,
    Participant,
    PlayerAmount,
    RoundOpened,
    RoundOptions,
    RoundVoided,
    ServerSeedRevealed,
    beacon_material,
    beacon_round_after,
    beacon_round_time,
    client_material,
    new_bet_placed,
    new_betting_closed,
)
from casino.engine.evolve import (
    BEACON,
    BETTING,
    DUELING,
    INSURANCE,
    PLAYING,
    SETTLED,
    VOIDED,
    ReplayError,
    RoundState,
    Run,
    evolve,
    replay,
    start_run,
)
from casino.engine.rules import DUEL, RULESETS, RuleSet
from casino.engine.shoe import Shoe

__all__ = ["ReplayError", "decide", "evolve", "expire", "replay", "settle", "step"]

_CLIENT_SEED = re.compile(r"[A-Za-z0-9_.\-]{1,64}")
_BEACON_SIGNATURE = re.compile(r"[0-9a-f]{96}")
BEACON_VOID_REASON: Final = "beacon_unavailable"


# Timed event type -> (its field, the rule set's timeout added to the command's time there):
# the command that made the event ran at data[field] - timeout.
TIMED_FIELDS: Final[dict[str, tuple[str, str | None]]] = {
    "RoundOpened": ("opened_at_ms", None),
    "BettingClosed": ("closed_at_ms", None),
    "BeaconRecorded": ("recorded_at_ms", None),
    "InsuranceOffered": ("deadline_ms", "insurance_timeout_ms"),
    "TurnStarted": ("deadline_ms", "turn_timeout_ms"),
    "DuelTimerStarted": ("deadline_ms", "duel_timer_ms"),
    "RoundSettled": ("settled_at_ms", None),
    "RoundVoided": ("voided_at_ms", None),
}


def command_time(type_: str, data: Any, rules: RuleSet) -> int | None:
    """The time of the command that made an event of this type with this data (a mapping or
    the event itself), or None for an event that carries no time."""
    timed = TIMED_FIELDS.get(type_)
    if timed is None:
        return None
    name, timeout = timed
    value = data[name] if isinstance(data, dict) else getattr(data, name)
    return int(value) - (getattr(rules, timeout) if timeout is not None else 0)


def decide(
    state: RoundState | None, command: Command, now_ms: int, shoe: Shoe | None
) -> list[Event]:
    """The events `command` causes, or DomainError with a stable code."""
    return step(state, command, now_ms, shoe)[0]


def step(
    state: RoundState | None, command: Command, now_ms: int, shoe: Shoe | None
) -> tuple[list[Event], RoundState]:
    """decide and fold in one go: (events, reduce(evolve, events, state))."""
    kind = type(command)  # commands are dispatched by exact type (no command is subclassed)
    if kind is OpenRound:
        if state is not None:
            raise DomainError(E.ROUND_ALREADY_OPEN, "this round is already open")
        return _open(command, now_ms, shoe)  # type: ignore[arg-type]
    if state is None:
        raise DomainError(E.ROUND_NOT_OPEN, "open the round first")
    run = Run()  # start_run, inlined: every command after the opening comes here
    run.state = state
    run.now_ms = now_ms
    run.shoe = shoe
    run.events = []
    if kind in _ROUND_COMMANDS:  # valid whatever the phase
        _ROUND_COMMANDS[kind](run, command)
    else:
        phase = state.phase
        if phase in _FINISHED:  # state.finished, inlined
            raise DomainError(E.ROUND_FINISHED, f"the round is {phase}")
        deadline = state.deadline_ms
        if deadline is not None and now_ms >= deadline:
            raise DomainError(E.DEADLINE_PASSED, "a deadline passed: apply expire() first")
        if kind is RecordBeacon:
            _record_beacon(run, command)  # type: ignore[arg-type]
        elif phase == BEACON:
            raise DomainError(
                E.ACTION_NOT_ALLOWED, f"the deal waits for beacon round {state.beacon_round}"
            )
        else:
            _play(run, command)  # type: ignore[arg-type]
    return run.events, run.state


_FINISHED: Final = (SETTLED, VOIDED)


def expire(state: RoundState | None, now_ms: int, shoe: Shoe | None) -> list[Event]:
    """The events an expired deadline implies at now_ms (empty if none expired)."""
    if state is None:
        return []
    run = start_run(state, now_ms, shoe)
    _expire(run)
    return run.events


def settle(state: RoundState, now_ms: int) -> list[Event]:
    """The settlement events the engine derives from `state` at `now_ms`, with the same code a
    live round runs: house-banked, [RoundSettled]; duel, [CardsRevealed, RoundSettled] (or []
    while a duel hand is still open). No shoe: settling deals no card."""
    run = start_run(state, now_ms, None)
    if state.rules.kind == DUEL:
        duel.finish_if_done(run)
    else:
        banked.settle(run)
    return run.events


def _expire(run: Run) -> None:
    s = run.state
    if s.finished or s.deadline_ms is None or run.now_ms < s.deadline_ms:
        return
    if s.phase == BETTING:
        if s.boxes:
            _close_and_deal(run)  # seats that did not bet sit this round out
        else:
            run.emit(RoundVoided("no_bets", "", (), (), 0, False, run.now_ms))
    elif s.phase == INSURANCE:
        banked.expire_insurance(run)
    elif s.phase == PLAYING and s.turn >= 0:
        banked.stand_on_timeout(run)
    elif s.phase == DUELING:
        duel.expire(run)
    elif s.phase == BEACON:
        spec = s.opened.beacon
        assert spec is not None  # BeaconAwaited needs one
        evidence = f"{spec.name} round {s.beacon_round} was not recorded within {spec.wait_s} s"
        _void(run, VoidRound(BEACON_VOID_REASON, evidence))


def _play(run: Run, command: PlayerCommand) -> None:
    s = run.state
    kind = type(command)
    if kind is PlaceBet:
        _place_bet(run, command)  # type: ignore[arg-type]
        return
    if s.rules.kind == DUEL:  # a duel's hit and stand find the player's box (or refuse, as _seat)
        if kind is Hit:
            duel.hit(run, command.player_id)
        elif kind is Stand:
            duel.stand(run, command.player_id)
        else:
            _seat(s, command.player_id)
            raise DomainError(E.ACTION_NOT_ALLOWED, "duel allows hit and stand only")
        return
    seat = _seat(s, command.player_id)
    if kind is Hit:
        banked.hit(run, command, seat.safety_net and s.rules.safety_net_available)  # type: ignore[arg-type]
    else:
        action = _BANKED_ACTIONS.get(kind)
        if action is None:  # pragma: no cover - every command type is handled
            raise DomainError(E.ACTION_NOT_ALLOWED, f"unknown command {kind.__name__}")
        action(run, command)


def _seat(s: RoundState, player_id: str) -> Participant:
    """The player's seat in this round, or not_a_participant."""
    for p in s.opened.participants:
        if p.player_id == player_id:
            return p
    raise DomainError(E.NOT_A_PARTICIPANT, "you are not seated in this round")


# The last table that passed the checks. A table (and the simulator) opens round after round
# with the very same immutable participants and options objects: an identity match skips
# the lookup below. One tuple, read and replaced whole (atomic under the GIL; the held
# references keep the ids from being reused).
_last_valid_table: list[tuple[object, object, object]] = [(None, None, None)]

# The tables that passed the checks, keyed by every value the checks read: the rule set's
# name, the four limits, and the seats' player ids and client seeds, in seat order (the key's
# length gives the seat count). Plain strings and ints hash and compare in C; the Participant
# and RoundOptions objects (a verifier decodes new ones every round) hash and compare through
# a Python method each. Value: the rule set that passed them, so another rule set of the same
# name is checked anew. Emptied when full.
_valid_tables: dict[tuple[Any, ...], RuleSet] = {}
_VALID_TABLES_MAX: Final = 256


def _check_table(rules: RuleSet, command: OpenRound) -> None:
    participants, options = command.participants, command.options
    last = _last_valid_table[0]
    if last[0] is rules and last[1] is participants and last[2] is options:
        return
    key = (
        rules.name, options.min_bet, options.max_bet, options.chip_unit, options.stake,
        *[p.player_id for p in participants], *[p.client_seed for p in participants],
    )  # fmt: skip
    if _valid_tables.get(key) is not rules:
        problems = _table_problems(rules, participants, options)
        if problems:
            raise DomainError(E.INVALID_TABLE, problems)
        if len(_valid_tables) >= _VALID_TABLES_MAX:
            _valid_tables.clear()
        _valid_tables[key] = rules
    _last_valid_table[0] = (rules, participants, options)


def _table_problems(rules: RuleSet, participants: tuple[Participant, ...], o: RoundOptions) -> str:
    players = [p.player_id for p in participants]
    problems = []
    if not rules.min_seats <= len(players) <= rules.max_seats:
        problems.append(f"{rules.name} seats {rules.min_seats}..{rules.max_seats} players")
    if len(set(players)) != len(players):
        problems.append("a player is seated twice")
    if any(not _CLIENT_SEED.fullmatch(p.client_seed) for p in participants):
        problems.append("client seeds are 1-64 characters of [A-Za-z0-9_.-]")
    if o.chip_unit <= 0 or o.chip_unit % 2:
        problems.append("the chip unit must be a positive even number of micro-USDC")
    limits = (o.stake,) if rules.kind == DUEL else (o.min_bet, o.max_bet)
    if any(v % o.chip_unit for v in limits if o.chip_unit > 0):
        problems.append("limits must be multiples of the chip unit")
    if rules.kind == DUEL:
        if not rules.min_table_bet <= o.stake <= rules.max_table_bet:
            problems.append(f"the duel stake must be {rules.min_table_bet}..{rules.max_table_bet}")
    else:
        if not rules.min_table_bet <= o.min_bet <= rules.max_table_bet:
            problems.append(f"the minimum must be {rules.min_table_bet}..{rules.max_table_bet}")
        if o.max_bet < o.min_bet:
            problems.append("the maximum is below the minimum")
    return "; ".join(problems)


# rules.version_hash once per rule set (the property hashes the RuleSet for its cache lookup).
_VERSION_HASHES: Final = {name: rules.version_hash for name, rules in RULESETS.items()}


def _open(command: OpenRound, now_ms: int, shoe: Shoe | None) -> tuple[list[Event], RoundState]:
    rules = RULESETS.get(command.ruleset)
    if rules is None:
        raise DomainError(E.INVALID_TABLE, f"unknown rule set {command.ruleset!r}")
    _check_table(rules, command)
    opened = RoundOpened(
        command.round_id,
        command.table_id,
        rules.name,
        _VERSION_HASHES[rules.name],
        command.chain_id,
        command.nonce,
        command.commitment,
        command.participants,
        command.options,
        now_ms,
        now_ms + rules.betting_timeout_ms,
        command.beacon,
    )
    run = start_run(evolve(None, opened), now_ms, shoe)
    run.events.append(opened)
    if rules.kind == DUEL:  # 004: "all players betting the set limit", then the deal
        if shoe is None:
            raise DomainError(E.SHOE_REQUIRED, "closing betting deals cards: pass the round's shoe")
        if command.beacon is not None and awaits_beacon(run.state):  # no beacon: no wait
            participants = command.participants
            stake = command.options.stake
            run.emit_all([new_bet_placed(p.player_id, 0, stake) for p in participants])
            _close_for_beacon(run)
        else:
            duel.bet_and_deal(run, command.options.stake)
    return run.events, run.state


def _place_bet(run: Run, command: PlaceBet) -> None:
    s = run.state
    _seat(s, command.player_id)
    if s.phase != BETTING or s.rules.kind == DUEL:
        raise DomainError(E.ACTION_NOT_ALLOWED, "betting is closed")
    for existing in s.boxes:
        if existing.player_id == command.player_id:
            raise DomainError(E.ALREADY_BET, "you already bet this round")
    amounts = command.amounts
    if not 1 <= len(amounts) <= s.rules.max_boxes:
        raise DomainError(E.ACTION_NOT_ALLOWED, f"bet on 1..{s.rules.max_boxes} boxes")
    o = s.opened.options
    for amount in amounts:
        if amount < 0 or amount % o.chip_unit:
            raise DomainError(E.INVALID_AMOUNT, f"bets are multiples of {o.chip_unit} micro-USDC")
        if 0 < amount < o.min_bet:
            raise DomainError(E.BET_BELOW_MINIMUM, f"the table minimum is {o.min_bet}")
        if amount > o.max_bet:
            raise DomainError(E.BET_ABOVE_MAXIMUM, f"the table maximum is {o.max_bet}")
    if not any(amounts):
        raise DomainError(E.INSUFFICIENT_STAKE, "place at least the table minimum")
    for box, amount in enumerate(amounts):
        if amount:
            run.emit(new_bet_placed(command.player_id, box, amount))
    if len(s.opened.participants) == 1 or _everyone_bet(run.state):
        _close_and_deal(run)


def _everyone_bet(s: RoundState) -> bool:
    bettors = {b.player_id for b in s.boxes}
    for p in s.opened.participants:  # noqa: SIM110 - a plain loop: no generator for all()
        if p.player_id not in bettors:
            return False
    return True


def awaits_beacon(s: RoundState) -> bool:
    """Whether closing betting waits for the beacon: a beacon table, two or more seats."""
    return s.opened.beacon is not None and len(s.opened.participants) >= 2


def _close_for_beacon(run: Run) -> None:
    """Lock the seats' client seeds and name the beacon round the deal waits for."""
    spec = run.state.opened.beacon
    assert spec is not None
    run.emit(new_betting_closed(client_material(run.state.opened.participants), run.now_ms))
    beacon_round = beacon_round_after(spec, run.now_ms)
    round_time = beacon_round_time(spec, beacon_round)
    run.emit(BeaconAwaited(beacon_round, round_time, (round_time + spec.wait_s) * 1000))


def _record_beacon(run: Run, command: RecordBeacon) -> None:
    s = run.state
    spec = s.opened.beacon
    if s.phase != BEACON or spec is None:
        raise DomainError(E.ACTION_NOT_ALLOWED, "the round does not wait for a beacon")
    if command.round != s.beacon_round:
        raise DomainError(
            E.BEACON_MISMATCH,
            f"the deal waits for beacon round {s.beacon_round}, not {command.round}",
        )
    if type(command.signature) is not str or not _BEACON_SIGNATURE.fullmatch(command.signature):
        raise DomainError(E.BEACON_MISMATCH, "a signature is 96 lowercase hex digits")
    published_ms = beacon_round_time(spec, s.beacon_round) * 1000
    if run.now_ms < published_ms:
        raise DomainError(
            E.ACTION_NOT_ALLOWED, f"beacon round {s.beacon_round} is published at {published_ms} ms"
        )
    if run.shoe is None:
        raise DomainError(E.SHOE_REQUIRED, "recording the beacon deals cards: pass the shoe")
    randomness = hashlib.sha256(bytes.fromhex(command.signature)).hexdigest()
    material = beacon_material(s.client_material, spec, s.beacon_round, randomness)
    run.emit(BeaconRecorded(s.beacon_round, command.signature, randomness, material, run.now_ms))
    if s.rules.kind == DUEL:
        duel.deal(run)
    else:
        banked.deal(run)


def _close_and_deal(run: Run) -> None:
    if awaits_beacon(run.state):
        _close_for_beacon(run)
        return
    if run.shoe is None:
        raise DomainError(E.SHOE_REQUIRED, "closing betting deals cards: pass the round's shoe")
    closed = new_betting_closed(client_material(run.state.opened.participants), run.now_ms)
    if run.state.rules.kind == DUEL:
        run.emit(closed)
        duel.deal(run)
    else:
        banked.deal(run, closed)  # folds the close and the deal as one state


def _void(run: Run, command: VoidRound) -> None:
    s = run.state
    if s.phase == VOIDED:
        raise DomainError(E.ALREADY_VOIDED, "the round is already void")
    staked: dict[str, int] = {}
    for box in s.boxes:
        amount = box.insurance + sum(h.stake for h in box.hands)
        staked[box.player_id] = staked.get(box.player_id, 0) + amount
    paid: dict[str, int] = {}
    fee = 0
    settled = s.phase == SETTLED and s.settlement is not None
    if s.phase == SETTLED and s.settlement is not None:
        fee = s.settlement.fee
        for results in (s.settlement.hands, s.settlement.insurance):
            for r in results:
                paid[r.player_id] = paid.get(r.player_id, 0) + r.gross_return
    refunds = tuple(PlayerAmount(pid, amount) for pid, amount in staked.items() if amount)
    reversed_ = tuple(PlayerAmount(pid, amount) for pid, amount in paid.items() if amount)
    run.emit(
        RoundVoided(command.reason, command.evidence, refunds, reversed_, fee, settled, run.now_ms)
    )


def _reveal_seed(run: Run, command: RevealSeed) -> None:
    s = run.state
    if not s.finished:
        raise DomainError(E.ROUND_NOT_FINISHED, "the seed is revealed after the round ends")
    if s.server_seed is not None:
        raise DomainError(E.SEED_ALREADY_REVEALED, "the seed is already revealed")
    digest = hashlib.sha256(command.server_seed.encode("ascii")).hexdigest()
    if digest != s.opened.commitment:
        raise DomainError(E.SEED_MISMATCH, "the seed does not hash to the round's commitment")
    run.emit(ServerSeedRevealed(command.server_seed))


# Dispatch by command type (cheaper than a chain of isinstance tests on every command).
_ROUND_COMMANDS: Final[dict[type[Any], Callable[[Run, Any], None]]] = {
    Timeout: lambda run, command: _expire(run),
    VoidRound: _void,
    RevealSeed: _reveal_seed,
}
_BANKED_ACTIONS: Final[dict[type[Any], Callable[[Run, Any], None]]] = {
    Stand: banked.stand,
    Double: banked.double,
    Split: banked.split,
    TakeInsurance: lambda run, c: banked.take_insurance(run, c.player_id, c.box, c.amount),
    DeclineInsurance: lambda run, c: banked.decline_insurance(run, c.player_id, c.box),
    TakeEvenMoney: lambda run, c: banked.take_even_money(run, c.player_id, c.box),
}
