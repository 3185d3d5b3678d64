"""Login CSRF (issue 21): a cross-site page must not log a browser into another account.

The session login took a form-encoded POST from any Origin, without a CSRF token: a page on
another site could submit a hidden form and log the visitor's browser into the attacker's
account (which then records the visitor's play). The login now applies Django's checks:

- a request that carries an `Origin` must come from this site (the Host it was sent to, or
  one of CSRF_TRUSTED_ORIGINS; the port counts);
- a form body (urlencoded or multipart: what a cross-site form can send without a CORS
  preflight) also needs the CSRF token (the `csrftoken` cookie with `csrfmiddlewaretoken` or
  `X-CSRFToken`), as Django's own login does;
- a JSON login without an `Origin` (a script: curl, bots) needs neither, as before.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.middleware.csrf import _get_new_csrf_string, _mask_cipher_secret
from rest_framework.test import APIClient

from tests.api.conftest import PASSWORD, make_player

pytestmark = pytest.mark.django_db


@pytest.fixture
def user(settings: Any) -> Any:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return make_player(funds=0)


def browser() -> APIClient:
    return APIClient(enforce_csrf_checks=True)  # as a browser: Django's CSRF checks apply


def refused(response: Any) -> None:
    assert response.status_code == 403, response.content
    error = response.json()["error"]
    assert error["code"] == "permission_denied" and "CSRF" in error["message"]
    assert "sessionid" not in response.cookies
    assert "token" not in response.json()


def logged_in(response: Any) -> None:
    assert response.status_code == 200, response.content
    assert response.json()["token"] and "sessionid" in response.cookies


def form(user: Any, **extra: str) -> dict[str, str]:
    return {"username": user.username, "password": PASSWORD, **extra}


@pytest.mark.parametrize(
    "origin", ["https://evil.example", "http://testserver.evil.example", "http://testserver:9999"]
)
def test_a_cross_site_form_login_is_refused(user: Any, origin: str) -> None:
    client = browser()
    refused(client.post("/api/auth/login/", form(user), HTTP_ORIGIN=origin))
    refused(client.post("/api/auth/login/", form(user), format="multipart", HTTP_ORIGIN=origin))
    assert client.get("/api/auth/me/").status_code == 401  # nobody is logged in


def test_a_form_login_without_origin_needs_the_csrf_token(user: Any) -> None:
    refused(browser().post("/api/auth/login/", form(user)))  # an old browser sends no Origin


def test_a_cross_site_json_login_is_refused(user: Any) -> None:
    refused(
        browser().post(
            "/api/auth/login/", form(user), format="json", HTTP_ORIGIN="https://evil.example"
        )
    )


def test_a_same_site_form_login_with_the_csrf_token_goes_through(user: Any) -> None:
    client = browser()
    secret = _get_new_csrf_string()
    client.cookies["csrftoken"] = _mask_cipher_secret(secret)
    token = _mask_cipher_secret(secret)
    logged_in(
        client.post(
            "/api/auth/login/",
            form(user, csrfmiddlewaretoken=token),
            HTTP_ORIGIN="http://testserver",
        )
    )
    assert client.get("/api/auth/me/").json()["username"] == user.username


def test_a_same_site_json_login_needs_no_token(user: Any) -> None:
    logged_in(
        browser().post(
            "/api/auth/login/", form(user), format="json", HTTP_ORIGIN="http://testserver"
        )
    )


def test_a_script_s_json_login_needs_neither(user: Any) -> None:
    logged_in(browser().post("/api/auth/login/", form(user), format="json"))


def test_a_trusted_origin_is_accepted(user: Any, settings: Any) -> None:
    settings.CSRF_TRUSTED_ORIGINS = ["https://play.example"]
    logged_in(
        browser().post(
            "/api/auth/login/", form(user), format="json", HTTP_ORIGIN="https://play.example"
        )
    )
