"""Session and CSRF settings (issue 9, "Security").

Browsers authenticate with the session cookie, so every unsafe request on a session needs the
CSRF token (`X-CSRFToken`, returned by the login). Tokens (`Authorization: Token ...`) are not
sent by a browser on its own, so they need none. In production the cookies are Secure.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from casino.models import PlayerPreferences, Table
from tests.api.conftest import PASSWORD, make_player
from tests.casino.test_deploy import manage, production_env

PRINT_SETTINGS = (
    "import json; from django.conf import settings as s; print(json.dumps({n: getattr(s, n) "
    "for n in ['SESSION_COOKIE_SECURE', 'SESSION_COOKIE_HTTPONLY', 'SESSION_COOKIE_SAMESITE', "
    "'CSRF_COOKIE_SECURE', 'CSRF_COOKIE_SAMESITE', 'SECURE_SSL_REDIRECT', "
    "'SECURE_HSTS_SECONDS', 'DEBUG']}))"
)


def test_production_cookies_are_secure_http_only_and_same_site_lax() -> None:
    result = manage("shell", "-c", PRINT_SETTINGS, env=production_env())
    assert result.returncode == 0, result.stderr
    values = json.loads(result.stdout.strip().splitlines()[-1])
    assert values == {
        "SESSION_COOKIE_SECURE": True,
        "SESSION_COOKIE_HTTPONLY": True,
        "SESSION_COOKIE_SAMESITE": "Lax",
        "CSRF_COOKIE_SECURE": True,
        "CSRF_COOKIE_SAMESITE": "Lax",
        "SECURE_SSL_REDIRECT": True,
        "SECURE_HSTS_SECONDS": 31536000,
        "DEBUG": False,
    }


@pytest.fixture
def browser(db: None, settings: Any) -> tuple[APIClient, Any, str]:
    """A browser-like client (CSRF checks on) logged in with a session; its CSRF token."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    user = make_player()
    client = APIClient(enforce_csrf_checks=True)
    login = client.post(
        "/api/auth/login/", {"username": user.username, "password": PASSWORD}, format="json"
    )
    assert login.status_code == 200
    session = login.cookies["sessionid"]
    assert session["httponly"] is True and session["samesite"] == "Lax"
    return client, user, login.json()["csrf_token"]


def test_a_session_post_without_the_csrf_token_is_403_and_changes_nothing(
    browser: tuple[APIClient, Any, str],
) -> None:
    client, user, _ = browser
    refused = client.post(
        "/api/tables/personal/", {"ruleset": "classic"}, format="json", HTTP_IDEMPOTENCY_KEY="c1"
    )
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "permission_denied"
    assert "CSRF" in refused.json()["error"]["message"]
    assert not Table.objects.filter(owner=user).exists()
    patched = client.patch("/api/me/preferences/", {"felt": "red"}, format="json")
    assert patched.status_code == 403
    assert not PlayerPreferences.objects.filter(user=user, felt="red").exists()


def test_a_session_post_with_the_csrf_token_goes_through(
    browser: tuple[APIClient, Any, str],
) -> None:
    client, user, csrf = browser
    accepted = client.post(
        "/api/tables/personal/",
        {"ruleset": "classic"},
        format="json",
        HTTP_IDEMPOTENCY_KEY="c2",
        HTTP_X_CSRFTOKEN=csrf,
    )
    assert accepted.status_code == 200, accepted.content
    assert Table.objects.get(owner=user).pk == accepted.json()["id"]
    read = client.get("/api/me/preferences/")  # safe methods need no token
    assert read.status_code == 200


def test_a_token_needs_no_csrf_token(db: None) -> None:
    user = make_player()
    client = APIClient(enforce_csrf_checks=True)

    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    response = client.patch("/api/me/preferences/", {"felt": "red"}, format="json")
    assert response.status_code == 200
    assert response.json()["felt"] == "red"
