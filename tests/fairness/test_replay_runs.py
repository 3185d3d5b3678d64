"""The settlement check's fold (`load_fold(runs=True)`, used by the verifier's engine check:
the bets, close and first deal by `fold_opening` (or the close and first deal by
`fold_closed_deal`), a banked round's play (the peek, the turns, the hole card and the
dealer's cards) by `fold_play`, else turns by `fold_turn_stood`, the hole card and
the dealer's cards by `fold_hole_cards`, the settlement and seed reveal by
`fold_settled_seed`) gives the states and refusals of folding every event one by one, on
sample rounds of every rule set and on events tampered in every way a forger could."""

from __future__ import annotations

import dataclasses
import hashlib
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from casino.engine.events import BetPlaced, PlayerCardDealt, PlayerStood, TurnStarted
from casino.engine.evolve import fold_play, fold_turn_stood
from fairness.chain import create_chain
from fairness.receipt import private_key_from_hex
from fairness.replay import load, load_decoders, load_fold, load_folded
from fairness.sample import sample_bundle
from tests.fairness.test_verify import _fold_one_by_one

KEY = private_key_from_hex(hashlib.sha256(b"turns").hexdigest())
CHAIN = create_chain(12, head=hashlib.sha256(b"turns chain").hexdigest())
KINDS = (
    (["alice"], "classic"),
    (["alice"], "atlantic_city"),
    (["a", "b", "c"], "duel_classic"),
    (["a", "b", "c", "d"], "duel_classic"),
    (["a", "b", "c"], "duel"),
)


def _rounds() -> list[tuple[list[Any], dict[str, Any]]]:
    decoders = load_decoders()
    assert decoders is not None
    out = []
    for seeds, ruleset in KINDS:
        for nonce in range(1, 11):
            line = sample_bundle(
                round_id=f"t{nonce}", server_seed=CHAIN.seed(nonce), client_seeds=seeds,
                nonce=nonce, private_key=KEY, ruleset=ruleset,
            )  # fmt: skip
            out.append(([decoders[e["type"]](e["data"]) for e in line["events"]], line))
    return out


ROUNDS = _rounds()


def _turns(objects: list[Any]) -> list[tuple[int, int]]:
    """(start, end) of every TurnStarted, PlayerCardDealt..., PlayerStood run."""
    runs = []
    for i, event in enumerate(objects):
        if type(event) is TurnStarted:
            end = i + 1
            while end < len(objects) and type(objects[end]) is PlayerCardDealt:
                end += 1
            if end < len(objects) and type(objects[end]) is PlayerStood:
                runs.append((i, end + 1))
    return runs


def _assert_fold_matches(objects: list[Any]) -> None:
    fold = load_fold(runs=True)
    assert fold is not None
    states, refused = fold(objects)
    expected, expected_refused = _fold_one_by_one(objects)
    assert refused == expected_refused
    assert len(states) == len(expected)
    for k, state in enumerate(states):
        if state is not None:
            assert state == expected[k], k
            if all(type(o.position) is int for o in objects if hasattr(o, "position")):
                assert repr(state) == repr(expected[k]), k
    # Only a state inside a run may be left out; the settlement check reads none of those.
    folded = load_folded()
    assert folded is not None
    if not refused:
        assert _outcome(folded, objects, states) == _outcome(folded, objects, expected)


def _outcome(check: Any, *args: Any) -> Any:
    """What a check gives, or the exception it raises (verify_round reports it)."""
    try:
        return check(*args)
    except Exception as exc:
        return type(exc), str(exc)


def test_sample_rounds_have_turns_and_fold_as_one_by_one() -> None:
    turns = 0
    for objects, _ in ROUNDS:
        turns += len(_turns(objects))
        _assert_fold_matches(objects)
    assert turns >= 60


