"""fairness.ed25519.signer gives `cryptography`'s very signature (RFC 8032 signatures are
deterministic), so the server's receipts are the bytes `cryptography` signs."""

from __future__ import annotations

import hashlib

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given, settings
from hypothesis import strategies as st

from fairness import ed25519
from tests.fairness.test_ed25519 import RFC8032


@settings(max_examples=200, deadline=None)
@given(seed=st.binary(min_size=32, max_size=32), message=st.binary(max_size=4096))
def test_signs_exactly_as_cryptography(seed: bytes, message: bytes) -> None:
    signs = ed25519.signer(seed)
    assert signs is not None
    assert signs(message) == Ed25519PrivateKey.from_private_bytes(seed).sign(message)


@pytest.mark.parametrize(("secret", "public", "message", "signature"), RFC8032)
def test_signs_the_rfc8032_vectors(secret: str, public: str, message: str, signature: str) -> None:
    signs = ed25519.signer(bytes.fromhex(secret))
    assert signs is not None
    assert signs(bytes.fromhex(message)).hex() == signature
    assert ed25519.accepts(bytes.fromhex(signature), bytes.fromhex(message), bytes.fromhex(public))


def test_no_signer_for_a_malformed_seed() -> None:
    assert ed25519.signer(b"short") is None
    assert ed25519.signer(b"") is None
    assert ed25519.signer(bytes(33)) is None
    assert ed25519.signer(hashlib.sha256(b"x").hexdigest().encode()) is None  # 64, not 32
    assert ed25519.signer(bytearray(32)) is None  # type: ignore[arg-type]


@pytest.mark.django_db
def test_the_services_receipt_signature_is_cryptographys() -> None:
    from django.conf import settings as django_settings

    from fairness.canonical import canonical_json
    from fairness.receipt import private_key_from_hex
    from fairness.services import receipt_sign

    receipt = {"round_id": "r1", "nonce": 3, "é": "ü"}
    signature, _ = receipt_sign(receipt=receipt)
    key = private_key_from_hex(django_settings.RECEIPT_SIGNING_KEY)
    assert signature == key.sign(canonical_json(receipt)).hex()
