"""Canonical JSON: the exact bytes that receipts are signed over and events are hashed over.

Sorted keys, no spaces, UTF-8 (non-ASCII kept as is). Pure: no Django.

`canonical_text` is `json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)`
with the standard library's C encoder built once instead of per call (json.dumps builds a
JSONEncoder and its C encoder on every call with these options, most of the cost for the small
objects of a round). Same output, byte for byte (tests/fairness/test_canonical.py).

`canonical_json_float_free` is for values known to hold no float (a bundle line parsed by
`fairness.bundle` refuses floats): there orjson's sorted compact output (`orjson.dumps` with
OPT_SORT_KEYS) is the same bytes, about ten times faster; whatever orjson refuses (an int beyond
64 bits, a lone surrogate, a key that is not a string) goes through `canonical_json`. Floats
are the one JSON value the two write differently (`1e+16` against `1e16`, `NaN` against
`null`), hence the separate name. Without orjson installed it is `canonical_json`.
"""

from __future__ import annotations

import json
from json import encoder as _json_encoder
from typing import Any

try:
    import orjson as _orjson
except ImportError:  # optional: the verifier runs on the standard library alone
    _orjson = None  # type: ignore[assignment]


def _not_json(obj: Any) -> Any:
    raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")


# The arguments JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False).iterencode
# passes to the C encoder. markers=None skips the circular-reference check: canonical JSON is
# only ever taken of JSON-native data (a cycle ends in RecursionError instead of ValueError).
_MAKE = getattr(_json_encoder, "c_make_encoder", None)  # None without the C accelerator
_C_ENCODE = (
    _MAKE(None, _not_json, _json_encoder.encode_basestring, None, ":", ",", True, False, True)
    if _MAKE is not None
    else None
)


def _dumps(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical_text(obj: Any) -> str:
    """The canonical JSON of a JSON-native object, as text."""
    if _C_ENCODE is None:  # an interpreter without the C accelerator
        return _dumps(obj)
    return "".join(_C_ENCODE(obj, 0))


def canonical_json(obj: Any) -> bytes:
    """Return the canonical UTF-8 JSON bytes of a JSON-native object."""
    return canonical_text(obj).encode("utf-8")


_SORT = _orjson.OPT_SORT_KEYS if _orjson is not None else 0


def canonical_json_float_free(obj: Any) -> bytes:
    """canonical_json(obj) for an object that holds no float (see the module doc)."""
    if _orjson is not None:
        try:
            return _orjson.dumps(obj, option=_SORT)
        except TypeError:  # orjson.JSONEncodeError: past 64-bit ints, surrogates, odd keys
            pass
    return canonical_json(obj)


def canonical_text_float_free(obj: Any) -> str:
    """canonical_text(obj) for an object that holds no float (see the module doc)."""
    if _orjson is not None:
        try:
            return _orjson.dumps(obj, option=_SORT).decode("utf-8")
        except TypeError:  # as in canonical_json_float_free
            pass
    return canonical_text(obj)


def first_difference(
    first: Any, second: Any, path: str = "", names: tuple[str, str] = ("recorded", "derived")
) -> str:
    """Where two JSON values first differ, in words: "hands[0].gross_return: recorded 5,
    derived 3" (`names` says what each value is; `path` where they sit)."""
    if isinstance(first, dict) and isinstance(second, dict):
        for key in sorted(set(first) | set(second)):
            if first.get(key) != second.get(key):
                return first_difference(first.get(key), second.get(key), f"{path}.{key}", names)
    if isinstance(first, list) and isinstance(second, list) and len(first) == len(second):
        for index, (a, b) in enumerate(zip(first, second, strict=True)):
            if a != b:
                return first_difference(a, b, f"{path}[{index}]", names)
    return f"{path.lstrip('.') or 'value'}: {names[0]} {first!r}, {names[1]} {second!r}"
