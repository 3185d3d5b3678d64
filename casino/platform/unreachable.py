"""Errors meaning Redis (cache, channel layer, broker) cannot be reached right now.

A passing outage, not a bug: the API answers 503 and rate limits fall back to per-process
windows (see casino.platform.errors and casino.platform.throttles). Its own module so both can
import it without a cycle.
"""

from __future__ import annotations

import redis.exceptions

REDIS_UNREACHABLE = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)
