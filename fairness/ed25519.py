"""A faster Ed25519 acceptance test through the system's libsodium, when it is there. Pure.

`accepts(signature, message, public_key)` (all raw bytes) is True only when libsodium's
`crypto_sign_ed25519_verify_detached` accepts the signature: about half the CPU time of
`cryptography`'s verification (OpenSSL) on the same input (about 0.71 M against 1.48 M
instructions, 51 against 105 us of CPU). It is only ever a shortcut to "valid":
`fairness.receipt.verify_signature` asks `cryptography` whenever libsodium says anything else,
so every verdict is `cryptography`'s.

Why an acceptance by libsodium is one by `cryptography`: both check the same cofactorless
equation, encode([S]B - [k]A) == R with k = SHA-512(R || A || M) mod L, on the same bytes,
and both refuse a non-canonical S. libsodium refuses more besides (a non-canonical or small
order A, a small order R); for a canonical A both decode the same point. So libsodium accepts
a subset of what OpenSSL accepts, and for a tampered or forged signature the verdict (and the
verifier's message) comes from `cryptography`, exactly as without libsodium.

`signer(seed)` signs with libsodium where the system has it: Ed25519 signatures are
deterministic, so its signatures are `cryptography`'s own bytes (the server's receipts).

The library is loaded with `ctypes` from the standard library (Debian's `libsodium23`; no
Python package needed); without it, or with FAIRNESS_NO_LIBSODIUM set in the environment,
`accepts` is None and `cryptography` alone verifies.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from collections.abc import Callable

Accepts = Callable[[bytes, bytes, bytes], bool]

_NAMES = ("libsodium.so.23", "libsodium.so.26", "libsodium.so")


def _library() -> ctypes.CDLL | None:
    if os.environ.get("FAIRNESS_NO_LIBSODIUM"):
        return None
    found = ctypes.util.find_library("sodium")
    for name in (*_NAMES, *((found,) if found else ())):
        try:
            lib = ctypes.CDLL(name)
            if lib.sodium_init() < 0:
                continue
            verify = lib.crypto_sign_ed25519_verify_detached
            sign = lib.crypto_sign_ed25519_detached
            keypair = lib.crypto_sign_ed25519_seed_keypair
        except (OSError, AttributeError):
            continue
        verify.argtypes = (ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulonglong, ctypes.c_char_p)
        verify.restype = ctypes.c_int
        sign.argtypes = (
            ctypes.c_char_p, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_ulonglong, ctypes.c_char_p
        )  # fmt: skip
        sign.restype = ctypes.c_int
        keypair.argtypes = (ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p)
        keypair.restype = ctypes.c_int
        return lib
    return None


def _load() -> Accepts | None:
    return None if _LIB is None else _wrap(_LIB.crypto_sign_ed25519_verify_detached)


Signs = Callable[[bytes], bytes]
# The signature buffer's type, kept: ctypes caches array types only weakly, so a buffer made
# with `create_string_buffer` per call made a new type each time, garbage for the collector.
_SIGNATURE = ctypes.c_char * 64


def signer(seed: bytes) -> Signs | None:
    """libsodium's Ed25519 signing under the private key of this 32-byte seed, or None
    without libsodium. Ed25519 signatures are deterministic (RFC 8032), so it gives the very
    bytes `cryptography` gives (tests/fairness/test_ed25519_signing.py), for about two thirds of the
    instructions (0.34 against 0.51 M for a 1.5 kB receipt, callgrind): the server signs every
    finished round's receipt."""
    if _LIB is None or type(seed) is not bytes or len(seed) != 32:
        return None
    public, secret = ctypes.create_string_buffer(32), ctypes.create_string_buffer(64)
    if _LIB.crypto_sign_ed25519_seed_keypair(public, secret, seed) != 0:
        return None
    sign = _LIB.crypto_sign_ed25519_detached
    key = secret.raw

    def signs(message: bytes) -> bytes:
        signature = _SIGNATURE()
        if sign(signature, None, message, len(message), key) != 0:
            raise ValueError("libsodium refused to sign")
        return signature.raw

    return signs


def _wrap(verify: Callable[[bytes, bytes, int, bytes], int]) -> Accepts:
    def accepts(signature: bytes, message: bytes, public_key: bytes) -> bool:
        """libsodium accepts this 64-byte signature of `message` by this 32-byte key."""
        if (  # the C call reads exactly 64 and 32 bytes, and the message's bytes
            len(signature) != 64
            or len(public_key) != 32
            or type(signature) is not bytes
            or type(public_key) is not bytes
            or type(message) is not bytes
        ):
            return False
        return verify(signature, message, len(message), public_key) == 0

    return accepts


_LIB = _library()
accepts: Accepts | None = _load()