def test_sample_rounds_take_every_run_fold(monkeypatch: Any) -> None:
    """The untampered rounds fold their runs as runs (so the tests here compare each run
    fold with the one-by-one fold)."""
    names = ("fold_opening", "fold_play", "fold_settled_seed")
    taken = _counting(
        monkeypatch, (*names, "fold_turn_stood", "fold_hole_cards", "fold_closed_deal")
    )
    fold = load_fold(runs=True)
    assert fold is not None
    for objects, _ in ROUNDS:
        assert not fold(objects)[1]
    assert min(taken[name] for name in names) >= 10, taken
    # The play folds as one run unless a card ends a hand (21) or the round is a duel: then
    # its turns and the dealer's cards fold as their own runs.
    assert taken["fold_turn_stood"] >= 1 and taken["fold_hole_cards"] >= 1, taken
    # Bets out of seat order are no opening as the decider plays it: they fold as bets,
    # then BettingClosed and the first deal as one run.
    assert taken["fold_closed_deal"] == 0
    reordered = 0
    for objects, _ in ROUNDS:
        bets = [i for i, o in enumerate(objects) if type(o) is BetPlaced]
        if len(bets) > 1:
            swapped = list(objects)
            swapped[bets[0]], swapped[bets[1]] = swapped[bets[1]], swapped[bets[0]]
            _assert_fold_matches(swapped)
            reordered += 1
    assert reordered >= 10 and taken["fold_closed_deal"] >= reordered, taken


def test_an_opening_out_of_seat_order_folds_as_one_by_one() -> None:
    """The first two seats' bets and both passes of their cards swapped alike: a forger's
    consistent reorder, which the bets' fold sorts back into seat order."""
    changed = 0
    for objects, _ in ROUNDS:
        bets = [i for i, o in enumerate(objects) if type(o) is BetPlaced]
        if len(bets) < 2:
            continue
        deal = [i for i, o in enumerate(objects) if o.type.endswith("CardDealt")]
        first = deal[0]
        width = (len([o for o in objects[: bets[-1] + 1] if type(o) is BetPlaced])) + (
            1 if any(o.type == "DealerCardDealt" for o in objects[first : first + 9]) else 0
        )
        swapped = list(objects)
        swapped[bets[0]], swapped[bets[1]] = objects[bets[1]], objects[bets[0]]
        for start in (first, first + width):
            swapped[start], swapped[start + 1] = (
                dataclasses.replace(objects[start + 1], position=objects[start].position),
                dataclasses.replace(objects[start], position=objects[start + 1].position),
            )
        _assert_fold_matches(swapped)
        changed += 1
    assert changed >= 10


def _counting(monkeypatch: Any, names: tuple[str, ...]) -> dict[str, int]:
    """Count the calls of these engine folds (as load_fold finds them)."""
    from casino.engine import evolve as engine_evolve

    taken = dict.fromkeys(names, 0)
    for name in names:
        original = getattr(engine_evolve, name)

        def counted(*args: Any, _name: str = name, _original: Any = original) -> Any:
            taken[_name] += 1
            return _original(*args)

        monkeypatch.setattr(engine_evolve, name, counted)
    return taken


def test_untampered_turns_take_the_turn_fold() -> None:
    taken = 0
    for objects, _ in ROUNDS:
        states, _ = _fold_one_by_one(objects)
        for start, end in _turns(objects):
            state = fold_turn_stood(
                states[start], objects[start], list(objects[start + 1 : end - 1]),
                objects[end - 1],
            )  # fmt: skip
            if state is not None:
                taken += 1
                assert state == states[end]
                assert repr(state) == repr(states[end])
    assert taken >= 60


def _engine_check(objects: list[Any]) -> Any:
    """The settlement check as the verifier ran it before the run folds: one by one."""
    folded = load_folded()
    assert folded is not None
    states, refused = _fold_one_by_one(objects)
    return refused or _outcome(folded, objects, states)


def _check(objects: list[Any]) -> Any:
    """The settlement check with the run folds (`load`'s)."""
    fold = load_fold(runs=True)
    folded = load_folded()
    assert fold is not None and folded is not None
    states, refused = fold(objects)
    return refused or _outcome(folded, objects, states)


