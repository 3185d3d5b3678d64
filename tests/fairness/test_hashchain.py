"""The canonical JSON and event hash-chain contract shared with the event store."""

from __future__ import annotations

import hashlib

from fairness.canonical import GENESIS, canonical_json, chain_hashes, event_body, event_hash


def test_canonical_json_sorts_keys_without_spaces_and_keeps_utf8() -> None:
    assert canonical_json({"b": 1, "a": [1, "é"], "c": {"z": True, "y": None}}) == (
        '{"a":[1,"é"],"b":1,"c":{"y":null,"z":true}}'.encode()
    )


def test_event_hash_matches_the_documented_bytes() -> None:
    body = event_body(
        stream="round-1",
        version=1,
        type="RoundOpened",
        schema_version=1,
        data={"nonce": 1},
        recorded_at="2026-01-01T00:00:00.000000Z",
    )
    expected_bytes = (
        b"0" * 64 + b'{"data":{"nonce":1},"recorded_at":"2026-01-01T00:00:00.000000Z",'
        b'"schema_version":1,"stream":"round-1","type":"RoundOpened","version":1}'
    )
    assert event_hash(GENESIS, body) == hashlib.sha256(expected_bytes).hexdigest()
    # Pinned so that the Python and any other implementation agree on one known value.
    assert event_hash(GENESIS, body) == (
        "aec8e653a15fbd71de935dfd4f273c0a3d191506f1961fb342b3390bdf95ce22"
    )


def test_chain_hashes_chain_each_event_to_the_previous() -> None:
    bodies = [
        event_body(
            stream="s",
            version=v,
            type="T",
            schema_version=1,
            data={"v": v},
            recorded_at="2026-01-01T00:00:00.000000Z",
        )
        for v in (1, 2, 3)
    ]
    hashes = chain_hashes(bodies)
    assert hashes[0] == event_hash(GENESIS, bodies[0])
    assert hashes[2] == event_hash(hashes[1], bodies[2])
    changed = [*bodies[:1], {**bodies[1], "data": {"v": 99}}, bodies[2]]
    assert chain_hashes(changed)[2] != hashes[2]
