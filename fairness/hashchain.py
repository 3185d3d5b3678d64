"""The per-stream event hash chain (shared contract with the event store).

Each event's hash is sha256(prev_hash as ASCII + canonical JSON of its body), where the body is
{"stream", "version", "type", "schema_version", "data", "recorded_at"} and the first event of a
stream (version 1) chains from GENESIS. Pure: no Django.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from json.encoder import encode_basestring
from typing import Any

from fairness.canonical import canonical_json, canonical_json_float_free, canonical_text

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
