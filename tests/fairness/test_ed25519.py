"""libsodium's Ed25519 acceptance (fairness.ed25519.accepts) and the verifier's verdicts built on
it, always `cryptography`'s: RFC 8032's vectors, changed and forged signatures, wrong keys,
malformed lengths and types, and a key libsodium refuses where `cryptography` decides."""

from __future__ import annotations

import hashlib
import json

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
OTHER_KEY = private_key_from_hex(hashlib.sha256(b"another ed25519 key").hexdigest())
RECEIPT = {"round_id": "r1", "nonce": 3, "é": "ü"}
# The identity point as the public key, and R = identity, S = 0: OpenSSL's equation holds
# (it does not refuse a small order key); libsodium refuses the key.
SMALL_ORDER_KEY = bytes([1]) + bytes(31)
SMALL_ORDER_SIGNATURE = bytes([1]) + bytes(31) + bytes(32)

# RFC 8032 section 7.1: (secret key, public key, message, signature), hex.
RFC8032 = [
    (
        "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
        "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
        "",
        "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e3970"
        "1cf9b46bd25bf5f0595bbe24655141438e7a100b",
    ),
    (
        "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
        "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
        "72",
        "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613"
        "d0f11d8c387b2eaeb4302aeeb00d291612bb0c00",
    ),
    (
        "c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
        "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025",
        "af82",
        "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760"
        "984dc6594a7c15e9716ed28dc027beceea1ec40a",
    ),
    (  # TEST SHA(abc): the message is SHA-512("abc")
        "833fe62409237b9d62ec77587520911e9a759cec1d19755b7da901b96dca3d42",
        "ec172b93ad5e563bf4932c70e1245034c35467ef2efd4d64ebf819683467e2bf",
        hashlib.sha512(b"abc").hexdigest(),
        "dc2a4459e7369633a52b1bf277839a00201009a3efbf3ecb69bea2186c26b58909351fc9ac90b3ecfdfbc7c6"
        "6431e0303dca179c138ac17ad9bef1177331a704",
    ),
]


def _cryptography_says(signature: bytes, message: bytes, raw: bytes) -> bool:
    try:
        Ed25519PublicKey.from_public_bytes(raw).verify(signature, message)
    except Exception:
        return False
    return True


@pytest.mark.parametrize(("secret", "public", "message", "signature"), RFC8032)
def test_rfc8032_vectors_are_accepted_and_nothing_near_them(
    secret: str, public: str, message: str, signature: str
) -> None:
    raw, data, signed = bytes.fromhex(public), bytes.fromhex(message), bytes.fromhex(signature)
    assert public_key_bytes(private_key_from_hex(secret)) == raw
    assert ed25519.accepts(signed, data, raw)
    assert verify_signature(data, signature, public)
    assert not ed25519.accepts(signed, data + b"x", raw)
    assert not ed25519.accepts(signed[:-1] + bytes([signed[-1] ^ 0x40]), data, raw)
    assert not ed25519.accepts(signed, data, public_key_bytes(OTHER_KEY))
    assert not verify_signature(data + b"x", signature, public)


def test_accepts_a_valid_signature_and_refuses_a_changed_one() -> None:
    raw, message = public_key_bytes(KEY), canonical_json(RECEIPT)
    signature = bytes.fromhex(sign_receipt(RECEIPT, KEY))
    assert ed25519.accepts(signature, message, raw)
    assert not ed25519.accepts(signature, message + b" ", raw)
    assert not ed25519.accepts(signature[:-1] + bytes([signature[-1] ^ 1]), message, raw)
    assert not ed25519.accepts(signature, message, public_key_bytes(OTHER_KEY))


@pytest.mark.parametrize(
    ("cut_signature", "cut_key"), [(63, 32), (65, 32), (0, 32), (64, 31), (64, 33), (64, 0)]
)
def test_malformed_lengths_are_refused(cut_signature: int, cut_key: int) -> None:
    raw, message = public_key_bytes(KEY), canonical_json(RECEIPT)
    signature = bytes.fromhex(sign_receipt(RECEIPT, KEY))
    padded_signature, padded_key = (signature + b"\0")[:cut_signature], (raw + b"\0")[:cut_key]
    assert not ed25519.accepts(padded_signature, message, padded_key)


def test_other_types_than_bytes_are_refused() -> None:
    raw, message = public_key_bytes(KEY), canonical_json(RECEIPT)
    signature = bytes.fromhex(sign_receipt(RECEIPT, KEY))
    assert not ed25519.accepts(signature, bytearray(message), raw)  # type: ignore[arg-type]
    assert not ed25519.accepts(bytearray(signature), message, raw)  # type: ignore[arg-type]
    assert not ed25519.accepts(signature, message, memoryview(raw))  # type: ignore[arg-type]


def test_where_libsodium_refuses_cryptography_decides() -> None:
    message = b"anything"
    assert not ed25519.accepts(SMALL_ORDER_SIGNATURE, message, SMALL_ORDER_KEY)
    expected = _cryptography_says(SMALL_ORDER_SIGNATURE, message, SMALL_ORDER_KEY)
    assert expected  # OpenSSL takes it: the verdict below is cryptography's
    signature_hex = SMALL_ORDER_SIGNATURE.hex()
    assert verify_signature(message, signature_hex, SMALL_ORDER_KEY.hex()) is expected
    key = Ed25519PublicKey.from_public_bytes(SMALL_ORDER_KEY)
    assert verify_signature(message, signature_hex, key, raw_key=SMALL_ORDER_KEY) is expected


def test_receipt_verdicts() -> None:
    public = KEY.public_key()
    raw = public_key_bytes(KEY)
    signature = sign_receipt(RECEIPT, KEY)
    assert verify_receipt(RECEIPT, signature, public)
    assert verify_receipt(RECEIPT, signature, public, raw_key=raw)
    assert verify_receipt(RECEIPT, signature, raw.hex())
    assert not verify_receipt(RECEIPT, signature, OTHER_KEY.public_key())
    assert not verify_receipt(RECEIPT, signature, public_key_bytes(OTHER_KEY).hex())
    assert not verify_receipt({**RECEIPT, "nonce": 4}, signature, public, raw_key=raw)
    assert not verify_receipt(RECEIPT, signature[:-2] + "00", public, raw_key=raw)
    assert not verify_receipt(RECEIPT, signature[:-2], public, raw_key=raw)
    assert not verify_receipt(RECEIPT, "zz", public, raw_key=raw)
    assert not verify_receipt(RECEIPT, signature, raw.hex()[:-2])


def test_a_forged_round_signature_is_reported() -> None:
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
