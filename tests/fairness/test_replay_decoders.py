"""The replay's compiled decoders (`fairness.replay.compile_decoders`) are strict: whatever the
data holds (Hypothesis), a decoder either gives the engine's own event (`event_from_dict`),
field for field and type for type, whose JSON (`event_to_dict`) is the data exactly, or
refuses: the engine's KeyError for a missing field, DecodeError for a field of another JSON
type (`true` for an integer) or a field the event does not have."""

from __future__ import annotations

import dataclasses
import typing
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from casino.engine.events import EVENT_TYPES, event_from_dict, event_to_dict
from fairness.replay import DecodeError, load_decoders

DECODERS = load_decoders()
assert DECODERS is not None

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=6,
)


def _fields(cls: type[Any]) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _value_for(hint: Any) -> st.SearchStrategy[Any]:
    """Data a stream may hold for a field of this type: any JSON value, and where the field
    is a value object or a tuple of them, their data as often."""
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return st.one_of(_data_for(hint), _JSON)
    if typing.get_origin(hint) is tuple:
        inner = (typing.get_args(hint) or (None,))[0]
        if isinstance(inner, type) and dataclasses.is_dataclass(inner):
            return st.lists(_data_for(inner), max_size=3)
        return st.lists(_JSON, max_size=3)
    return _JSON


def _data_for(cls: type[Any]) -> st.SearchStrategy[dict[str, Any]]:
    hints = _fields(cls)
    return st.fixed_dictionaries(
        {f.name: _value_for(hints[f.name]) for f in dataclasses.fields(cls)},
        optional={"extra": _JSON},
    )


@st.composite
def _event(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    drop: bool = draw(st.booleans())
    type_: str = draw(st.sampled_from(sorted(EVENT_TYPES)))
    data: dict[str, Any] = draw(_data_for(EVENT_TYPES[type_]))
    if data and drop:
        del data[draw(st.sampled_from(sorted(data)))]  # a field missing, maybe
    return type_, data


def _engine(type_: str, data: dict[str, Any]) -> Any:
    try:
        return event_from_dict({**data, "type": type_})
    except Exception as exc:
        return type(exc), exc.args


def _ours(type_: str, data: dict[str, Any]) -> Any:
    assert DECODERS is not None
    try:
        return DECODERS[type_](data)
    except Exception as exc:
        return type(exc), exc.args


def _alike(a: Any, b: Any) -> bool:
    """Equal, of the same types all the way down (1 and True are equal, not alike)."""
    if type(a) is not type(b):
        return False
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        return all(_alike(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    if isinstance(a, tuple | list):
        return len(a) == len(b) and all(_alike(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_alike(a[k], b[k]) for k in a)
    return bool(a == b)


def _conforms(hint: Any, value: Any) -> bool:
    """Whether a JSON value is of the field type `hint`, exactly (a bool is no int here)."""
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        hints = _fields(hint)
        names = [f.name for f in dataclasses.fields(hint)]
        return (
            type(value) is dict
            and sorted(value) == sorted(names)
            and all(_conforms(hints[n], value[n]) for n in names)
        )
    if typing.get_origin(hint) is tuple:
        inner = (typing.get_args(hint) or (None,))[0]
        return type(value) is list and all(_conforms(inner, v) for v in value)
    if typing.get_origin(hint) is not None:  # X | None
        return any(_conforms(option, value) for option in typing.get_args(hint))
    return value is None if hint is type(None) else type(value) is hint


@settings(max_examples=1500, deadline=None)
@given(_event())
def test_decoded_events_are_the_engines_own_or_refused(event: tuple[str, dict[str, Any]]) -> None:
    type_, data = event
    assert DECODERS is not None
    try:
        ours = DECODERS[type_](data)
    except KeyError as exc:  # a missing field: the engine's own KeyError
        engine = _engine(type_, data)
        assert engine == (KeyError, exc.args)
        return
    except DecodeError:
        assert not _conforms(EVENT_TYPES[type_], data)
        return
    assert _conforms(EVENT_TYPES[type_], data)
    assert _alike(ours, event_from_dict({**data, "type": type_}))
    made = event_to_dict(ours)
    del made["type"]
    assert _alike(made, data)
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(ours, dataclasses.fields(ours)[0].name, None)


def test_the_decoders_name_a_wrong_type_and_an_unknown_field() -> None:
    assert DECODERS is not None
    card = {"position": 1, "card": "AS", "player_id": "p1", "box": 0, "hand": 0, "hidden": False}
    assert DECODERS["PlayerCardDealt"](card) == event_from_dict({**card, "type": "PlayerCardDealt"})
    with pytest.raises(DecodeError, match=r"^PlayerCardDealt.position: int is needed$"):
        DECODERS["PlayerCardDealt"]({**card, "position": True})
    with pytest.raises(DecodeError, match=r"^PlayerCardDealt.hidden: bool is needed$"):
        DECODERS["PlayerCardDealt"]({**card, "hidden": 0})
    with pytest.raises(DecodeError, match=r"^PlayerCardDealt: unknown field 'note'$"):
        DECODERS["PlayerCardDealt"]({**card, "note": 1})
    opened = {
        "round_id": "r", "table_id": "t", "ruleset": "classic", "ruleset_hash": "h",
        "chain_id": "c", "nonce": 1, "commitment": "x", "opened_at_ms": 0,
        "betting_deadline_ms": 1, "options": {"min_bet": 1, "max_bet": 2, "chip_unit": 2,
                                              "stake": 0, "extra": 0},
        "participants": [],
    }  # fmt: skip
    with pytest.raises(DecodeError, match=r"^RoundOptions: unknown field 'extra'$"):
        DECODERS["RoundOpened"](opened)


def test_events_the_decider_interns_decode_to_the_deciders_own_instance() -> None:
    from casino.engine.events import (
        INTERNED,
        HandResult,
        RoundSettled,
        new_hand_result,
        new_player_card,
    )

    assert DECODERS is not None
    data = {"position": 4, "card": "QH", "player_id": "p1", "box": 0, "hand": 0, "hidden": False}
    decoded = DECODERS["PlayerCardDealt"](data)
    assert decoded is new_player_card(4, "QH", "p1", 0, 0, False)
    assert decoded is DECODERS["PlayerCardDealt"](dict(data))
    result = {
        "player_id": "p1", "box": 0, "hand": 0, "outcome": "win", "stake": 10, "gross_return": 20,
        "total": 19,
    }  # fmt: skip
    settled = DECODERS["RoundSettled"](
        {"hands": [result], "insurance": [], "fee": 0, "dealer_total": 18, "settled_at_ms": 5}
    )
    assert type(settled) is RoundSettled
    assert settled.hands[0] is new_hand_result("p1", 0, 0, "win", 10, 20, 19)
    assert INTERNED[HandResult] is new_hand_result