_FIELDS: dict[type[Any], tuple[str, ...]] = {
    TurnStarted: ("player_id", "box", "hand"),
    PlayerCardDealt: ("player_id", "box", "hand", "position", "card"),
    PlayerStood: ("player_id", "box", "hand"),
}
_VALUES = (0, 1, 2, -1, True, False, "0", "a", "b", "nobody", "AS", "KD", "ZZ", "5H", None)


def _moved(objects: list[Any], index: int, how: str) -> bool:
    """Drop, repeat or swap (with the next) the event at `index`, as `how` says; whether it
    did (a swap needs a next event)."""
    if how == "drop":
        del objects[index]
    elif how == "repeat":
        objects.insert(index, objects[index])
    elif how == "swap" and index + 1 < len(objects):
        objects[index], objects[index + 1] = objects[index + 1], objects[index]
    else:
        return False
    return True


@st.composite
def _tampered(draw: st.DrawFn) -> list[Any]:
    """A sample round with one of its turns changed: a field of one of its events, an event
    dropped, repeated or moved, or another turn's event put in."""
    objects, _ = draw(st.sampled_from([r for r in ROUNDS if _turns(r[0])]))
    objects = list(objects)
    runs = _turns(objects)
    start, end = draw(st.sampled_from(runs))
    index = draw(st.integers(start, end - 1))
    how = draw(st.sampled_from(["field", "shift", "drop", "repeat", "swap", "foreign"]))
    event = objects[index]
    if how == "field":
        name = draw(st.sampled_from(_FIELDS[type(event)]))
        value = draw(st.sampled_from(_VALUES))
        objects[index] = dataclasses.replace(event, **{name: value})
    elif how == "shift" and type(event) is PlayerCardDealt:
        objects[index] = dataclasses.replace(
            event, position=event.position + draw(st.sampled_from([-1, 1]))
        )
    elif _moved(objects, index, how):
        pass
    else:  # an event of another round's turn
        other, _ = draw(st.sampled_from([r for r in ROUNDS if _turns(r[0])]))
        o_start, o_end = draw(st.sampled_from(_turns(other)))
        objects.insert(index, other[draw(st.integers(o_start, o_end - 1))])
    return objects


@st.composite
def _tampered_anywhere(draw: st.DrawFn) -> list[Any]:
    """A sample round with any one event changed (a field), dropped, repeated, moved, or
    another round's event put in: the other runs (the close and deal, the hole card and
    the dealer's cards, the settlement and seed reveal) as much as the turns."""
    objects, _ = draw(st.sampled_from(ROUNDS))
    objects = list(objects)
    index = draw(st.integers(0, len(objects) - 1))
    event = objects[index]
    how = draw(st.sampled_from(["field", "field", "drop", "repeat", "swap", "foreign"]))
    names = [f.name for f in dataclasses.fields(event)]
    if how == "field" and names:
        name = draw(st.sampled_from(names))
        value = draw(st.sampled_from([*_VALUES, getattr(event, name)]))
        if isinstance(getattr(event, name), int) and not isinstance(value, str):
            value = draw(st.sampled_from([value, getattr(event, name) + 1]))
        objects[index] = dataclasses.replace(event, **{name: value})
    elif _moved(objects, index, how):
        pass
    else:
        other, _ = draw(st.sampled_from(ROUNDS))
        objects.insert(index, draw(st.sampled_from(other)))
    return objects


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_tampered_anywhere())
def test_tampered_rounds_fold_and_check_as_one_by_one(objects: list[Any]) -> None:
    _assert_fold_matches(objects)
    assert _check(objects) == _engine_check(objects)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_tampered())
def test_tampered_turns_fold_and_check_as_one_by_one(objects: list[Any]) -> None:
    _assert_fold_matches(objects)
    assert _check(objects) == _engine_check(objects)


def test_a_tampered_turn_fails_verification_with_the_one_by_one_message() -> None:
    """Through the bundle: a turn whose stand names another hand is refused or settled as
    the one-by-one fold refuses or settles it."""
    check = load()
    assert check is not None
    decoders = load_decoders()
    assert decoders is not None
    seen = 0
    for objects, line in ROUNDS:
        for _start, end in _turns(objects):
            events = [dict(e, data=dict(e["data"])) for e in line["events"]]
            events[end - 1]["data"]["hand"] = 1
            decoded = [decoders[e["type"]](e["data"]) for e in events]
            assert check(events, line["receipt"]) == _engine_check(decoded)
            seen += 1
    assert seen >= 60


