"""The deadline sweep's heartbeat: when the last sweep finished, and who ran it, for /healthz.

Kept in the default cache (Redis when REDIS_URL is set), so every server process's /healthz
sees a sweep run by any worker or by the in-process timer thread (casino.tables.timers).
"""

from __future__ import annotations

import logging
import time
from typing import Any

from django.core.cache import cache

logger = logging.getLogger(__name__)

SWEPT_KEY = "casino:timers:swept"  # the last finished deadline sweep: {"at": epoch s, "by"}


def record_sweep(by: str) -> None:
    """Note a finished deadline sweep (`by`: "in_process" or "worker"), for /healthz."""
    try:
        cache.set(SWEPT_KEY, {"at": time.time(), "by": by}, timeout=3600)
    except Exception:  # the cache down (Redis): the sweep itself did its work
        logger.warning("the deadline sweep could not be recorded (cache unreachable)")


def last_sweep() -> dict[str, Any] | None:
    """The last recorded deadline sweep, None if none is (raises if the cache is down)."""
    found = cache.get(SWEPT_KEY)
    return found if isinstance(found, dict) else None
