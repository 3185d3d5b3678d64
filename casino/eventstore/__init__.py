"""The event store: hash-chained, append-only streams of round events.

Public API (import after Django is set up):
`append`, `load`, `load_many`, `read_after`, `last_position`, `NewEvent`, `ConcurrencyError`
(store.py),
`verify_stream`, `Problem` (integrity.py), `register_upcaster` (upcasting.py),
and the `StoredEvent` model.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "append": "casino.eventstore.store",
    "load": "casino.eventstore.store",
    "load_many": "casino.eventstore.store",
    "read_after": "casino.eventstore.store",
    "last_position": "casino.eventstore.store",
    "NewEvent": "casino.eventstore.store",
    "ConcurrencyError": "casino.eventstore.store",
    "verify_stream": "casino.eventstore.integrity",
    "Problem": "casino.eventstore.integrity",
    "register_upcaster": "casino.eventstore.upcasting",
    "StoredEvent": "casino.eventstore.models",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    # Lazy: this package is a Django app, so its models cannot load at import time.
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

    return getattr(importlib.import_module(_EXPORTS[name]), name)
