"""Hypothesis properties over random rounds of every rule set, driven by random commands.

money is conserved; replay(events) == live state; the engine is deterministic; no view
shows a hidden card before its reveal; events survive to/from dict; card k is position k.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from casino.engine.audit import reenact
from casino.engine.cards import CARD_POINTS
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
from casino.engine.decider import evolve, replay, settle, step
from casino.engine.errors import DomainError
from casino.engine.events import (
    CardsRevealed,
    DealerCardDealt,
    Event,
    HoleCardRevealed,
    PlayerCardDealt,
    RoundSettled,
    event_from_dict,
    event_to_dict,
)
from casino.engine.evolve import RoundState
from casino.engine.money import ROUND, ledger_legs
from casino.engine.rules import DUEL, RULESETS
from casino.engine.settle import duel_payouts
from casino.engine.shoe import FastShoe, Shoe, StackedShoe
from casino.engine.views import Viewer, event_for_viewer, view

from .helpers import COMMITMENT, SERVER_SEED, T0, options_for, participants, usdc

RULESET_NAMES = sorted(RULESETS)


SMALL_DECK = ["AS", "AH", "8S", "8D", "TS", "KH", "5C", "6D", "9C", "2H"]


@st.composite
def scripts(draw: st.DrawFn) -> tuple[str, int, int, list[tuple[int, int, int]]]:
    """(ruleset, players, shoe seed, [(command pick, argument pick, time step)]).

    Seeds below 1000 pick a stacked shoe from a pair- and ace-rich deck so splits,
    insurance and even money come up often; the rest use FastShoe(seed).
    """
    name = draw(st.sampled_from(RULESET_NAMES))
    rules = RULESETS[name]
    players = draw(st.integers(rules.min_seats, min(rules.max_seats, 4)))
    seed = draw(st.one_of(st.integers(0, 999), st.integers(1000, 2**32)))
    moves = draw(
        st.lists(
            st.tuples(
                st.integers(0, 99), st.integers(0, 99), st.sampled_from([0, 0, 0, 1, 90_000])
            ),
            max_size=40,
        )
    )
    return name, players, seed, moves


def shoe_for(seed: int) -> Shoe:
    if seed < 1000:
        fast = FastShoe(seed)
        return StackedShoe([SMALL_DECK[CARD_POINTS[fast.card_at(i)] % 10] for i in range(120)])
    return FastShoe(seed)


def _candidates(state: RoundState, players: int, pick: int) -> list[Command]:
    """Commands that make sense now (mostly), plus a few that the engine must refuse."""
    ids = [f"p{i + 1}" for i in range(players)]
    pid = ids[pick % players]
    amount = usdc([1, 2.5, 10, 50][pick % 4])
    if state.phase == "betting":
        waiting = [p for p in ids if all(b.player_id != p for b in state.boxes)] or ids
        bettor = waiting[pick % len(waiting)]
        boxes = 1 + pick % state.rules.max_boxes
        return [PlaceBet(bettor, (amount,) * boxes), PlaceBet(bettor, (amount,)), Timeout()]
    if state.phase == "insurance":
        offered = [b for b in state.boxes if b.insurance_status.endswith("offered")]
        box = offered[pick % len(offered)] if offered else state.boxes[0]
        half = None if pick % 2 else box.bet // 2
        return [
            TakeInsurance(box.player_id, box.box, half),
            DeclineInsurance(box.player_id, box.box),
            TakeEvenMoney(box.player_id, box.box),
            Timeout(),
        ]
    actor = state.boxes[state.turn].player_id if state.turn >= 0 else pid
    commands: list[Command] = [
        Hit(actor, confirm=pick % 3 > 0),
        Stand(actor),
        Double(actor),
        Split(actor),
        Split(actor),
        Hit(pid),
        Timeout(),
        RevealSeed(SERVER_SEED),
    ]
    if pick > 95:
        commands.append(VoidRound("malfunction", "test"))
    if state.turn >= 0 and pick % 2:  # favour splitting pairs so resplits come up
        hand = state.boxes[state.turn].hands[state.turn_hand]
        if len(hand.cards) == 2 and CARD_POINTS[hand.cards[0]] == CARD_POINTS[hand.cards[1]]:
            return [Split(actor)] * 3 + commands
    return commands


def _play(
    script: tuple[str, int, int, list[tuple[int, int, int]]],
) -> tuple[list[Event], list[RoundState]]:
    name, players, seed, moves = script
    shoe = shoe_for(seed)
    stake = usdc(1) if RULESETS[name].kind == DUEL else 0
    opening = OpenRound(
        "r", "t", name, "c", 1, COMMITMENT, participants(players), options_for(name, stake)
    )
    now = T0
    events, state = step(None, opening, now, shoe)
    states = [state]
    for which, pick, dt in moves:
        now += dt
        commands = _candidates(state, players, pick)
        command = commands[which % len(commands)]
        try:
            new, state = step(state, command, now, shoe)
        except DomainError as err:
            if err.code != "deadline_passed":
                continue
            new, state = step(state, Timeout(), now, shoe)
        events.extend(new)
        states.append(state)
    return events, states


FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(scripts())
def test_replay_equals_live_state_and_events_round_trip(script: Any) -> None:
    events, states = _play(script)
    assert replay(events) == states[-1]
    for event in events:
        data = event_to_dict(event)
        assert event_from_dict(json.loads(json.dumps(data))) == event


@FAST
@given(scripts())
def test_reenacting_the_recorded_decisions_reproduces_every_event(script: Any) -> None:
    events, _ = _play(script)
    assert reenact(events) == []


@FAST
@given(scripts())
def test_deterministic(script: Any) -> None:
    assert _play(script)[0] == _play(script)[0]


@FAST
@given(scripts())
def test_card_k_is_shoe_position_k(script: Any) -> None:
    events, _ = _play(script)
    shoe = shoe_for(script[2])
    dealt = [e for e in events if isinstance(e, PlayerCardDealt | DealerCardDealt)]
    assert [e.position for e in dealt] == list(range(len(dealt)))
    assert all(e.card == shoe.card_at(e.position) for e in dealt)


@FAST
@given(scripts())
def test_money_is_conserved(script: Any) -> None:
    events, states = _play(script)
    balance: Counter[str] = Counter()
    staked = 0
    for event in events:
        for leg in ledger_legs(event):
            assert leg.amount > 0
            balance[leg.source] -= leg.amount
            balance[leg.destination] += leg.amount
            if leg.reason == "stake":
                staked += leg.amount
        assert balance[ROUND] >= 0
        if isinstance(event, RoundSettled):
            assert balance[ROUND] == 0
            in_settlement = sum(r.stake for r in event.hands) + sum(
                i.stake for i in event.insurance
            )
            assert in_settlement == staked
            if states[-1].rules.kind == DUEL:
                assert balance["house"] == 0
                assert sum(r.gross_return for r in event.hands) + event.fee == staked
    assert sum(balance.values()) == 0
    if states[-1].finished:
        assert balance[ROUND] == 0
    if states[-1].voided is not None:  # a void hands every player back exactly their stakes
        assert all(v == 0 for k, v in balance.items() if k.startswith("player:"))


@FAST
@given(scripts())
def test_public_settle_recomputes_every_recorded_settlement(script: Any) -> None:
    """settle(state before the settlement, its time) gives exactly the recorded events (the
    verifier's check): [RoundSettled] house-banked, [CardsRevealed, RoundSettled] duel."""
    events, _ = _play(script)
    states: list[Any] = [None]
    for event in events:
        states.append(evolve(states[-1], event))
    for index, event in enumerate(events):
        if isinstance(event, RoundSettled):
            first = index - 1 if isinstance(events[index - 1], CardsRevealed) else index
            assert settle(states[first], event.settled_at_ms) == events[first : index + 1]


def _shown(obj: Any, found: set[int]) -> None:
    if isinstance(obj, dict):
        if "card" in obj and "position" in obj:
            found.add(obj["position"])
        for value in obj.values():
            _shown(value, found)
    elif isinstance(obj, list):
        for value in obj:
            _shown(value, found)


def _hidden_positions(events: list[Event], viewer: Viewer) -> set[int]:
    """Positions a viewer must not see given the events so far."""
    hidden: set[int] = set()
    for e in events:
        hole = isinstance(e, DealerCardDealt) and e.hole
        others = isinstance(e, PlayerCardDealt) and e.hidden and e.player_id != viewer.player_id
        if hole or others:
            hidden.add(e.position)
        elif isinstance(e, HoleCardRevealed):
            hidden.discard(e.position)
        elif isinstance(e, CardsRevealed):
            hidden.clear()
    return hidden


@FAST
@given(scripts())
def test_no_view_shows_a_hidden_card_before_its_reveal(script: Any) -> None:
    events, _ = _play(script)
    viewers = [Viewer("public"), Viewer("auditor"), Viewer("staff")]
    viewers += [Viewer("player", f"p{i + 1}") for i in range(script[1])]
    for n in range(1, len(events) + 1):
        state = replay(events[:n])
        for viewer in viewers:
            shown: set[int] = set()
            rendered = view(state, viewer)
            _shown(rendered, shown)
            assert not shown & _hidden_positions(events[:n], viewer)
            if state.server_seed is None:
                assert SERVER_SEED not in json.dumps(rendered)
            pushed = event_for_viewer(events[n - 1], viewer)
            if pushed.get("card") is not None and "position" in pushed:
                assert pushed["position"] not in _hidden_positions(events[:n], viewer)


@settings(max_examples=300, deadline=None)
@given(
    players=st.integers(2, 8),
    stake=st.integers(50, 50_000).map(lambda cents: cents * 10_000),
    totals=st.lists(st.tuples(st.integers(4, 26), st.booleans()), min_size=8, max_size=8),
)
def test_duel_split_is_exact(players: int, stake: int, totals: list[tuple[int, bool]]) -> None:
    hands = [(21 if bj else t, bj) for t, bj in totals[:players]]
    bps = RULESETS["duel"].fee_bps_for(players)
    gross, fee = duel_payouts(hands, stake, bps)
    assert sum(gross) + fee == players * stake
    assert fee == players * stake * bps // 10_000
    paid = [g for g in gross if g]
    assert max(paid) - min(paid) <= 1  # winners share evenly, to the micro-USDC
    winners = [i for i, g in enumerate(gross) if g]
    extra = [gross[i] - min(paid) for i in winners]
    assert extra == sorted(extra, reverse=True)  # remainder micro-USDC go to the first seats
