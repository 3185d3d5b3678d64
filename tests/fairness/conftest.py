"""Fixtures of the verify page's browser tests: a headless Chromium page, cheap passwords."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.chromium import chromium_page


@pytest.fixture
def page(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A Chromium page. Playwright's sync API runs an event loop in this thread; the ORM is not
    used meanwhile."""
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with chromium_page() as opened:
        yield opened


@pytest.fixture
def fast_passwords(settings: Any) -> None:
    """make_player's PBKDF2 costs about a second; a page test checks the page, not it."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