def _settled_alike(state: Any, now_ms: int) -> None:
    from casino.engine.decider import settle, settlement

    try:
        expected: Any = settle(state, now_ms)
    except Exception as exc:
        expected = type(exc), str(exc)
    try:
        got: Any = settlement(state, now_ms)
    except Exception as exc:
        got = type(exc), str(exc)
    assert got == expected
    assert repr(got) == repr(expected)


def test_settlement_is_settle_on_every_state_of_the_sample_rounds() -> None:
    """decider.settlement (the check's, without the run) derives what settle derives."""
    seen = 0
    for objects, _ in ROUNDS:
        states, _ = _fold_one_by_one(objects)
        for state in states[1:]:
            _settled_alike(state, 1_767_225_600_000)
            seen += 1
    assert seen >= 500


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_tampered_anywhere(), st.integers(0, 2**40))
def test_settlement_is_settle_on_tampered_rounds(objects: list[Any], now_ms: int) -> None:
    states, _ = _fold_one_by_one(objects)
    for state in states[1:]:
        _settled_alike(state, now_ms)


_PLAY = ("DealerPeeked", "TurnStarted", "PlayerCardDealt", "PlayerStood", "HoleCardRevealed")


def _plays(objects: list[Any]) -> list[tuple[int, int]]:
    """(start, end) of every run fold_runs gives fold_play: from a DealerPeeked or
    TurnStarted, the events of those types, and the dealer's cards."""
    runs = []
    for i, event in enumerate(objects):
        if event.type in ("DealerPeeked", "TurnStarted"):
            end = i + 1
            while end < len(objects) and objects[end].type in (*_PLAY, "DealerCardDealt"):
                end += 1
            runs.append((i, end))
    return runs


def _assert_play_matches(objects: list[Any], start: int, end: int) -> bool:
    """fold_play on events[start:end] gives None, raises, or the one-by-one state at end
    (exactly alike when the positions are ints). Whether it gave a state."""
    states, _ = _fold_one_by_one(objects)
    if len(states) <= start or states[start] is None:
        return False
    try:
        state = fold_play(states[start], list(objects[start:end]))
    except Exception:
        return False
    if state is None:
        return False
    assert len(states) > end, "fold_play took events the one-by-one fold refuses"
    assert state == states[end]
    if all(type(o.position) is int for o in objects if hasattr(o, "position")):
        assert repr(state) == repr(states[end])
    return True


def test_untampered_plays_take_the_play_fold() -> None:
    taken = 0
    for objects, _ in ROUNDS:
        for start, end in _plays(objects):
            taken += _assert_play_matches(objects, start, end)
    assert taken >= 25


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_tampered_anywhere(), st.data())
def test_tampered_plays_fold_as_one_by_one(objects: list[Any], data: st.DataObject) -> None:
    """fold_play on any stretch of a tampered round (a play or not) is the one-by-one fold
    there, or declines (None, or an exception: the caller folds those events otherwise)."""
    start = data.draw(st.integers(1, len(objects)))
    end = data.draw(st.integers(start, len(objects)))
    _assert_play_matches(objects, start, end)
    for start, end in _plays(objects):
        _assert_play_matches(objects, start, end)


def test_the_settlement_check_passes_over_other_events_by_class() -> None:
    """load_folded's check skips an event whose class is an engine event class other than
    RoundSettled and RoundVoided without reading its `type`: that `type` is its class's
    (slots, no instance dict to hold another), and each class's names only that class."""
    from casino.engine.events import EVENT_TYPES

    for name, cls in EVENT_TYPES.items():
        assert cls.type == name
        assert "__slots__" in cls.__dict__ and "type" not in cls.__slots__
        assert all("__dict__" not in k.__dict__ for k in cls.__mro__ if k is not object)
    assert len(set(EVENT_TYPES)) == len(set(EVENT_TYPES.values()))
