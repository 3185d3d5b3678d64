"""Logins and money-moving requests are rate-limited, with the one error shape."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
import redis
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.core.cache.backends.redis import RedisCache
from rest_framework.request import Request
from rest_framework.test import APIClient, APIRequestFactory
from rest_framework.views import APIView

from casino.platform import throttles
from casino.platform.errors import ApplicationError
from casino.platform.throttles import ScopedThrottle, throttle_command, user_ident

pytestmark = pytest.mark.django_db


def test_login_attempts_are_limited_per_client(settings: object) -> None:
    settings.THROTTLE_RATES = {"login": "3/min", "money": "100/min"}  # type: ignore[attr-defined]
    get_user_model().objects.create_user(username="zoe", password="right-password")
    client = APIClient()
    for _ in range(3):
        wrong = client.post(
            "/api/auth/login/", {"username": "zoe", "password": "guess"}, format="json"
        )
        assert wrong.status_code == 401
    blocked = client.post(
        "/api/auth/login/", {"username": "zoe", "password": "right-password"}, format="json"
    )
    assert blocked.status_code == 429
    body = blocked.json()
    assert body["error"]["code"] == "throttled"
    assert "Retry-After" in blocked.headers


def test_money_moving_requests_are_limited_per_player(settings: object) -> None:
    settings.THROTTLE_RATES = {"login": "100/min", "money": "2/min"}  # type: ignore[attr-defined]
    user = get_user_model().objects.create_user(username="yan", password="pw")
    client = APIClient()
    client.force_authenticate(user)
    codes = [
        client.post(
            "/api/wallet/faucet/", {"amount": "1"}, format="json", HTTP_IDEMPOTENCY_KEY=f"k{i}"
        ).status_code
        for i in range(3)
    ]
    assert codes[:2] == [201, 201]
    assert codes[2] == 429
    # Reading the wallet is never limited.
    assert client.get("/api/wallet/balance/").status_code == 200


def test_a_command_outside_drf_counts_in_the_users_rest_window(settings: object) -> None:
    settings.THROTTLE_RATES = {"login": "100/min", "money": "3/min"}  # type: ignore[attr-defined]
    user = get_user_model().objects.create_user(username="wes", password="pw")
    client = APIClient()
    client.force_authenticate(user)
    for i in range(2):
        faucet = client.post(
            "/api/wallet/faucet/", {"amount": "1"}, format="json", HTTP_IDEMPOTENCY_KEY=f"w{i}"
        )
        assert faucet.status_code == 201
    throttle_command(user_pk=user.pk)  # the 3rd of 3: passes
    with pytest.raises(ApplicationError) as refused:
        throttle_command(user_pk=user.pk)
    assert (refused.value.code, refused.value.status_code) == ("throttled", 429)
    assert 0 < refused.value.extra["retry_after_s"] <= 60
    later = client.post(
        "/api/wallet/faucet/", {"amount": "1"}, format="json", HTTP_IDEMPOTENCY_KEY="w9"
    )
    assert later.status_code == 429  # the refused command was not counted, the window is full
    other = get_user_model().objects.create_user(username="vic", password="pw")
    throttle_command(user_pk=other.pk)  # each user has a window of their own
    assert ScopedThrottle().allow("login", user_ident(user.pk))  # and each scope


@pytest.mark.redis
def test_on_redis_the_window_is_one_atomic_script_with_drfs_rule(settings: object) -> None:
    settings.THROTTLE_RATES = {"login": "100/min", "money": "3/min"}  # type: ignore[attr-defined]
    started = time.time()
    verdicts = []
    for _ in range(5):
        throttle = ScopedThrottle()
        verdicts.append(throttle.allow("money", user_ident(4242)))
    assert verdicts == [True, True, True, False, False]  # refused requests are not counted
    assert throttle._window is not None  # the Redis path ran (not DRF's pickled list)
    wait = throttle.wait()
    assert wait is not None and 60 - (time.time() - started) - 1 <= wait <= 60
    # The window lives in one sorted set under the cache's key space, with an expiry.
    # It is in the cache's own Redis (read through a client of the cache's LOCATION).
    key = cache.make_and_validate_key("throttle:money:user:4242:window")
    client = redis.Redis.from_url(settings.CACHES["default"]["LOCATION"])  # type: ignore[attr-defined]
    assert client.zcard(key) == 3 and 0 < client.ttl(key) <= 60
    assert cache.get("throttle-probe") is None
    cache.set("throttle-probe", 1, 30)  # the cache's writes land where the window is
    assert client.exists(cache.make_and_validate_key("throttle-probe")) == 1
    # A view's request is counted in that window; reads are never limited.
    factory = APIRequestFactory()
    view = APIView()
    view.throttle_scope = "money"  # type: ignore[attr-defined]
    for method, allowed in (("post", False), ("get", True)):
        request = Request(getattr(factory, method)("/"))
        request.user = get_user_model()(pk=4242)  # unsaved: authenticated, pk 4242
        assert ScopedThrottle().allow_request(request, view) is allowed


@pytest.mark.redis
def test_the_redis_backend_is_kept_across_request_threads_until_the_settings_change(
    settings: Any,
) -> None:
    seen: list[Any] = []
    for _ in range(2):  # each request runs in a thread (and context) of its own
        thread = threading.Thread(target=lambda: seen.append(throttles._default_cache()))
        thread.start()
        thread.join()
    assert isinstance(seen[0], RedisCache) and seen[0] is seen[1]
    settings.CACHES = {
        "default": {**settings.CACHES["default"], "KEY_PREFIX": "other"},
    }
    changed = throttles._default_cache()
    assert changed is not seen[0] and changed.key_prefix == "other"
    assert changed.make_and_validate_key("k") == "other:1:k"
