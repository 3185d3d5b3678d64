"""Every error under /api/ is JSON in the one shape, in demo mode (DEBUG) and not (issue 21).

Django answered some of them with its own HTML pages: the technical 404 page in DEBUG (a
negative table id, an unknown path), a body over DATA_UPLOAD_MAX_MEMORY_SIZE (a 400 page) and
any unexpected exception (the 500 page). `casino.api.plumbing.ApiErrorMiddleware` shapes
them; a body too large is a 413.
"""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from casino.rounds import selectors
from tests.api.conftest import make_player

pytestmark = pytest.mark.django_db

BIG = 3 * 1024 * 1024  # over Django's default 2.5 MB


@pytest.fixture(params=[True, False], ids=["debug", "production"])
def client(request: Any, settings: Any) -> APIClient:
    settings.DEBUG = request.param
    client = APIClient(raise_request_exception=False)
    client.force_authenticate(make_player())
    return client


def _error(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.content[:300]
    assert response["Content-Type"] == "application/json", response.content[:300]
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "details"}
    assert body["error"]["code"] == code and body["error"]["message"]
    return dict(body["error"])


@pytest.mark.parametrize("path", ["/api/tables/-1/", "/api/no-such-thing/", "/api/tables/x/"])
def test_an_unknown_api_path_is_a_json_404(client: APIClient, path: str) -> None:
    _error(client.get(path), 404, "not_found")
    _error(client.post(path, {}, format="json"), 404, "not_found")


def test_a_method_the_view_does_not_take_is_a_json_405(client: APIClient) -> None:
    response = client.delete("/api/tables/")
    _error(response, 405, "method_not_allowed")
    assert "GET" in response["Allow"]


@pytest.mark.parametrize(
    ("path", "content_type", "body"),
    [
        ("/api/tables/personal/", "application/json", b'{"ruleset": "' + b"x" * BIG + b'"}'),
        ("/api/tables/personal/", "application/x-www-form-urlencoded", b"ruleset=" + b"x" * BIG),
        ("/api/auth/login/", "application/json", b'{"username": "' + b"x" * BIG + b'"}'),
        ("/api/wallet/faucet/", "application/json", b'{"amount": "' + b"1" * BIG + b'"}'),
    ],
)
def test_a_body_over_the_size_limit_is_a_json_413(
    client: APIClient, path: str, content_type: str, body: bytes
) -> None:
    response = client.post(path, body, content_type=content_type, HTTP_IDEMPOTENCY_KEY="big-1")
    _error(response, 413, "request_too_large")


def test_an_unexpected_exception_is_a_json_500(
    client: APIClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(**kwargs: Any) -> Any:
        raise RuntimeError("a malfunction")

    monkeypatch.setattr(selectors, "tables_list", broken)
    error = _error(client.get("/api/tables/"), 500, "internal_error")
    assert "malfunction" not in error["message"]  # nothing of the exception leaks


def test_pages_outside_the_api_keep_django_s_answers(client: APIClient) -> None:
    response = client.get("/no-such-page/")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")
