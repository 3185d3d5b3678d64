"""One token per login (issue 21): each device has its own, logout revokes only its own.

There was one DRF token per user, shared by every login: logging out anywhere revoked it
everywhere (while the other sessions stayed logged in). Every login now makes its own token
(`casino.models.LoginToken`, only a digest stored); `GET /api/auth/tokens/` lists them,
`DELETE /api/auth/tokens/<id>/` revokes one, and logout revokes the token (or the session's
token) it came with. DRF's own tokens (scripts, `drf_create_token`) still authenticate.
"""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from casino.models import LoginToken
from tests.api.conftest import PASSWORD, make_player
from tests.ws.common import run, seated_table

pytestmark = pytest.mark.django_db


def login(user: Any, agent: str = "test-device") -> tuple[APIClient, str]:
    """A device: its client (with the session cookie) and its token."""
    client = APIClient(HTTP_USER_AGENT=agent)
    answer = client.post(
        "/api/auth/login/", {"username": user.username, "password": PASSWORD}, format="json"
    )
    assert answer.status_code == 200, answer.content
    return client, str(answer.json()["token"])


def bearer(token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return client


def me(client: APIClient) -> int:
    return int(client.get("/api/auth/me/").status_code)


def test_every_login_gets_its_own_token_and_only_a_digest_is_stored() -> None:
    user = make_player(funds=0)
    _, phone = login(user, "phone")
    _, laptop = login(user, "laptop")
    assert phone != laptop and len(phone) == len(laptop) == 48
    assert me(bearer(phone)) == me(bearer(laptop)) == 200
    rows = list(LoginToken.objects.filter(user=user).order_by("created", "id"))
    assert [r.user_agent for r in rows] == ["phone", "laptop"]
    assert [r.digest for r in rows] == [
        hashlib.sha256(k.encode()).hexdigest() for k in (phone, laptop)
    ]
    assert [r.prefix for r in rows] == [phone[:8], laptop[:8]]
    assert not Token.objects.filter(user=user).exists()  # no shared token any more


def test_the_list_shows_every_token_and_marks_the_current_one() -> None:
    user = make_player(funds=0)
    _, phone = login(user, "phone")
    laptop_session, laptop = login(user, "laptop")
    listed = bearer(phone).get("/api/auth/tokens/").json()
    assert [(t["user_agent"], t["prefix"], t["current"]) for t in listed] == [
        ("phone", phone[:8], True),
        ("laptop", laptop[:8], False),
    ]
    assert set(listed[0]) == {"id", "prefix", "created", "user_agent", "current"}
    by_session = laptop_session.get("/api/auth/tokens/").json()  # the session's own token
    assert [t["current"] for t in by_session] == [False, True]
    other = make_player(funds=0)
    _, theirs = login(other)
    assert [t["prefix"] for t in bearer(theirs).get("/api/auth/tokens/").json()] == [theirs[:8]]


def test_logout_with_a_token_revokes_only_that_token() -> None:
    user = make_player(funds=0)
    phone_session, phone = login(user, "phone")
    laptop_session, laptop = login(user, "laptop")
    assert bearer(phone).post("/api/auth/logout/").status_code == 204
    assert me(bearer(phone)) == 401
    assert me(phone_session) == 401  # a login is its token and its session: both end
    assert me(bearer(laptop)) == 200
    assert me(laptop_session) == 200  # the other device's token and session stay
    assert LoginToken.objects.filter(user=user).count() == 1


def test_logout_of_a_session_revokes_that_login_s_token_only() -> None:
    user = make_player(funds=0)
    phone_session, phone = login(user, "phone")
    _, laptop = login(user, "laptop")
    csrf = phone_session.cookies["csrftoken"].value
    assert phone_session.post("/api/auth/logout/", HTTP_X_CSRFTOKEN=csrf).status_code == 204
    assert me(phone_session) == 401
    assert me(bearer(phone)) == 401
    assert me(bearer(laptop)) == 200


def test_one_token_is_revoked_by_its_id_and_nobody_else_s() -> None:
    user, other = make_player(funds=0), make_player(funds=0)
    _, phone = login(user, "phone")
    laptop_session, laptop = login(user, "laptop")
    _, theirs = login(other)
    laptop_id = LoginToken.objects.get(prefix=laptop[:8]).pk
    their_id = LoginToken.objects.get(prefix=theirs[:8]).pk
    refused = bearer(phone).delete(f"/api/auth/tokens/{their_id}/")
    assert refused.status_code == 404 and refused.json()["error"]["code"] == "not_found"
    assert me(bearer(theirs)) == 200
    assert bearer(phone).delete(f"/api/auth/tokens/{laptop_id}/").status_code == 204
    assert me(bearer(laptop)) == 401 and me(laptop_session) == 401
    assert me(bearer(phone)) == 200
    assert bearer(phone).delete(f"/api/auth/tokens/{laptop_id}/").status_code == 404
    assert APIClient().get("/api/auth/tokens/").status_code == 401


def test_a_drf_token_still_works_and_its_logout_revokes_only_it() -> None:
    user = make_player(funds=0)
    script = Token.objects.create(user=user).key
    _, phone = login(user)
    assert me(bearer(script)) == 200
    assert bearer(script).post("/api/auth/logout/").status_code == 204
    assert me(bearer(script)) == 401 and me(bearer(phone)) == 200


def test_a_player_keeps_at_most_the_configured_number_of_tokens(settings: Any) -> None:
    settings.AUTH_TOKENS_PER_USER = 3
    user = make_player(funds=0)
    tokens = [login(user, f"d{n}")[1] for n in range(5)]
    assert [me(bearer(t)) for t in tokens] == [401, 401, 200, 200, 200]  # the oldest went


@pytest.mark.django_db(transaction=True)
def test_a_revoked_token_is_refused_by_the_websocket() -> None:
    from channels.testing import WebsocketCommunicator

    from casino.live.consumers import CLOSE_BAD_TOKEN
    from casino.routing import websocket_application

    user = make_player()
    table = seated_table("duel_classic", 2, user)
    _, phone = login(user)
    _, laptop = login(user)
    assert bearer(phone).post("/api/auth/logout/").status_code == 204
    origin = [(b"origin", b"http://testserver")]

    async def scenario() -> None:
        gone = WebsocketCommunicator(
            websocket_application(), f"/ws/tables/{table.pk}/?token={phone}", headers=origin
        )
        assert (await gone.connect(timeout=10))[0]
        assert await gone.receive_output(timeout=10) == {
            "type": "websocket.close",
            "code": CLOSE_BAD_TOKEN,
        }
        good = WebsocketCommunicator(
            websocket_application(), f"/ws/tables/{table.pk}/?token={laptop}", headers=origin
        )
        assert (await good.connect(timeout=10))[0]
        hello = await good.receive_json_from(timeout=10)
        assert hello["role"] == "player" and hello["player_id"] == str(user.pk)
        await good.disconnect()

    run(scenario)
