"""WebSocket routes: `/ws/tables/<id>/` (session cookie or token auth; origin checked in asgi)."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qs

from channels.auth import AuthMiddlewareStack
from channels.db import database_sync_to_async
from channels.routing import URLRouter
from channels.security.websocket import AllowedHostsOriginValidator
from django.conf import settings
from django.urls import re_path

from casino.consumers import BenchConsumer, TableConsumer
from casino.dashboard.consumers import StatsConsumer

_TOKEN_RE = re.compile(r"[0-9A-Za-z]{1,64}")


@database_sync_to_async
def _token_user(key: str) -> Any:
    """The token's active user; None for an unknown key or one that is not a token at all."""
    from rest_framework.authtoken.models import Token

    if not _TOKEN_RE.fullmatch(key):  # e.g. a NUL byte, which PostgreSQL refuses outright
        return None

    token = Token.objects.select_related("user").filter(key=key).first()
    return token.user if token is not None and token.user.is_active else None


class TokenAuthMiddleware:
    """`?token=<key>` or `Authorization: Token <key>` for clients without a session cookie."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        user = scope.get("user")
        if user is None or not user.is_authenticated:
            key = None
            for name, value in scope.get("headers", []):
                if name == b"authorization" and value.startswith(b"Token "):
                    key = value[6:].decode("latin-1").strip()
            query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
            key = key or (query.get("token") or [None])[0]
            if key:
                found = await _token_user(key)
                if found is not None:
                    scope = {**scope, "user": found}
        return await self.inner(scope, receive, send)


websocket_urlpatterns: list[Any] = [
    re_path(r"^ws/tables/(?P<table_id>\d{1,12})/$", TokenAuthMiddleware(TableConsumer.as_asgi())),
    re_path(r"^ws/stats/$", StatsConsumer.as_asgi()),  # public stats changed (dashboard)
]

if getattr(settings, "BENCH_ENDPOINTS", False):  # bench/api.py fan-out anchor
    websocket_urlpatterns.append(re_path(r"^ws/bench/$", BenchConsumer.as_asgi()))


def websocket_application() -> Any:
    """The WebSocket stack casino.asgi serves: origin check, session auth, token auth, routes."""
    return AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns)))
