"""Secrets from the environment, with a demo-only fallback file.

In demo mode (DEBUG on) a missing secret is generated once into `.local/secrets.json`
(ignored by git) so that a fresh clone serves without setup. With DEBUG off a missing
secret is an error: the server refuses to start.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
from collections.abc import Callable
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured


def _fernet_key() -> str:
    return base64.urlsafe_b64encode(secrets.token_bytes(32)).decode()


def _ed25519_private_key() -> str:
    # 32 raw bytes of an Ed25519 private key, hex encoded.
    return secrets.token_bytes(32).hex()


GENERATORS: dict[str, Callable[[], str]] = {
    "SECRET_KEY": lambda: secrets.token_urlsafe(50),
    "SEED_ENCRYPTION_KEYS": _fernet_key,
    "RECEIPT_SIGNING_KEY": _ed25519_private_key,
}


def load_secrets(*, base_dir: Path, debug: bool) -> dict[str, str]:
    """Return every secret, from the environment or (demo mode only) the local file."""
    values: dict[str, str] = {}
    missing = [name for name in GENERATORS if not os.environ.get(name)]
    for name in GENERATORS:
        if os.environ.get(name):
            values[name] = os.environ[name]
    if not missing:
        return values
    if not debug:
        raise ImproperlyConfigured(
            "DEBUG is off but these secrets are not set: "
            + ", ".join(missing)
            + ". Set them in the environment (see .env.example)."
        )
    path = base_dir / ".local" / "secrets.json"
    stored: dict[str, str] = {}
    if path.exists():
        stored = json.loads(path.read_text())
    changed = False
    for name in missing:
        if name not in stored:
            stored[name] = GENERATORS[name]()
            changed = True
        values[name] = stored[name]
    if changed:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(stored, indent=2, sort_keys=True))
        tmp.chmod(0o600)
        tmp.replace(path)
    return values
