"""WebSocket routes: `/ws/tables/<id>/` (session cookie or token auth), behind the Origin check.

`websocket_application()` is the stack `casino.asgi` serves (and the tests drive): the Origin
check (`SameSiteOriginValidator`), session auth, token auth, the routes.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qs

from channels.auth import AuthMiddlewareStack
from channels.db import database_sync_to_async
from channels.routing import URLRouter
from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.urls import re_path

from casino.api.authentication import token_user
from casino.api.origins import origin_is_this_site
from casino.dashboard.consumers import StatsConsumer
from casino.live.consumers import BenchConsumer, TableConsumer

_TOKEN_RE = re.compile(r"[0-9A-Za-z]{1,64}")


@database_sync_to_async
def _token_user(key: str) -> Any:
    """The token's active user; None for an unknown key or one that is not a token at all."""
    if not _TOKEN_RE.fullmatch(key):  # e.g. a NUL byte, which PostgreSQL refuses outright
        return None
    return token_user(key)


def presented_token(scope: dict[str, Any]) -> str | None:
    """The token the handshake carries (`Authorization: Token <key>` first, then `?token=`),
    "" for one sent empty, None when none was sent."""
    for name, value in scope.get("headers", []):
        if name == b"authorization" and value[:6].lower() == b"token ":
            return str(value[6:].decode("latin-1")).strip()
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
    found = query.get("token")
    return str(found[0]) if found else None


class TokenAuthMiddleware:
    """`?token=<key>` or `Authorization: Token <key>` for clients without a session cookie.

    A token that is sent must be good, as over REST (401): a bad one (unknown, revoked, its
    user inactive, malformed, empty) sets `scope["token_refused"]` and the consumer closes the
    socket with 4401 (`casino.live.consumers.CLOSE_BAD_TOKEN`) instead of making a spectator."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        key = presented_token(scope)
        if key is not None:
            found = await _token_user(key) if key else None
            if found is None:
                scope = {**scope, "token_refused": True}
            else:
                user = scope.get("user")
                if user is None or not user.is_authenticated:
                    scope = {**scope, "user": found}
        return await self.inner(scope, receive, send)


def origin_allowed(scope: dict[str, Any]) -> bool:
    """The handshake's Origin is this site: the rule of Django's CSRF check, which the login
    applies too (`casino.api.auth`): scheme, host and port equal to the Host the handshake was
    sent to (a host of ALLOWED_HOSTS), or an origin of CSRF_TRUSTED_ORIGINS. Without a Host
    header (HTTP/1.1 always sends one) the origin's host must be allowed, on its scheme's
    default port."""
    headers = {name: value for name, value in scope.get("headers", [])}
    raw_origin = headers.get(b"origin")
    if raw_origin is None:
        return False
    origin = raw_origin.decode("latin-1")
    raw_host = headers.get(b"host")
    secure = scope.get("scheme") == "wss"
    if raw_host is None:  # the origin's own host, as if the Host header had named it
        scheme, _, rest = origin.partition("://")
        if scheme not in ("http", "https") or not rest or ":" in rest or "/" in rest:
            return False
        host, secure = rest, scheme == "https"
    else:
        host = raw_host.decode("latin-1")
    return origin_is_this_site(origin, host, secure=secure)


class SameSiteOriginValidator:
    """Refuses the handshake (HTTP 403 on a real server) unless `origin_allowed`. channels'
    AllowedHostsOriginValidator compared only the Origin's host name with ALLOWED_HOSTS: a page
    at `http://localhost:9999` could open a socket to the game on `localhost:8000` with the
    visitor's session."""

    def __init__(self, application: Any) -> None:
        self.application = application

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        if scope["type"] != "websocket":
            raise ValueError("SameSiteOriginValidator is for WebSocket connections")
        if origin_allowed(scope):
            return await self.application(scope, receive, send)
        return await WebsocketDenier()(scope, receive, send)


websocket_urlpatterns: list[Any] = [
    re_path(r"^ws/tables/(?P<table_id>\d{1,12})/$", TokenAuthMiddleware(TableConsumer.as_asgi())),
    re_path(r"^ws/stats/$", StatsConsumer.as_asgi()),  # public stats changed (dashboard)
]

if getattr(settings, "BENCH_ENDPOINTS", False):  # bench/api.py fan-out anchor
    websocket_urlpatterns.append(re_path(r"^ws/bench/$", BenchConsumer.as_asgi()))


def websocket_application() -> Any:
    """The WebSocket stack casino.asgi serves: origin check, session auth, token auth, routes."""
    return SameSiteOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns)))
