"""Rate limits on logins and on every request that moves money.

Views name a scope (`throttle_scope = "login"` or `"money"`); the rate comes from
settings.THROTTLE_RATES at request time. Counters live in the default cache, which is Redis
(shared by every server process) when REDIS_URL is set. Reads are never limited here.

When that cache cannot be reached (Redis restarting), the limit fails open: the request goes on
and a warning is logged. Refusing every login and every bet for the length of a Redis outage
would turn a cache fault into a full outage; the money path's own guarantees (row locks,
balances, idempotency) do not depend on the counters.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from rest_framework.permissions import SAFE_METHODS
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

from casino.unreachable import REDIS_UNREACHABLE

logger = logging.getLogger(__name__)


class ScopedThrottle(SimpleRateThrottle):
    """Limit unsafe requests per scope: per user when logged in, per client address otherwise."""

    def __init__(self) -> None:  # the rate is read per request, not at import
        self.scope: str | None = None

    def allow_request(self, request: Request, view: Any) -> bool:
        self.scope = getattr(view, "throttle_scope", None)
        if self.scope is None or request.method in SAFE_METHODS:
            return True
        self.rate = settings.THROTTLE_RATES.get(self.scope)
        if not self.rate:
            return True
        self.num_requests, self.duration = self.parse_rate(self.rate)
        try:
            return super().allow_request(request, view)
        except REDIS_UNREACHABLE:
            logger.warning("rate limit %s not applied: the cache is unreachable", self.scope)
            return True

    def get_cache_key(self, request: Request, view: Any) -> str:
        user = request.user
        ident = f"user:{user.pk}" if user and user.is_authenticated else self.get_ident(request)
        return f"throttle:{self.scope}:{ident}"
