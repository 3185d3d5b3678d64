"""The event store hashes event data with orjson (`canonical_text_float_free`), which writes the
same bytes as the canonical `json.dumps` for every value but floats. The rule engine's events
are where a round's data comes from: none of their fields, at any depth, can hold a float."""

from __future__ import annotations

import dataclasses
import typing

from casino.engine import events


def _field_types(cls: type, seen: set[type]) -> list[str]:
    if cls in seen:
        return []
    seen.add(cls)
    found = []
    for name, hint in typing.get_type_hints(cls).items():
        if name == "type" or typing.get_origin(hint) is typing.ClassVar:
            continue
        found.append(f"{cls.__name__}.{name}: {hint!r}")
        for inner in (hint, *typing.get_args(hint)):
            if dataclasses.is_dataclass(inner) and isinstance(inner, type):
                found += _field_types(inner, seen)
    return found


def test_no_engine_event_field_holds_a_float() -> None:
    fields = [f for cls in events.EVENT_TYPES.values() for f in _field_types(cls, set())]
    assert len(fields) > 60  # every event type and the records nested in them
    assert [f for f in fields if "float" in f] == []
    assert any("HandResult" in f for f in fields)  # nested records are walked too
