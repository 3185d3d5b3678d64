"""The libsodium shortcut to a valid Ed25519 signature (fairness.ed25519): every verdict stays
`cryptography`'s, with libsodium, without it, and where the two disagree."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from fairness import ed25519
from fairness.canonical import canonical_json
from fairness.checks import KeyRing
from fairness.receipt import (
    private_key_from_hex,
    public_key_bytes,
    sign_receipt,
    verify_receipt,
    verify_signature,
)
from fairness.sample import sample_bundle
from fairness.verify import verify_round

KEY = private_key_from_hex(hashlib.sha256(b"ed25519 test key").hexdigest())
RECEIPT = {"round_id": "r1", "nonce": 3, "é": "ü"}
# The identity point as the public key, and R = identity, S = 0: OpenSSL's equation holds
# (it does not refuse a small order key), libsodium refuses the key.
SMALL_ORDER_KEY = bytes([1]) + bytes(31)
SMALL_ORDER_SIGNATURE = bytes([1]) + bytes(31) + bytes(32)

needs_libsodium = pytest.mark.skipif(ed25519.accepts is None, reason="no system libsodium")


def _cryptography_says(signature: bytes, message: bytes, raw: bytes) -> bool:
    try:
        Ed25519PublicKey.from_public_bytes(raw).verify(signature, message)
    except Exception:
        return False
    return True


@needs_libsodium
def test_libsodium_accepts_a_valid_signature_and_refuses_a_changed_one() -> None:
    accepts = ed25519.accepts
    assert accepts is not None
    raw, message = public_key_bytes(KEY), canonical_json(RECEIPT)
    signature = bytes.fromhex(sign_receipt(RECEIPT, KEY))
    assert accepts(signature, message, raw)
    assert not accepts(signature, message + b" ", raw)
    assert not accepts(signature[:-1] + bytes([signature[-1] ^ 1]), message, raw)
    assert not accepts(signature[:63], message, raw)  # wrong lengths never reach the C call
    assert not accepts(signature, message, raw[:31])
    assert not accepts(signature, bytearray(message), raw)  # type: ignore[arg-type]


@needs_libsodium
def test_where_libsodium_refuses_cryptography_decides() -> None:
    accepts = ed25519.accepts
    assert accepts is not None
    message = b"anything"
    assert not accepts(SMALL_ORDER_SIGNATURE, message, SMALL_ORDER_KEY)
    expected = _cryptography_says(SMALL_ORDER_SIGNATURE, message, SMALL_ORDER_KEY)
    assert expected  # OpenSSL takes it: the verdict below is cryptography's, not libsodium's
    signature_hex = SMALL_ORDER_SIGNATURE.hex()
    assert verify_signature(message, signature_hex, SMALL_ORDER_KEY.hex()) is expected
    key = Ed25519PublicKey.from_public_bytes(SMALL_ORDER_KEY)
    assert verify_signature(message, signature_hex, key, raw_key=SMALL_ORDER_KEY) is expected


@pytest.mark.parametrize("with_libsodium", [True, False])
def test_verdicts_are_the_same_with_and_without_libsodium(
    monkeypatch: pytest.MonkeyPatch, with_libsodium: bool
) -> None:
    if not with_libsodium:
        monkeypatch.setattr(ed25519, "accepts", None)
    public = KEY.public_key()
    raw = public_key_bytes(KEY)
    signature = sign_receipt(RECEIPT, KEY)
    assert verify_receipt(RECEIPT, signature, public)
    assert verify_receipt(RECEIPT, signature, public, raw_key=raw)
    assert verify_receipt(RECEIPT, signature, raw.hex())
    assert not verify_receipt({**RECEIPT, "nonce": 4}, signature, public, raw_key=raw)
    assert not verify_receipt(RECEIPT, signature[:-2] + "00", public, raw_key=raw)
    assert not verify_receipt(RECEIPT, "zz", public, raw_key=raw)
    message = b"anything"
    assert verify_signature(
        message, SMALL_ORDER_SIGNATURE.hex(), SMALL_ORDER_KEY.hex()
    ) is _cryptography_says(SMALL_ORDER_SIGNATURE, message, SMALL_ORDER_KEY)


@pytest.mark.parametrize("with_libsodium", [True, False])
def test_a_round_reports_the_same_with_and_without_libsodium(
    monkeypatch: pytest.MonkeyPatch, with_libsodium: bool
) -> None:
    if not with_libsodium:
        monkeypatch.setattr(ed25519, "accepts", None)
    seed = hashlib.sha256(b"seed").hexdigest()
    line = sample_bundle(
        round_id="r1", server_seed=seed, client_seeds=["alice"], nonce=1, private_key=KEY
    )
    assert verify_round(json.loads(json.dumps(line)), KeyRing()).ok
    forged = json.loads(json.dumps(line))
    tail = "00" if forged["signature"][-2:] != "00" else "11"
    forged["signature"] = forged["signature"][:-2] + tail
    assert verify_round(forged, KeyRing()).failures == [
        f"signature: not a valid Ed25519 signature of this receipt by key {line['key_id']}"
    ]


def test_the_environment_switch_turns_libsodium_off() -> None:
    root = Path(__file__).resolve().parents[2]
    code = "from fairness import ed25519; print(ed25519.accepts is None)"
    env = {**os.environ, "FAIRNESS_NO_LIBSODIUM": "1"}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "True"
