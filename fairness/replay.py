"""Point 4 of fairness-v1 section 5, proof of play, through the rule engine. Pure: no Django.

The round is decided anew: the players' choices are read out of the recorded events, the
engine's own `decide` is run on them with the shoe rebuilt from the revealed server seed,
and the recorded stream must equal the decided one, event for event and field for field
(`casino.engine.audit.reenact`). Loaded by `fairness.verify.load_engine_replay` only when the
engine is importable.

`load()` gives the check on bundle events (dicts); `load_decoded()` the same check on events
already decoded (the server's audit decodes each round once). `load_decoders()` turn an
event's type and data into the engine's event: what
`casino.engine.events.event_from_dict({**data, "type": type})` makes, through one
constructor call per value object, compiled once from the events' dataclass fields.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from fairness.bundle import EVENT_DATA, NESTED
from fairness.shoe import FairShoe

# (bundle events, receipt, the round's dealt cards as proven (or None)) -> failures
Check = Callable[[Sequence[Mapping[str, Any]], Mapping[str, Any], Sequence[str] | None], list[str]]
# (decoded events, receipt, the dealt cards as proven (or None)) -> failures
DecodedCheck = Callable[[Sequence[Any], Mapping[str, Any], Sequence[str] | None], list[str]]
# event type -> (event data -> the engine's event; KeyError: a missing field).
Decoders = dict[str, Callable[[Mapping[str, Any]], Any]]


class DecodeError(ValueError):
    """Event data that is not what the engine's event of that type holds: a field of the
    wrong JSON type, or a field the type does not have (a missing field is a KeyError)."""


# The JSON types a plain field may hold, by its annotation (bool is not an int here: JSON
# tells `true` from `1`, and a stream must be equal to the derived one type for type).
_PLAIN = {int: "int", str: "str", bool: "bool"}


def compile_decoders(
    event_types: Mapping[str, type[Any]],
    constructors: Mapping[type[Any], Callable[..., Any]] | None = None,
) -> Decoders:
    """A decoder per event type for these event classes (frozen dataclasses, as the engine's).

    The same values as the engine's generic `event_from_dict`, read field by field in the
    same order (so a missing field raises the same KeyError), and strict: each field must
    hold its JSON type exactly (an int field an integer, not `true`; a str field a string; a
    list for a tuple; an object for a nested value), and an object must have no field
    beyond its class's (DecodeError names it). Each class gets one generated function that
    checks and converts every field and calls the constructor with them positionally: the
    class, or `constructors[cls]` where given (one that takes the same positional fields and
    gives an equal instance of the class, as the engine's interned constructors do).
    """
    made = constructors or {}
    namespace: dict[str, Any] = {"DecodeError": DecodeError, "unknown": _unknown}
    names: dict[type[Any], str] = {}

    def build(cls: type[Any]) -> str:
        name = names.get(cls)
        if name is not None:
            return name
        name = names[cls] = f"_decode_{len(names)}"
        namespace[f"{name}_cls"] = cls
        namespace[f"{name}_new"] = made.get(cls, cls)
        hints = typing.get_type_hints(cls)
        fields = dataclasses.fields(cls)
        lines = [
            f"def {name}(d):",
            "    if type(d) is not dict:",
            f"        raise DecodeError('{cls.__name__}: an object is needed')",
        ]
        optional = 0  # fields `X | None` of a dataclass X: left out of the data when None
        for n, field in enumerate(fields):
            hint, value = hints[field.name], f"v{n}"
            where = f"{cls.__name__}.{field.name}"
            maybe = _optional_dataclass(hint)
            if maybe is not None:
                optional += 1
                lines.append(f"    {value} = d.get({field.name!r})")
                lines.append(f"    if {value} is not None:")
                lines.append(f"        {value} = {build(maybe)}({value})")
                lines.append(f"    elif {field.name!r} in d:")
                lines.append(f"        raise DecodeError('{where}: left out, never null')")
                continue
            lines.append(f"    {value} = d[{field.name!r}]")
            if isinstance(hint, type) and dataclasses.is_dataclass(hint):
                lines.append(f"    {value} = {build(hint)}({value})")
                continue
            if typing.get_origin(hint) is tuple:
                inner = (typing.get_args(hint) or (None,))[0]
                lines.append(f"    if type({value}) is not list:")
                lines.append(f"        raise DecodeError('{where}: a list is needed')")
                if isinstance(inner, type) and dataclasses.is_dataclass(inner):
                    lines.append(f"    {value} = tuple(map({build(inner)}, {value}))")
                else:
                    plain = _PLAIN[inner]
                    lines.append(f"    if any(type(x) is not {plain} for x in {value}):")
                    lines.append(f"        raise DecodeError('{where}: {plain} items only')")
                    lines.append(f"    {value} = tuple({value})")
                continue
            options = typing.get_args(hint) if typing.get_origin(hint) is not None else (hint,)
            test = " and ".join(
                f"{value} is not None" if option is type(None) else
                f"type({value}) is not {_PLAIN[option]}"
                for option in options
            )  # fmt: skip
            kinds = " or ".join("null" if o is type(None) else _PLAIN[o] for o in options)
            lines.append(f"    if {test}:")
            lines.append(f"        raise DecodeError('{where}: {kinds} is needed')")
        size = (
            str(len(fields))
            if not optional
            else f"{len(fields)} - "
            + " - ".join(
                f"(v{n} is None)"
                for n, f in enumerate(fields)
                if _optional_dataclass(hints[f.name])
            )
        )
        lines.append(f"    if len(d) != {size}:")
        lines.append(f"        unknown({name}_cls, d)")
        values = ", ".join(f"v{n}" for n in range(len(fields)))
        lines.append(f"    return {name}_new({values})")
        exec("\n".join(lines) + "\n", namespace)  # as dataclasses builds __init__
        return name

    return {type_: namespace[build(cls)] for type_, cls in event_types.items()}


def _optional_dataclass(hint: Any) -> type[Any] | None:
    """X for a hint `X | None` where X is a dataclass, else None."""
    args = typing.get_args(hint)
    if len(args) == 2 and type(None) in args:
        inner = args[0] if args[1] is type(None) else args[1]
        if isinstance(inner, type) and dataclasses.is_dataclass(inner):
            return inner
    return None


def _unknown(cls: type[Any], data: Mapping[str, Any]) -> None:
    known = {field.name for field in dataclasses.fields(cls)}
    extra = ", ".join(sorted(repr(k) for k in data if k not in known))
    raise DecodeError(f"{cls.__name__}: unknown field {extra}")


_DECODERS: list[Decoders] = []  # the engine's decoders, compiled on first use


def load_decoders() -> Decoders | None:
    """The engine's event decoders (see `compile_decoders`), or None without the engine.
    Compiled once per process (about 4 ms: a `manage.py audit` of one round used to pay it
    for that round alone) and shared: callers only read the mapping. The events the decider
    builds through interned constructors (`casino.engine.events.INTERNED`) are decoded
    through the same ones, so a recorded event and the derived one are one object wherever
    they are equal, and the proof of play's comparison of the two ends at the identity.
    """
    if not _DECODERS:
        try:  # the rule engine is optional: a standalone verifier may not ship it
            from casino.engine.events import EVENT_TYPES, INTERNED
        except ImportError:
            return None
        _DECODERS.append(compile_decoders(EVENT_TYPES, INTERNED))
    return _DECODERS[0]


class DealtShoe:
    """The round's fair shoe for the proof of play. `dealt`: the cards at positions 0, 1, ...
    already proven equal to the shoe's (fairness-v1 section 5 point 3, which the verifier
    checks before the proof of play runs), dealt as they are; beyond them, or without them,
    the shoe is shuffled from its seed (`FairShoe`), only if the rules deal further."""

    __slots__ = ("_args", "_dealt", "_shoe")

    def __init__(self, server_seed: str, client_material: str, nonce: int, dealt: Sequence[str]):
        self._shoe = None if dealt else FairShoe(server_seed, client_material, nonce)
        self._args = (server_seed, client_material, nonce)
        self._dealt = dealt

    def card_at(self, position: int) -> str:
        dealt = self._dealt
        if 0 <= position < len(dealt):
            return dealt[position]
        if self._shoe is None:
            self._shoe = FairShoe(*self._args)
        return self._shoe.card_at(position)


def load_decoded() -> DecodedCheck | None:
    """Proof of play on decoded events, or None when the rule engine is not importable."""
    try:  # the rule engine is optional: a standalone verifier may not ship it
        from casino.engine.audit import reenact
    except ImportError:
        return None

    def check(
        objects: Sequence[Any], receipt: Mapping[str, Any], dealt: Sequence[str] | None = None
    ) -> list[str]:
        try:
            shoe = DealtShoe(
                receipt["server_seed"], receipt["client_material"], receipt["nonce"], dealt or ()
            )
        except (KeyError, TypeError, ValueError) as exc:
            return [f"play: no shoe to decide the round on ({type(exc).__name__}: {exc})"]
        return [f"play: {problem}" for problem in reenact(objects, shoe)]

    return check


class PlayCheck:
    """Proof of play on bundle events, as `load` gives it: called as a `Check`. Its halves
    serve a caller that decodes a round's events before its other checks: `decode` (the
    engine's events, or None when one does not decode: the call then says why) and
    `decided` (the proof of play on the decoded events). `shapes_strict`: every event that
    decodes has data of exactly the shape `fairness.bundle`'s strict check asks of its type
    (the same fields, the same nested objects and lists of them), so that check need not
    look at the data of a round that decoded."""

    __slots__ = ("_decoders", "decided", "shapes_strict")

    def __init__(self, decoders: Decoders, decided: DecodedCheck, shapes_strict: bool) -> None:
        self._decoders = decoders
        self.decided = decided
        self.shapes_strict = shapes_strict

    def decode(self, events: Sequence[Mapping[str, Any]]) -> list[Any] | None:
        decoders = self._decoders
        try:
            return [decoders[e["type"]](e["data"]) for e in events]
        except (KeyError, TypeError, ValueError):
            return None

    def __call__(
        self,
        events: Sequence[Mapping[str, Any]],
        receipt: Mapping[str, Any],
        dealt: Sequence[str] | None = None,
    ) -> list[str]:
        decoders = self._decoders
        try:
            objects: list[Any] = [decoders[e["type"]](e["data"]) for e in events]
        except (KeyError, TypeError, ValueError) as exc:
            return [f"play: an event does not decode ({type(exc).__name__}: {exc})"]
        return self.decided(objects, receipt, dealt)


def _shape(cls: type[Any]) -> dict[str, str | None]:
    """A dataclass's fields as `fairness.bundle.EVENT_DATA` writes them: None for a plain
    value, "Name" for a nested dataclass, "[Name]" for a tuple of them ("[]": of plain values)."""
    hints = typing.get_type_hints(cls)
    shape: dict[str, str | None] = {}
    for field in dataclasses.fields(cls):
        hint = hints[field.name]
        maybe = _optional_dataclass(hint)
        if maybe is not None:
            shape[field.name] = f"{maybe.__name__}?"  # left out of the data when None
        elif isinstance(hint, type) and dataclasses.is_dataclass(hint):
            shape[field.name] = hint.__name__
        elif typing.get_origin(hint) is tuple:
            inner = (typing.get_args(hint) or (None,))[0]
            if isinstance(inner, type) and dataclasses.is_dataclass(inner):
                shape[field.name] = f"[{inner.__name__}]"
            else:
                shape[field.name] = "[]"
        else:
            shape[field.name] = None
    return shape


def shapes_strict(event_types: Mapping[str, type[Any]]) -> bool:
    """Whether these event classes, decoded by `compile_decoders`, hold exactly the data
    shapes of `fairness.bundle` (EVENT_DATA, NESTED): the same types, the same fields in each,
    and the same nested objects, each with the same fields and no deeper nesting."""

    if set(event_types) != set(EVENT_DATA):
        return False
    nested: dict[str, type[Any]] = {}
    for type_, cls in event_types.items():
        if _shape(cls) != EVENT_DATA[type_]:
            return False
        hints = typing.get_type_hints(cls)
        for field in dataclasses.fields(cls):
            hint = hints[field.name]
            inner = (typing.get_args(hint) or (None,))[0] if typing.get_origin(hint) else hint
            inner = _optional_dataclass(hint) or inner
            if isinstance(inner, type) and dataclasses.is_dataclass(inner):
                nested[inner.__name__] = inner
    return all(
        name in NESTED
        and tuple(_shape(cls)) == NESTED[name]
        and all(kind is None for kind in _shape(cls).values())
        for name, cls in nested.items()
    )


def load() -> PlayCheck | None:
    """Proof of play on bundle events, or None when the rule engine is not importable."""
    decided, decoders = load_decoded(), load_decoders()
    if decided is None or decoders is None:
        return None
    if not _SHAPES_STRICT:
        # the optional rule engine, which load_decoded found importable
        from casino.engine.events import EVENT_TYPES

        _SHAPES_STRICT.append(shapes_strict(EVENT_TYPES))
    return PlayCheck(decoders, decided, _SHAPES_STRICT[0])


_SHAPES_STRICT: list[bool] = []  # shapes_strict of the engine's events, found on first use
