"""While Redis is unreachable: rate limits hold per process, the API answers 503, rounds stand.

The outage is simulated at the client-library boundary (the cache and the broker raise
redis-py's ConnectionError), so this runs on the embedded default too; the real restart of a
real Redis is tests/faults/test_redis_restart.py.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest
import redis.exceptions
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from casino.engine.commands import PlaceBet
from casino.engine.rules import USDC
from casino.eventstore.models import StoredEvent
from casino.platform import throttles
from casino.platform.errors import exception_handler
from casino.platform.throttles import ScopedThrottle
from casino.rounds import publish, services
from tests.casino.conftest import make_player, make_table

pytestmark = pytest.mark.django_db

Stack = Callable[[Sequence[str]], None]


class _DownCache:
    def get(self, *args: Any, **kwargs: Any) -> Any:
        raise redis.exceptions.ConnectionError("Error 111 connecting to 127.0.0.1:6379.")

    set = add = delete = get


def test_rate_limits_hold_per_process_when_the_cache_is_unreachable(
    settings: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    settings.THROTTLE_RATES = {"login": "1/min", "money": "1/min"}
    get_user_model().objects.create_user(username="uma", password="right-password")
    monkeypatch.setattr(ScopedThrottle, "cache", _DownCache())
    throttles.LOCAL_WINDOWS.clear()
    client = APIClient()
    codes = [
        client.post(
            "/api/auth/login/", {"username": "uma", "password": "right-password"}, format="json"
        ).status_code
        for _ in range(3)
    ]
    # With the counters unreachable the process keeps the window itself (and nothing is a
    # 500): the login limit does not fail open (issue 21; tests/security/test_login_limit_outage).
    assert codes == [200, 429, 429]
    assert "rate limit login applied per process: the cache is unreachable" in caplog.text
    throttles.LOCAL_WINDOWS.clear()


def test_an_unreachable_redis_is_a_503_with_retry_after_in_the_one_error_shape() -> None:
    response = exception_handler(redis.exceptions.ConnectionError("connection refused"), {})
    assert response is not None
    assert response.status_code == 503
    assert response.headers["Retry-After"] == "5"
    assert response.data == {
        "error": {
            "code": "service_unavailable",
            "message": "A backing service is restarting; retry shortly.",
            "details": {},
        }
    }


def test_a_broker_failure_after_commit_leaves_the_command_done(
    settings: Any,
    monkeypatch: pytest.MonkeyPatch,
    stack_shoe: Stack,
    django_capture_on_commit_callbacks: Any,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # A broker is configured (not eager), and it is down when the nudge is scheduled.
    settings.CELERY_TASK_ALWAYS_EAGER = False

    def broker_down(round_id: str, deadline_ms: int) -> None:
        raise redis.exceptions.ConnectionError("Error 111 connecting to 127.0.0.1:6379.")

    monkeypatch.setattr(publish, "schedule_nudge", broker_down)
    stack_shoe(["9H", "5C", "7D", "TS", "4S", "2H"])
    gil = make_player("gil")
    opened = services.round_open(table=make_table("classic"), players=[gil])
    with django_capture_on_commit_callbacks(execute=True):
        result = services.round_command(
            round_id=opened.round.id, command=PlaceBet(str(gil.pk), (USDC,))
        )
    # The deal committed and stays: the player's turn, with a deadline the beat sweep applies.
    assert result.state.phase == "playing"
    assert result.state.deadline_ms is not None
    dealt = StoredEvent.objects.filter(
        stream_id=opened.round.id, type__in=("PlayerCardDealt", "DealerCardDealt")
    )
    assert [e.data["card"] for e in dealt.order_by("version")] == ["9H", "5C", "7D", "TS"]
    publish.flush_nudges()  # the 60 s turn timer's nudge waits in the process: send it now
    assert f"scheduling the nudge of round {opened.round.id} failed" in caplog.text
