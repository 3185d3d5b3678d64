"""The optimised engine against the reference engine (tests/engine/reference: the decider as
it was before the speed work, folding every event one by one with `evolve`).

The event contract: for the same state, command, shoe and now, `step` must give exactly the
same events (types, fields, order) and the same state, or the same domain error; and folding
stored events with `evolve` must give the same states. Checked over random command scripts
(which reach errors, timeouts, voids, insurance, splits) and over whole rounds played by the
basic-strategy bots on random shoes, for all four rule sets.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from casino.engine.bots import bot_command
from casino.engine.commands import Command, OpenRound
from casino.engine.decider import evolve, step
from casino.engine.errors import DomainError
from casino.engine.events import Event
from casino.engine.rules import DUEL, RULESETS, USDC
from casino.engine.shoe import FastShoe, Shoe
from casino.engine.simulator import BankedBot, _allowed
from casino.engine.state import PLAYING, RoundState
from casino.engine.strategy import basic_strategy

from .helpers import COMMITMENT, T0, options_for, participants
from .reference import decider as reference
from .reference import evolve as reference_evolve
from .test_properties import _candidates, scripts, shoe_for

RULESET_NAMES = sorted(RULESETS)
SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
BOTS = {name: BankedBot(rules) for name, rules in RULESETS.items()}  # memo shared by examples


def _both(
    state: RoundState | None, command: Command, now: int, shoe: Shoe
) -> tuple[list[Event], RoundState] | str:
    """step() of both engines; they must agree. Returns the result or the error code."""
    try:
        expected: tuple[list[Event], RoundState] | str = reference.step(state, command, now, shoe)
    except DomainError as err:
        expected = err.code
    try:
        got: tuple[list[Event], RoundState] | str = step(state, command, now, shoe)
    except DomainError as err:
        got = err.code
    assert got == expected, f"{command} at {now}"
    return got


def _assert_replays_alike(events: list[Event]) -> None:
    ours: Any = None
    theirs: Any = None
    for event in events:
        ours = evolve(ours, event)
        theirs = reference_evolve.evolve(theirs, event)
        assert ours == theirs, event


@SETTINGS
@given(scripts())
def test_random_commands_give_the_reference_events_states_and_errors(script: Any) -> None:
    name, players, seed, moves = script
    shoe = shoe_for(seed)
    stake = USDC if RULESETS[name].kind == DUEL else 0
    opening = OpenRound(
        "r", "t", name, "c", 1, COMMITMENT, participants(players), options_for(name, stake)
    )
    now = T0
    result = _both(None, opening, now, shoe)
    assert not isinstance(result, str)
    events, state = result
    for which, pick, dt in moves:
        now += dt
        commands = _candidates(state, players, pick)
        command = commands[which % len(commands)]
        _both(state, command, now, None)  # without the shoe: the same events or error too
        result = _both(state, command, now, shoe)
        if isinstance(result, str):
            continue
        events += result[0]
        state = result[1]
    _assert_replays_alike(events)


@SETTINGS
@given(
    name=st.sampled_from(RULESET_NAMES),
    seed=st.integers(0, 2**40),
    players=st.integers(1, 4),
    boxes=st.integers(1, 3),
)
def test_bot_rounds_give_the_reference_events_and_states(
    name: str, seed: int, players: int, boxes: int
) -> None:
    """Whole rounds as the simulator and the bots play them (deal, dealer draw, settlement)."""
    rules = RULESETS[name]
    players = min(max(players, rules.min_seats), rules.max_seats)
    shoe = FastShoe(seed)
    stake = USDC if rules.kind == DUEL else 0
    opening = OpenRound(
        "r", "t", name, "c", seed, COMMITMENT, participants(players), options_for(name, stake)
    )
    result = _both(None, opening, T0, shoe)
    assert not isinstance(result, str)
    events, state = result
    bets = (options_for(name).min_bet,) * min(boxes, rules.max_boxes)
    while not state.finished:
        for p in state.opened.participants:
            command = bot_command(state, p.player_id, bets)
            if command is not None:
                break
        assert command is not None, state.phase
        if state.phase == PLAYING and state.turn >= 0 and rules.kind != DUEL:
            _check_bot(name, state)
        result = _both(state, command, T0, shoe)
        assert not isinstance(result, str), result
        events += result[0]
        state = result[1]
    _assert_replays_alike(events)


def _check_bot(name: str, state: RoundState) -> None:
    """The simulator's memoised bot plays exactly basic strategy."""
    rules = state.rules
    up = state.dealer.cards[1 - rules.hole_card_index]
    hand = state.boxes[state.turn].hands[state.turn_hand]
    expected = basic_strategy(
        hand.cards, up, _allowed(rules, state), double_after_split=rules.double_after_split
    )
    assert BOTS[name].move(state, up) == expected
