"""The replay's compiled decoders (`fairness.replay.compile_decoders`) build each engine event
through a same-slots class (`_slots_twin`) that becomes the event's class: the events are the
engine's own (`event_from_dict`), field for field and type for type, still frozen, and a
missing field raises the engine's KeyError, whatever the data holds (Hypothesis)."""

from __future__ import annotations

import dataclasses
import typing
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from casino.engine.events import EVENT_TYPES, event_from_dict
from fairness.replay import _slots_twin, compile_decoders, load_decoders

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


def _setter_decoders() -> Any:
    """The decoders as compiled before the twins: a slot descriptor call per field."""
    import fairness.replay as replay

    original = replay._slots_twin
    replay._slots_twin = lambda cls: None
    try:
        return compile_decoders(EVENT_TYPES)
    finally:
        replay._slots_twin = original


SETTERS = _setter_decoders()


@settings(max_examples=600, deadline=None)
@given(_event())
def test_decoded_events_are_the_engines_own(event: tuple[str, dict[str, Any]]) -> None:
    type_, data = event
    ours, engine = _ours(type_, data), _engine(type_, data)
    try:
        before: Any = SETTERS[type_](data)
    except Exception as exc:
        before = type(exc), exc.args
    assert _alike(ours, before) or (isinstance(ours, tuple) and ours == before)
    if isinstance(engine, tuple) and len(engine) == 2 and isinstance(engine[0], type):
        if engine[0] is KeyError:  # a missing field: the same KeyError, the same field
            assert ours == engine
        return  # the engine refused the data otherwise (unhashable...): not a replay's case
    assert _alike(ours, engine), (ours, engine)
    assert repr(ours) == repr(engine)
    assert ours == engine
    if _hashable(engine):
        assert hash(ours) == hash(engine)
    for name in (dataclasses.fields(engine)[0].name, "not_a_field"):
        assert _store(ours, name) == _store(engine, name)  # refused alike: still frozen
    refused = _store(ours, dataclasses.fields(engine)[0].name)
    assert refused is not None and refused[0] is dataclasses.FrozenInstanceError


def _store(obj: Any, name: str) -> tuple[type[BaseException], str] | None:
    try:
        setattr(obj, name, 1)
    except Exception as exc:
        return type(exc), str(exc)
    return None


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def test_every_engine_class_gets_a_twin() -> None:
    classes = set(EVENT_TYPES.values())
    for cls in list(classes):
        for hint in _fields(cls).values():
            inner = (typing.get_args(hint) or (None,))[0]
            for nested in (hint, inner):
                if isinstance(nested, type) and dataclasses.is_dataclass(nested):
                    classes.add(nested)
    for cls in classes:
        twin = _slots_twin(cls)
        assert twin is not None, cls
        assert twin.__slots__ == cls.__slots__


def test_classes_without_the_layout_get_no_twin_and_still_decode() -> None:
    @dataclasses.dataclass(frozen=True)
    class NoSlots:
        a: int

    @dataclasses.dataclass(frozen=True, slots=True)
    class Base:
        a: int

    @dataclasses.dataclass(frozen=True, slots=True)
    class Derived(Base):
        b: int

    @dataclasses.dataclass(frozen=True, slots=True, weakref_slot=True)
    class Weak:
        a: int

    @dataclasses.dataclass(frozen=True, slots=True)
    class Plain:
        a: int
        b: str

    assert _slots_twin(NoSlots) is None
    assert _slots_twin(Derived) is None
    assert _slots_twin(Weak) is None
    assert _slots_twin(Plain) is not None
    decoders = compile_decoders({"N": NoSlots, "D": Derived, "W": Weak, "P": Plain})
    assert decoders["N"]({"a": 1}) == NoSlots(1)
    assert decoders["D"]({"a": 1, "b": 2}) == Derived(1, 2)
    assert decoders["W"]({"a": 1}) == Weak(1)
    plain = decoders["P"]({"b": "x", "a": True})
    assert type(plain) is Plain and plain.a is True and plain.b == "x"
    with pytest.raises(KeyError, match="'a'"):
        decoders["P"]({"b": "x"})
