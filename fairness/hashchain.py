"""The per-stream event hash chain (shared contract with the event store).

Each event's hash is sha256(prev_hash as ASCII + canonical JSON of its body), where the body is
{"stream", "version", "type", "schema_version", "data", "recorded_at"} and the first event of a
stream (version 1) chains from GENESIS. Pure: no Django.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

from fairness.canonical import canonical_json

GENESIS = "0" * 64

BODY_KEYS = frozenset({"stream", "version", "type", "schema_version", "data", "recorded_at"})


def event_hash(prev_hash: str, body: Mapping[str, Any]) -> str:
    """Return the hex sha256 of one event chained to the previous event's hash."""
    return hashlib.sha256(prev_hash.encode("ascii") + canonical_json(body)).hexdigest()


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
