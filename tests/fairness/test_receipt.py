"""Receipts: canonical bytes, Ed25519 signatures, key ids; fairness-v1 and fairness-v2."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from casino.engine import commands as c
from casino.engine.decider import step
from casino.engine.events import Participant, RoundOptions
from fairness.bundle import line_format
from fairness.canonical import canonical_json, canonical_text
from fairness.chain import hash_seed
from fairness.receipt import (
    BEACON_FIELDS,
    RECEIPT_KEYS,
    RECEIPT_KEYS_BY_VERSION,
    RECEIPT_KEYS_V2,
    RECEIPT_VERSION,
    RECEIPT_VERSION_V2,
    SPEC,
    SPEC_V2,
    key_id,
    private_key_from_hex,
    public_key_bytes,
    receipt_from_events,
    sign_receipt,
    verify_receipt,
)
from fairness.replay import load
from fairness.sample import (
    NOW_MS,
    STAKE,
    beacon_round_line,
    beacon_spec,
    play_out,
    sample_bundle,
    timed_line,
)
from fairness.shoe import FairShoe
from fairness.verify import KeyRing, verify_lines

PRIVATE_HEX = hashlib.sha256(b"signing key").hexdigest()
RECEIPT = {"round_id": "r1", "nonce": 3, "cards": [{"position": 0, "card": "AS"}], "é": "ü"}


def test_signature_covers_the_canonical_json() -> None:
    key = private_key_from_hex(PRIVATE_HEX)
    signature = sign_receipt(RECEIPT, key)
    assert len(signature) == 128
    public = key.public_key()
    public.verify(bytes.fromhex(signature), canonical_json(RECEIPT))  # raises if not
    assert verify_receipt(dict(reversed(list(RECEIPT.items()))), signature, public)
    assert verify_receipt(RECEIPT, signature, public_key_bytes(key).hex())


def test_any_change_breaks_the_signature() -> None:
    key = private_key_from_hex(PRIVATE_HEX)
    signature = sign_receipt(RECEIPT, key)
    public = public_key_bytes(key).hex()
    assert not verify_receipt({**RECEIPT, "nonce": 4}, signature, public)
    flipped = signature[:-1] + ("0" if signature[-1] != "0" else "1")
    assert not verify_receipt(RECEIPT, flipped, public)
    assert not verify_receipt(RECEIPT, "zz", public)
    assert not verify_receipt(RECEIPT, signature[:64], public)
    other = public_key_bytes(Ed25519PrivateKey.generate()).hex()
    assert not verify_receipt(RECEIPT, signature, other)
    assert not verify_receipt(RECEIPT, signature, "abcd")


def test_key_id_is_the_first_16_hex_of_the_public_key_hash() -> None:
    raw = public_key_bytes(private_key_from_hex(PRIVATE_HEX))
    assert key_id(raw) == hashlib.sha256(raw).hexdigest()[:16]
    assert len(key_id(raw)) == 16


# --- versions: fairness-v1 byte for byte, fairness-v2 at a beacon table ----------------------


def _v1_receipt(stream: str, events: list[dict[str, Any]]) -> dict[str, Any]:
    """fairness.receipt.receipt_from_events as it was before fairness-v2 (its logic, copied)."""
    by_type: dict[str, dict[str, Any]] = {}
    for event in events:
        by_type.setdefault(event["type"], event["data"])
    opened = by_type["RoundOpened"]
    if "RoundVoided" in by_type:
        outcome, end = "voided", by_type["RoundVoided"]
        payouts = {k: end[k] for k in ("reason", "refunds", "reversed_payouts", "reversed_fee")}
    else:
        outcome, end = "settled", by_type["RoundSettled"]
        payouts = {k: end[k] for k in ("hands", "insurance", "fee", "dealer_total")}
    return {
        "spec": "fairness-v1", "receipt_version": 1, "round_id": opened["round_id"],
        "table_id": opened["table_id"], "ruleset": opened["ruleset"],
        "ruleset_hash": opened["ruleset_hash"], "chain_id": opened["chain_id"],
        "nonce": opened["nonce"], "commitment": opened["commitment"],
        "server_seed": by_type["ServerSeedRevealed"]["server_seed"],
        "client_material": by_type["BettingClosed"]["client_material"]
        if "BettingClosed" in by_type
        else "|".join(p["client_seed"] for p in opened["participants"]),
        "participants": [
            {"player_id": p["player_id"], "client_seed": p["client_seed"]}
            for p in opened["participants"]
        ],
        "cards": [
            {"position": e["data"]["position"], "card": e["data"]["card"]}
            for e in events
            if e["type"].endswith("CardDealt")
        ],
        "stream": stream, "final_event_version": events[-1]["version"],
        "final_event_hash": events[-1]["hash"], "outcome": outcome, "payouts": payouts,
    }  # fmt: skip


@pytest.mark.parametrize(
    ("seeds", "ruleset", "void"),
    [
        (["alice"], "classic", None),
        (["alice"], "atlantic_city", None),
        (["a", "b", "c"], "duel_classic", None),
        (["a", "b"], "duel", None),
        (["a", "b"], "duel_classic", "misdeal"),
        (["a"], "classic", "misdeal"),
    ],
)
def test_rounds_without_a_beacon_keep_their_fairness_v1_receipt_byte_for_byte(
    seeds: list[str], ruleset: str, void: str | None
) -> None:
    line = sample_bundle(
        round_id="r", server_seed=hashlib.sha256(b"v1").hexdigest(), client_seeds=seeds,
        nonce=3, private_key=private_key_from_hex(PRIVATE_HEX), ruleset=ruleset,
        void_reason=void,
    )  # fmt: skip
    stream, events = line["receipt"]["stream"], line["events"]
    receipt = receipt_from_events(stream, events)
    assert canonical_json(receipt) == canonical_json(_v1_receipt(stream, events))
    assert set(receipt) == RECEIPT_KEYS == RECEIPT_KEYS_BY_VERSION[1]
    assert (receipt["spec"], receipt["receipt_version"]) == (SPEC, RECEIPT_VERSION) == (
        "fairness-v1", 1,
    )  # fmt: skip
    assert line["format"] == "fairness-v1-bundle" == line_format(receipt)


@pytest.mark.parametrize("void", [False, True])
def test_a_beacon_rounds_receipt_is_fairness_v2(void: bool) -> None:
    line = beacon_round_line("duel_classic", seed=4, void=void)
    stream, events = line["receipt"]["stream"], line["events"]
    receipt = receipt_from_events(stream, events)
    assert receipt == line["receipt"]
    assert set(receipt) == RECEIPT_KEYS_V2 == RECEIPT_KEYS_BY_VERSION[2]
    assert (receipt["spec"], receipt["receipt_version"]) == (SPEC_V2, RECEIPT_VERSION_V2) == (
        "fairness-v2", 2,
    )  # fmt: skip
    assert tuple(receipt["beacon"]) == BEACON_FIELDS
    by_type = {e["type"]: e["data"] for e in events}
    spec = by_type["RoundOpened"]["beacon"]
    awaited = by_type["BeaconAwaited"]
    recorded = by_type.get("BeaconRecorded")
    assert receipt["beacon"] == {
        "name": spec["name"], "chain_hash": spec["chain_hash"], "public_key": spec["public_key"],
        "round": awaited["round"], "round_time": awaited["round_time"],
        "signature": None if void else recorded["signature"],  # type: ignore[index]
        "randomness": None if void else recorded["randomness"],  # type: ignore[index]
    }  # fmt: skip
    locked = by_type["BettingClosed"]["client_material"]
    assert receipt["client_material"] == (locked if void else recorded["client_material"])  # type: ignore[index]
    assert line_format(receipt) == "fairness-v2-bundle"


def _beacon_table_round(seats: int, *, void_in_betting: bool) -> dict[str, Any]:
    """A duel_classic round at a beacon table that awaits no beacon round: one seat (it deals
    at once), or voided by staff while betting is open."""
    seeds = [f"s{i}" for i in range(seats)]
    server_seed = hashlib.sha256(b"beacon table").hexdigest()
    shoe = FairShoe(server_seed, "|".join(seeds), 2)
    opening = c.OpenRound(
        "bt", "t", "duel_classic", "ch", 2, hash_seed(server_seed),
        tuple(Participant(f"p{i + 1}", s) for i, s in enumerate(seeds)),
        RoundOptions(1_000_000, 100_000_000), beacon_spec(),
    )  # fmt: skip
    events, state = step(None, opening, NOW_MS, shoe)
    if void_in_betting:
        if seats > 1:  # one bet of several: betting stays open
            more, state = step(state, c.PlaceBet("p1", (STAKE,)), NOW_MS, shoe)
            events += more
        more, state = step(state, c.VoidRound("table closed", "staff"), NOW_MS, shoe)
        events += more
    else:
        more, state = step(state, c.PlaceBet("p1", (STAKE,)), NOW_MS, shoe)
        events += more
    played = play_out(events, state, shoe, server_seed)
    return timed_line(played, [NOW_MS] * len(played))


@pytest.mark.parametrize(("seats", "void"), [(1, False), (1, True), (3, True)])
def test_a_beacon_tables_round_without_a_beacon_round_names_none(seats: int, void: bool) -> None:
    line = _beacon_table_round(seats, void_in_betting=void)
    receipt = line["receipt"]
    types = [e["type"] for e in line["events"]]
    assert "BeaconAwaited" not in types and "BeaconRecorded" not in types
    assert ("BettingClosed" in types) is not void
    assert receipt["spec"] == "fairness-v2" and line["format"] == "fairness-v2-bundle"
    nulls = ("round", "round_time", "signature", "randomness")
    assert {k: receipt["beacon"][k] for k in nulls} == dict.fromkeys(nulls)
    assert receipt["client_material"] == "|".join(f"s{i}" for i in range(seats))
    (found,) = verify_lines([canonical_text(line)], KeyRing(), load())
    assert found.ok and found.replayed, found.failures
    assert found.beacon is not None and "(no round awaited)" in found.beacon
