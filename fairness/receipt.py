"""Round receipts: canonical JSON signed with Ed25519. Pure: no Django.

The signature covers exactly `canonical_json(receipt)`; signatures and keys travel as lowercase
hex; a key id is the first 16 hex characters of sha256(raw 32-byte public key).

Two versions (docs/fairness.md, "Receipt format" and "fairness-v2"): a round whose RoundOpened
names no beacon gets a fairness-v1 receipt (version 1, RECEIPT_KEYS), byte for byte as before;
a round at a beacon table (RoundOpened.beacon) a fairness-v2 one (version 2, RECEIPT_KEYS_V2):
the same keys plus `beacon` (BEACON_FIELDS), and `client_material` the material the shoe used
(BeaconRecorded's, with the beacon's element).
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Mapping
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from fairness import ed25519
from fairness.canonical import canonical_json, canonical_json_float_free

RECEIPT_VERSION = 1
SPEC = "fairness-v1"
RECEIPT_VERSION_V2 = 2
SPEC_V2 = "fairness-v2"
ALGORITHM = "Ed25519"

# What a receipt's "payouts" copies from the round's final RoundSettled / RoundVoided event.
SETTLED_FIELDS = ("hands", "insurance", "fee", "dealer_total")
VOID_FIELDS = ("reason", "refunds", "reversed_payouts", "reversed_fee")

RECEIPT_KEYS = frozenset(
    {
        "spec", "receipt_version", "round_id", "table_id", "ruleset", "ruleset_hash",
        "chain_id", "nonce", "commitment", "server_seed", "client_material", "participants",
        "cards", "stream", "final_event_version", "final_event_hash", "outcome", "payouts",
    }
)  # fmt: skip
# fairness-v2's receipt: the beacon the round's shoe waited for. `round` and `round_time` are
# null when no round was awaited (betting never closed, or closed with one seat), `signature`
# and `randomness` when none was recorded (the round was voided while it waited).
BEACON_FIELDS = (
    "name", "chain_hash", "public_key", "round", "round_time", "signature", "randomness",
)  # fmt: skip
RECEIPT_KEYS_V2 = RECEIPT_KEYS | {"beacon"}
RECEIPT_KEYS_BY_VERSION = {RECEIPT_VERSION: RECEIPT_KEYS, RECEIPT_VERSION_V2: RECEIPT_KEYS_V2}


def build_receipt(
    *,
    round_id: str,
    table_id: str,
    ruleset: str,
    ruleset_hash: str,
    chain_id: str,
    nonce: int,
    commitment: str,
    server_seed: str,
    client_material: str,
    participants: list[dict[str, Any]],
    cards: list[dict[str, Any]],
    stream: str,
    final_event_version: int,
    final_event_hash: str,
    outcome: str,
    payouts: dict[str, Any],
    beacon: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The receipt dict of one finished round (see docs/fairness.md, "Receipt format"):
    fairness-v1, or with `beacon` (BEACON_FIELDS) fairness-v2."""
    receipt = {
        "spec": SPEC if beacon is None else SPEC_V2,
        "receipt_version": RECEIPT_VERSION if beacon is None else RECEIPT_VERSION_V2,
        "round_id": round_id,
        "table_id": table_id,
        "ruleset": ruleset,
        "ruleset_hash": ruleset_hash,
        "chain_id": chain_id,
        "nonce": nonce,
        "commitment": commitment,
        "server_seed": server_seed,
        "client_material": client_material,
        "participants": participants,
        "cards": cards,
        "stream": stream,
        "final_event_version": final_event_version,
        "final_event_hash": final_event_hash,
        "outcome": outcome,
        "payouts": payouts,
    }
    if beacon is not None:
        receipt["beacon"] = beacon
    return receipt


def receipt_beacon(
    spec: Mapping[str, Any], awaited: Mapping[str, Any] | None, recorded: Mapping[str, Any] | None
) -> dict[str, Any]:
    """A fairness-v2 receipt's `beacon`: which beacon (RoundOpened.beacon), the round awaited
    (BeaconAwaited) and, once recorded, its signature and randomness (BeaconRecorded)."""
    return {
        "name": spec["name"],
        "chain_hash": spec["chain_hash"],
        "public_key": spec["public_key"],
        "round": None if awaited is None else awaited["round"],
        "round_time": None if awaited is None else awaited["round_time"],
        "signature": None if recorded is None else recorded["signature"],
        "randomness": None if recorded is None else recorded["randomness"],
    }


