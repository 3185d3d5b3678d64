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

**The event hash chain** (`event_hash`, shared with the event store): each event's hash is
sha256(prev_hash as ASCII + canonical JSON of its body), where the body is {"stream",
"version", "type", "schema_version", "data", "recorded_at"} and the first event of a stream
(version 1) chains from GENESIS.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from json import encoder as _json_encoder
from json.encoder import encode_basestring
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


# ---- the event hash chain ----

GENESIS = "0" * 64

BODY_KEYS = frozenset({"stream", "version", "type", "schema_version", "data", "recorded_at"})


def event_hash(prev_hash: str, body: Mapping[str, Any]) -> str:
    """Return the hex sha256 of one event chained to the previous event's hash."""
    return hashlib.sha256(prev_hash.encode("ascii") + canonical_json(body)).hexdigest()


def body_text(
    stream: Any, version: Any, type_: Any, schema_version: Any, data: Any, recorded_at: Any
) -> str:
    """canonical_json(event_body(...)) as text, without building the body dict.

    The six keys in sorted order around the canonical JSON of `data`; any value that is not
    a plain str / int where one belongs goes through the generic encoder instead, so the
    result is canonical_json's, byte for byte, whatever the values.
    """
    if (
        type(stream) is str
        and type(type_) is str
        and type(recorded_at) is str
        and type(version) is int
        and type(schema_version) is int
    ):
        return (
            f'{{"data":{canonical_text(data)},"recorded_at":{encode_basestring(recorded_at)},'
            f'"schema_version":{schema_version},"stream":{encode_basestring(stream)},'
            f'"type":{encode_basestring(type_)},"version":{version}}}'
        )
    return canonical_text(
        {
            "stream": stream,
            "version": version,
            "type": type_,
            "schema_version": schema_version,
            "data": data,
            "recorded_at": recorded_at,
        }
    )


def chained_hash(prev_hash: str, text: str) -> str:
    """sha256(ascii(prev_hash) + utf-8(text)) as hex: `event_hash` of a body's canonical text."""
    if not prev_hash.isascii():
        raise ValueError(f"prev_hash {prev_hash[:16]!r}... is not ASCII")
    return hashlib.sha256((prev_hash + text).encode("utf-8")).hexdigest()


def recomputed_hashes(
    events: Sequence[Mapping[str, Any]], *, float_free: bool = False
) -> list[str]:
    """The hash of each event dict's canonical body, chained from GENESIS.

    Event i chains to the hash that event i-1 records (its "hash" string), or to the one
    computed for it where it records none, so one changed event shows up at that event only.
    The same bytes as `stored_event_hash`, in one loop (the verifier's hot path).
    `float_free`: the events hold no float (see `canonical_json_float_free`).
    """
    if float_free:
        return _recomputed_float_free(events)
    out: list[str] = []
    prev = GENESIS
    sha256, text_of, quote = hashlib.sha256, canonical_text, encode_basestring
    for event in events:
        stream, version, type_ = event["stream"], event["version"], event["type"]
        schema_version, data, at = event["schema_version"], event["data"], event["recorded_at"]
        if (
            type(stream) is str
            and type(type_) is str
            and type(at) is str
            and type(version) is int
            and type(schema_version) is int
            and prev.isascii()
        ):
            text = (
                f'{prev}{{"data":{text_of(data)},"recorded_at":{quote(at)},'
                f'"schema_version":{schema_version},"stream":{quote(stream)},'
                f'"type":{quote(type_)},"version":{version}}}'
            )
            computed = sha256(text.encode("utf-8")).hexdigest()
        else:
            computed = stored_event_hash(prev, event)
        out.append(computed)
        recorded = event.get("hash")
        prev = recorded if isinstance(recorded, str) else computed
    return out


def _recomputed_float_free(events: Sequence[Mapping[str, Any]]) -> list[str]:
    out: list[str] = []
    prev = GENESIS
    sha256, encode = hashlib.sha256, canonical_json_float_free
    for event in events:
        body = {
            "data": event["data"],
            "recorded_at": event["recorded_at"],
            "schema_version": event["schema_version"],
            "stream": event["stream"],
            "type": event["type"],
            "version": event["version"],
        }
        computed = sha256(prev.encode("ascii") + encode(body)).hexdigest()
        out.append(computed)
        recorded = event.get("hash")
        prev = recorded if isinstance(recorded, str) else computed
    return out


def stored_event_hash(prev_hash: str, event: Mapping[str, Any]) -> str:
    """`event_hash` of an event dict that holds the body's six keys (and maybe others)."""
    return chained_hash(
        prev_hash,
        body_text(
            event["stream"], event["version"], event["type"], event["schema_version"],
            event["data"], event["recorded_at"],
        ),
    )  # fmt: skip


def event_body(
    *,
    stream: str,
    version: int,
    type: str,
    schema_version: int,
    data: dict[str, Any],
    recorded_at: str,
) -> dict[str, Any]:
    """Build the body dict that `event_hash` hashes (recorded_at: YYYY-MM-DDTHH:MM:SS.ffffffZ)."""
    return {
        "stream": stream,
        "version": version,
        "type": type,
        "schema_version": schema_version,
        "data": data,
        "recorded_at": recorded_at,
    }


def chain_hashes(bodies: Iterable[Mapping[str, Any]], prev_hash: str = GENESIS) -> list[str]:
    """Return the hash of every body in order, chaining from `prev_hash` (GENESIS by default)."""
    hashes: list[str] = []
    for body in bodies:
        prev_hash = event_hash(prev_hash, body)
        hashes.append(prev_hash)
    return hashes
