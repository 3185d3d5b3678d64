"""Canonical JSON: the exact bytes that receipts are signed over and events are hashed over.

Sorted keys, no spaces, UTF-8 (non-ASCII kept as is). Pure: no Django.
"""

from __future__ import annotations

import json
from typing import Any


def canonical_json(obj: Any) -> bytes:
    """Return the canonical UTF-8 JSON bytes of a JSON-native object."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode(
        "utf-8"
    )
