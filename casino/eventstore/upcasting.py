"""Upcasters: turn an event stored at an old schema version into the current shape on read.

Stored rows never change (they are hashed); upcasting happens on every load instead. Register
one function per (type, from_version); it returns the data of version from_version + 1.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Data = dict[str, Any]
Upcaster = Callable[[Data], Data]

UPCASTERS: dict[tuple[str, int], Upcaster] = {}


def register_upcaster(event_type: str, from_version: int) -> Callable[[Upcaster], Upcaster]:
    """Decorator: register `fn(data) -> data` lifting `event_type` from `from_version` by one."""

    def decorator(fn: Upcaster) -> Upcaster:
        key = (event_type, from_version)
        if key in UPCASTERS and UPCASTERS[key] is not fn:
            raise ValueError(f"an upcaster for {event_type} v{from_version} already exists")
        UPCASTERS[key] = fn
        return fn

    return decorator


def unregister_upcaster(event_type: str, from_version: int) -> None:
    """Remove an upcaster (tests)."""
    UPCASTERS.pop((event_type, from_version), None)


def upcast(event_type: str, schema_version: int, data: Data) -> tuple[int, Data]:
    """Apply every registered upcaster from `schema_version` on; return (version, data)."""
    while (fn := UPCASTERS.get((event_type, schema_version))) is not None:
        data = fn(data)
        schema_version += 1
    return schema_version, data
