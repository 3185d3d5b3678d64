"""check_json_native: what event data may hold (no database)."""

from __future__ import annotations

import enum
from collections import OrderedDict
from typing import Any

import pytest

from casino.eventstore.store import check_json_native


class Level(enum.IntEnum):
    HIGH = 2


class Name(str):
    pass


@pytest.mark.parametrize(
    "data",
    [
        {"a": [1, True, None, "x", {"b": ["é", -(2**70)]}]},
        OrderedDict(a=1, b=[Level.HIGH, Name("n")]),
        {Name("key"): {"é": "☃"}},
        {},
        [],
    ],
)
def test_json_native_values_pass(data: Any) -> None:
    check_json_native(data, "T")


@pytest.mark.parametrize(
    ("data", "error", "words"),
    [
        ({"a": [1, {"b": 1.5}]}, TypeError, "float is not allowed"),
        ([{"b": (1, 2)}], TypeError, "tuple is not allowed"),
        ({"a": {2: "x"}}, TypeError, "keys must be strings"),
        ({"a\x00": 1}, ValueError, "NUL"),
        ({"a": ["ok", "b\x00"]}, ValueError, "NUL"),
        ({"\udc00": 1}, ValueError, "UTF-8"),
        (OrderedDict(a=["\ud800"]), ValueError, "UTF-8"),
        ({"a": b"bytes"}, TypeError, "bytes is not allowed"),
    ],
)
def test_anything_else_is_refused_with_the_event_type(data: Any, error: type, words: str) -> None:
    with pytest.raises(error, match=words) as caught:
        check_json_native(data, "CardsDealt")
    assert str(caught.value).startswith("CardsDealt: ")
