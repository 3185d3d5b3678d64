"""While Redis is down the rate limits hold, per process (issue 21).

The counters live in the cache (Redis with REDIS_URL). While it was unreachable every limit
was lifted, the login limit included: password guessing went unlimited for the length of the
outage. Each process now keeps the windows itself until Redis answers again.

The outage is real at the client library: the cache points at a closed port, so redis-py's
own connection error is what the throttle meets (the shared Redis server keeps running for
the other tests; tests/faults/test_redis_restart.py restarts a real one).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from rest_framework.test import APIClient

from casino.platform import throttles
from tests.api.conftest import PASSWORD, make_player

pytestmark = pytest.mark.django_db

CLOSED = "redis://127.0.0.1:1/0"  # nothing listens on port 1


@pytest.fixture
def redis_down(settings: Any) -> Iterator[None]:
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": CLOSED}
    }
    throttles.LOCAL_WINDOWS.clear()
    throttles._warned.clear()
    yield
    throttles.LOCAL_WINDOWS.clear()


def test_the_cache_is_really_unreachable(redis_down: None) -> None:
    import redis.exceptions
    from django.core.cache import caches

    with pytest.raises(redis.exceptions.ConnectionError):
        caches["default"].get("anything")


def test_the_login_limit_holds_while_redis_is_down(
    redis_down: None, settings: Any, caplog: pytest.LogCaptureFixture
) -> None:
    settings.THROTTLE_RATES = {"login": "3/min", "money": "600/min"}
    user = make_player(funds=0)
    client = APIClient()

    def attempt(password: str) -> int:
        body = {"username": user.username, "password": password}
        return int(client.post("/api/auth/login/", body, format="json").status_code)

    assert [attempt("guess") for _ in range(3)] == [401, 401, 401]
    refused = client.post(
        "/api/auth/login/", {"username": user.username, "password": PASSWORD}, format="json"
    )
    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "throttled"
    assert int(refused["Retry-After"]) > 0
    assert "rate limit login applied per process: the cache is unreachable" in caplog.text
    other = APIClient(REMOTE_ADDR="10.0.0.9")  # the window is per client address
    body = {"username": user.username, "password": PASSWORD}
    assert other.post("/api/auth/login/", body, format="json").status_code == 200


def test_the_money_limit_holds_too(redis_down: None, settings: Any) -> None:
    settings.THROTTLE_RATES = {"login": "30/min", "money": "2/min"}
    client = APIClient()
    client.force_authenticate(make_player(funds=0))
    codes = [
        client.post(
            "/api/wallet/faucet/", {"amount": "1"}, format="json", HTTP_IDEMPOTENCY_KEY=f"f{n}"
        ).status_code
        for n in range(3)
    ]
    assert codes == [201, 201, 429]


def test_the_local_window_is_the_redis_rule() -> None:
    windows = throttles._LocalWindows()
    assert windows.hit("k", 100.0, 60, 2) == (True, 1, 100.0)
    assert windows.hit("k", 110.0, 60, 2) == (True, 2, 110.0)
    assert windows.hit("k", 120.0, 60, 2) == (False, 2, 100.0)  # refused: not counted
    assert windows.hit("k", 160.5, 60, 2) == (True, 2, 160.5)  # 100 left the window
    windows.MAX_KEYS = 3
    for n in range(5):
        windows.hit(f"other{n}", 500.0, 60, 2)
    assert len(windows._windows) <= 3
