"""Rate limits on logins and on every request that moves money.

Views name a scope (`throttle_scope = "login"` or `"money"`); the rate comes from
settings.THROTTLE_RATES at request time. A command that reaches the server another way (the
table WebSocket) counts in the same window through `throttle_command`: one limit per user,
whatever the transport. Counters live in the default cache, which is Redis
(shared by every server process) when REDIS_URL is set. Reads are never limited here.

On Redis the window is kept by one atomic script (a sorted set of request times per key):
one round trip a request instead of DRF's read and write of a pickled list, and no lost
update between two concurrent requests. The rule is DRF's: a request is refused while the
window (`duration` seconds back) already holds `num_requests`; a refused request is not
counted; `wait()` is computed the same way. Other caches (the embedded default's local
memory) take DRF's own path.

When that cache cannot be reached (Redis restarting), each server process keeps the window
itself (`_LocalWindows`, the same rule) until it answers again, and a warning is logged (at
most every 30 s per scope). The limit no longer fails open: password guessing during an
outage meets the login limit per process (N processes allow N times the rate), and nothing is
refused that the limit would have let through. Refusing every login and every bet for the
length of the outage would turn a cache fault into a full outage; the money path's own
guarantees (row locks, balances, idempotency) do not depend on the counters.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections import deque
from typing import Any

import redis
from django.conf import settings
from django.core.cache import DEFAULT_CACHE_ALIAS, caches
from django.core.cache.backends.redis import RedisCache
from django.utils.connection import ConnectionProxy
from rest_framework.permissions import SAFE_METHODS
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

from casino.platform import redisscript
from casino.platform.unreachable import REDIS_UNREACHABLE

logger = logging.getLogger(__name__)

# KEYS[1]: the window's sorted set; ARGV: now (s), duration (s), limit, a unique member.
# Returns {allowed (1/0), requests in the window (after this one if allowed), oldest time}.
_WINDOW_LUA = """
local now = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[2]))
local count = redis.call('ZCARD', KEYS[1])
if count >= tonumber(ARGV[3]) then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {0, count, oldest[2] or ARGV[1]}
end
redis.call('ZADD', KEYS[1], now, ARGV[4])
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[2]))
return {1, count + 1, ARGV[1]}
"""
# The window script registered on each shared client (a script runs on the client it was
# registered with: one registered once for all would keep counting on the first cache's Redis
# after the cache moved, e.g. to a server that is down).
_scripts: dict[int, Any] = {}  # id(shared client) -> its registered script
# One Redis client per cache location, shared by every thread of the process. Django keeps a
# cache backend per request context (each ASGI request gets its own, with its own connection
# pool), so going through it would open a new Redis connection for every request.
_clients: dict[tuple[Any, ...], Any] = {}  # (servers, options) -> its client
_clients_lock = threading.Lock()


def _shared_client() -> Any:
    """A redis-py client for the default cache's primary (write) server, kept for the process.

    Built from the cache's public settings as Django's RedisCache reads them: LOCATION is a
    URL or a comma-separated list (or list) of URLs whose first is the write server; OPTIONS
    other than Django's own (serializer, pool and parser classes) go to the connection pool.
    """
    conf: dict[str, Any] = settings.CACHES[DEFAULT_CACHE_ALIAS]
    location = conf["LOCATION"]
    servers = tuple(location.split(",") if isinstance(location, str) else location)
    options = {
        name: value
        for name, value in conf.get("OPTIONS", {}).items()
        if name not in ("serializer", "pool_class", "parser_class")
    }
    found = (servers, tuple(sorted(options.items(), key=lambda item: item[0])))
    client = _clients.get(found)
    if client is None:
        with _clients_lock:
            client = _clients.get(found)
            if client is None:
                client = _clients[found] = redis.Redis.from_url(servers[0], **options)
    return client


_redis_default: list[tuple[Any, RedisCache]] = []  # [(settings.CACHES it came from, backend)]


def _default_cache() -> Any:
    """The default cache backend. A Redis one is kept for the process: this module uses only
    its key function (the client is `_shared_client`), and `caches[...]` builds a new backend
    for every request context. Other backends (the embedded default's local memory) come
    from `caches` each time."""
    conf = settings.CACHES
    if _redis_default and _redis_default[0][0] is conf:  # the same settings (tests change them)
        return _redis_default[0][1]
    cache = caches[DEFAULT_CACHE_ALIAS]
    if isinstance(cache, RedisCache):
        _redis_default[:] = [(conf, cache)]
    return cache


class _LocalWindows:
    """Sliding windows in this process's memory: the limit while the shared cache is down.

    The Redis script's rule: refused while the window (`duration` s back) holds `limit`
    requests; a refused request is not counted. Bounded: past `MAX_KEYS` windows, the ones
    with nothing recent are dropped, and if none is, all are (a flood of client addresses
    must not grow the process without end)."""

    MAX_KEYS = 50_000

    def __init__(self) -> None:
        self._windows: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def hit(self, key: str, now: float, duration: float, limit: int) -> tuple[bool, int, float]:
        """(allowed, requests in the window after this one if allowed, oldest time)."""
        with self._lock:
            window = self._windows.get(key)
            if window is None:
                if len(self._windows) >= self.MAX_KEYS:
                    self._trim(now, duration)
                window = self._windows[key] = deque()
            while window and window[0] <= now - duration:
                window.popleft()
            if len(window) >= limit:
                return False, len(window), window[0] if window else now
            window.append(now)
            return True, len(window), now

    def _trim(self, now: float, duration: float) -> None:
        stale = [k for k, w in self._windows.items() if not w or w[-1] <= now - duration]
        for key in stale:
            del self._windows[key]
        if len(self._windows) >= self.MAX_KEYS:
            self._windows.clear()

    def clear(self) -> None:
        with self._lock:
            self._windows.clear()


LOCAL_WINDOWS = _LocalWindows()
_warned: dict[str, float] = {}  # scope -> when the outage was last logged


def _warn_outage(scope: str) -> None:
    now = time.monotonic()
    if now - _warned.get(scope, -1e9) >= 30.0:
        _warned[scope] = now
        logger.warning("rate limit %s applied per process: the cache is unreachable", scope)


class ScopedThrottle(SimpleRateThrottle):
    """Limit unsafe requests per scope: per user when logged in, per client address otherwise.

    `allow(scope, ident)` is the limit itself, for any caller that can name who is acting;
    `allow_request` (DRF's throttle interface) derives the ident from a request and calls it,
    so a REST POST and a WebSocket command from the same user count in one window.
    """

    def __init__(self) -> None:  # the rate is read per request, not at import
        self.scope: str | None = None
        self.ident: str | None = None
        self._window: tuple[int, float] | None = None  # Redis: (requests in window, oldest)

    def allow_request(self, request: Request, view: Any) -> bool:
        scope = getattr(view, "throttle_scope", None)
        if scope is None or request.method in SAFE_METHODS:
            return True
        user = request.user
        if user and user.is_authenticated:
            return self.allow(scope, user_ident(user.pk))
        return self.allow(scope, self.get_ident(request))

    def allow(self, scope: str, ident: str) -> bool:
        """Count one request of `ident` (`user_ident(pk)`, or a client address) in `scope`'s
        window; False when the window is full (a refused request is not counted)."""
        self.scope, self.ident = scope, ident
        self.rate = settings.THROTTLE_RATES.get(scope)
        if not self.rate:
            return True
        self.num_requests, self.duration = self.parse_rate(self.rate)
        self._window = None
        cache = self.cache
        if isinstance(cache, ConnectionProxy):  # django.core.cache.cache: the default backend
            cache = _default_cache()
        try:
            if isinstance(cache, RedisCache):
                return self._allow_on_redis(cache)
            # DRF's own rule on the cache; its key comes from get_cache_key, which reads
            # the scope and ident set above (no request or view is needed for it).
            return super().allow_request(None, None)  # type: ignore[arg-type]
        except REDIS_UNREACHABLE:
            _warn_outage(scope)
            return self._allow_locally()

    def _allow_locally(self) -> bool:
        self.key = self.get_cache_key(None, None)
        self.now = self.timer()
        assert self.duration is not None and self.num_requests is not None
        allowed, count, oldest = LOCAL_WINDOWS.hit(
            self.key, self.now, float(self.duration), int(self.num_requests)
        )
        self._window = (count, oldest)
        return allowed

    def _allow_on_redis(self, cache: RedisCache) -> bool:
        self.key = self.get_cache_key(None, None)
        key = cache.make_and_validate_key(f"{self.key}:window")
        client = _shared_client()
        script = _scripts.get(id(client))
        if script is None:
            script = _scripts[id(client)] = client.register_script(_WINDOW_LUA)
        self.now = self.timer()
        allowed, count, oldest = redisscript.run(
            script, [key], [repr(self.now), self.duration, self.num_requests, uuid.uuid4().hex]
        )
        self._window = (int(count), float(oldest))
        return bool(allowed)

    def wait(self) -> float | None:
        """Seconds until a retry may pass (DRF's rule), None when it cannot be told."""
        if self._window is None:
            return super().wait()
        count, oldest = self._window
        assert self.duration is not None and self.num_requests is not None
        remaining = self.duration - (self.now - oldest) if count else self.duration
        available = self.num_requests - count + 1
        if available <= 0:
            return None
        return float(remaining / available)

    def get_cache_key(self, request: Request | None, view: Any) -> str:
        """The window's key: the scope and ident `allow` was called with."""
        return f"throttle:{self.scope}:{self.ident}"


def user_ident(pk: Any) -> str:
    """A logged-in user's identity in every scope's window, whatever transport they use."""
    return f"user:{pk}"


_REFUSALS = {
    "money": "Too many money-moving requests; retry later.",
    "login": "Too many login attempts; retry later.",
}


def throttle_command(*, user_pk: Any, scope: str = "money") -> None:
    """Count a command from a logged-in user outside DRF's views (the table WebSocket) in the
    same window as their REST requests; raise `throttled` (429, `retry_after_s`) when full."""
    from casino.platform.errors import ApplicationError  # a cycle: errors -> DRF APIView -> here

    throttle = ScopedThrottle()
    if throttle.allow(scope, user_ident(user_pk)):
        return
    wait = throttle.wait()
    raise ApplicationError(
        _REFUSALS.get(scope, "Too many requests; retry later."),
        code="throttled",
        status_code=429,
        extra={"retry_after_s": None if wait is None else round(wait, 1)},
    )