def receipt_from_events(stream: str, events: list[dict[str, Any]]) -> dict[str, Any]:
    """The receipt of a finished round, read from its stored events (bundle format)."""
    by_type: dict[str, dict[str, Any]] = {}
    for event in events:
        by_type.setdefault(event["type"], event["data"])
    opened = by_type["RoundOpened"]
    spec = opened.get("beacon")  # only a beacon table's rounds have it (fairness-v2)
    recorded = by_type.get("BeaconRecorded")
    if "RoundVoided" in by_type:
        voided = by_type["RoundVoided"]
        outcome = "voided"
        payouts = {k: voided[k] for k in VOID_FIELDS}
    else:
        settled = by_type["RoundSettled"]
        outcome = "settled"
        payouts = {k: settled[k] for k in SETTLED_FIELDS}
    return build_receipt(
        round_id=opened["round_id"],
        table_id=opened["table_id"],
        ruleset=opened["ruleset"],
        ruleset_hash=opened["ruleset_hash"],
        chain_id=opened["chain_id"],
        nonce=opened["nonce"],
        commitment=opened["commitment"],
        server_seed=by_type["ServerSeedRevealed"]["server_seed"],
        # The shoe's material: with the beacon's element once recorded (fairness-v2); else as
        # betting closed; a round voided before betting closed never locked it: the seeds.
        client_material=recorded["client_material"]
        if recorded is not None
        else by_type["BettingClosed"]["client_material"]
        if "BettingClosed" in by_type
        else "|".join(p["client_seed"] for p in opened["participants"]),
        participants=[
            {"player_id": p["player_id"], "client_seed": p["client_seed"]}
            for p in opened["participants"]
        ],
        cards=[
            {"position": e["data"]["position"], "card": e["data"]["card"]}
            for e in events
            if e["type"].endswith("CardDealt")
        ],
        stream=stream,
        final_event_version=events[-1]["version"],
        final_event_hash=events[-1]["hash"],
        outcome=outcome,
        payouts=copy.deepcopy(payouts),
        beacon=None
        if spec is None
        else receipt_beacon(spec, by_type.get("BeaconAwaited"), recorded),
    )


def private_key_from_hex(private_key_hex: str) -> Ed25519PrivateKey:
    """The Ed25519 private key from its 32 raw bytes as hex (settings.RECEIPT_SIGNING_KEY)."""
    return Ed25519PrivateKey.from_private_bytes(bytes.fromhex(private_key_hex))


def public_key_bytes(private_key: Ed25519PrivateKey) -> bytes:
    """The raw 32-byte public key of a private key."""
    return private_key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


def key_id(public_key: bytes) -> str:
    """First 16 hex characters of sha256(raw public key)."""
    return hashlib.sha256(public_key).hexdigest()[:16]


def sign_receipt(receipt: Mapping[str, Any], private_key: Ed25519PrivateKey) -> str:
    """The Ed25519 signature of the receipt's canonical JSON, as 128 hex characters."""
    return private_key.sign(canonical_json(receipt)).hex()


def load_public_key(public_key_hex: str) -> Ed25519PublicKey:
    """An Ed25519 public key from its 32 raw bytes as hex; ValueError if malformed."""
    raw = bytes.fromhex(public_key_hex)
    if len(raw) != 32:
        raise ValueError("an Ed25519 public key is 32 bytes")
    return Ed25519PublicKey.from_public_bytes(raw)


def verify_signature(
    message: bytes,
    signature_hex: str,
    public_key: Ed25519PublicKey | str,
    *,
    raw_key: bytes | None = None,
) -> bool:
    """Whether the signature is the key's valid Ed25519 signature of exactly these bytes.

    `raw_key`: the key's 32 raw bytes when the caller has them (`KeyRing` keeps them). A
    signature libsodium accepts is valid (`fairness.ed25519`: libsodium accepts a subset of
    what `cryptography` does, and is the cheaper check); any other is `cryptography`'s
    verdict.
    """
    try:
        key = load_public_key(public_key) if isinstance(public_key, str) else public_key
        signature = bytes.fromhex(signature_hex)
        if len(signature) != 64:
            return False
        if raw_key is None:
            raw_key = key.public_bytes_raw()
        if ed25519.accepts(signature, message, raw_key):
            return True
        key.verify(signature, message)
    except (InvalidSignature, ValueError, TypeError):
        return False
    return True


def verify_receipt(
    receipt: Mapping[str, Any],
    signature_hex: str,
    public_key: Ed25519PublicKey | str,
    *,
    float_free: bool = False,
    raw_key: bytes | None = None,
) -> bool:
    """Whether the signature is the key's valid signature on the receipt's canonical JSON.

    `float_free`: the receipt holds no float (see `canonical_json_float_free`); `raw_key`: as
    in `verify_signature`.
    """
    message = canonical_json_float_free(receipt) if float_free else canonical_json(receipt)
    return verify_signature(message, signature_hex, public_key, raw_key=raw_key)
