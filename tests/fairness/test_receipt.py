"""Receipts: canonical bytes, Ed25519 signatures, key ids."""

from __future__ import annotations

import hashlib

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from fairness.canonical import canonical_json
from fairness.receipt import (
    key_id,
    private_key_from_hex,
    public_key_bytes,
    sign_receipt,
    verify_receipt,
)

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
