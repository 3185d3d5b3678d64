"""Encryption at rest of chain heads: Fernet under settings.SEED_ENCRYPTION_KEYS (newest first).

MultiFernet encrypts with the first key and decrypts with any, so a key is rotated by putting the
new key first, running `manage.py fairness_rotate_seed_keys`, then dropping the old key.
"""

from __future__ import annotations

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings

from casino.platform.errors import ApplicationError


def _fernet() -> MultiFernet:
    keys = [k for k in settings.SEED_ENCRYPTION_KEYS if k]
    if not keys:
        raise ApplicationError(
            "No seed encryption key is configured.", code="seed_key_missing", status_code=503
        )
    return MultiFernet([Fernet(k.encode("ascii")) for k in keys])


def encrypt_secret(secret: str) -> str:
    """A Fernet token of the secret under the newest key."""
    return _fernet().encrypt(secret.encode("ascii")).decode("ascii")


def decrypt_secret(token: str) -> str:
    """The secret inside a token made under any configured key."""
    try:
        return _fernet().decrypt(token.encode("ascii")).decode("ascii")
    except InvalidToken as exc:
        raise ApplicationError(
            "A chain head cannot be decrypted with the configured keys.",
            code="seed_key_mismatch",
            status_code=503,
        ) from exc


def rotate_token(token: str) -> str:
    """The same secret re-encrypted under the newest key."""
    return _fernet().rotate(token.encode("ascii")).decode("ascii")
