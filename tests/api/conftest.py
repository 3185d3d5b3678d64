"""Fixtures for the game API tests: funded players, API clients, stacked shoes."""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from casino.engine.shoe import StackedShoe
from casino.rounds import seeds
from ledger import services as ledger_services

PASSWORD = "pw-test-123"
_keys = itertools.count()


def make_player(*, staff: bool = False, funds: int = 1_000_000_000) -> Any:
    name = f"p{uuid.uuid4().hex[:10]}"
    user = get_user_model().objects.create_user(username=name, password=PASSWORD, is_staff=staff)
    if funds:
        ledger_services.wallet_deposit(
            user=user, amount_micro=funds, idempotency_key=f"fund-{uuid.uuid4().hex}"
        )
    return user


class Api:
    """An authenticated API client that sends a fresh Idempotency-Key with every POST."""

    def __init__(self, user: Any) -> None:
        self.user = user
        self.client = APIClient()
        self.client.force_authenticate(user)

    def get(self, url: str, **params: Any) -> Any:
        return self.client.get(url, params or None)

    def post(self, url: str, data: Any = None, *, key: str | None = None) -> Any:
        return self.client.post(
            url, data or {}, format="json", HTTP_IDEMPOTENCY_KEY=key or f"k{next(_keys)}"
        )

    def patch(self, url: str, data: Any) -> Any:
        return self.client.patch(url, data, format="json")


@pytest.fixture
def player() -> Any:
    return make_player()


@pytest.fixture
def api(player: Any) -> Api:
    return Api(player)


@pytest.fixture
def stack(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[list[str]], None]]:
    """Deal every new round from the given cards (dealing order) instead of the fair shoe."""

    def use(cards: list[str]) -> None:
        shoe = StackedShoe(cards + ["2C"] * 40)
        monkeypatch.setattr(seeds, "shoe_for_open", lambda command: shoe)
        monkeypatch.setattr(seeds, "shoe_for", lambda state: None if state.finished else shoe)

    yield use


@pytest.fixture(autouse=True)
def fast_passwords(settings: Any) -> None:
    """PBKDF2 costs about a second per user on this machine; the tests check logins, not it."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
