"""Ed25519 through libsodium, by PyNaCl: the verifier's acceptance test and the server's receipt
signatures. Pure.

`accepts(signature, message, public_key)` (all raw bytes) is True only when libsodium accepts
the signature. It is a shortcut to "valid", never to "invalid":
`fairness.receipt.verify_signature` asks `cryptography` whenever libsodium says anything else,
so every verdict is `cryptography`'s. The shortcut is there because libsodium's verification
is the cheaper of the two, and the verifier pays one for every round it checks
(docs/decisions/ed25519.md).

Why an acceptance by libsodium is one by `cryptography`: both check the same cofactorless
equation, encode([S]B - [k]A) == R with k = SHA-512(R || A || M) mod L, on the same bytes,
and both refuse a non-canonical S. libsodium refuses more besides (a non-canonical or small
order A, a small order R); for a canonical A both decode the same point. So libsodium accepts
a subset of what OpenSSL accepts, and for a tampered or forged signature the verdict (and the
verifier's message) comes from `cryptography`.

`signer(seed)` signs with libsodium: Ed25519 signatures are deterministic (RFC 8032), so its
signatures are `cryptography`'s own bytes (the server's receipts).

PyNaCl's wheels carry their own libsodium: no system library is needed.
"""

from __future__ import annotations

from collections.abc import Callable

from nacl.bindings import crypto_sign, crypto_sign_open, crypto_sign_seed_keypair
from nacl.exceptions import BadSignatureError

Accepts = Callable[[bytes, bytes, bytes], bool]
Signs = Callable[[bytes], bytes]


def accepts(signature: bytes, message: bytes, public_key: bytes) -> bool:
    """libsodium accepts this 64-byte signature of `message` by this 32-byte key."""
    if (
        len(signature) != 64
        or len(public_key) != 32
        or type(signature) is not bytes
        or type(public_key) is not bytes
        or type(message) is not bytes
    ):
        return False
    try:
        # The signed-message form (signature, then message): PyNaCl's bindings have no detached
        # verification, and libsodium's crypto_sign_open checks exactly what the detached one does.
        crypto_sign_open(signature + message, public_key)
    except BadSignatureError:
        return False
    return True


def signer(seed: bytes) -> Signs | None:
    """libsodium's Ed25519 signing under the private key of this 32-byte seed, or None for a
    malformed seed. It gives the very bytes `cryptography` gives
    (tests/fairness/test_ed25519_signing.py): the server signs every finished round's receipt."""
    if type(seed) is not bytes or len(seed) != 32:
        return None
    _, secret = crypto_sign_seed_keypair(seed)

    def signs(message: bytes) -> bytes:
        return crypto_sign(message, secret)[:64]  # the signed message's first 64 bytes

    return signs
