"""Logins and money-moving requests are rate-limited, with the one error shape."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

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
