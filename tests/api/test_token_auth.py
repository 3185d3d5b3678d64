"""The API's token check gives what DRF's own TokenAuthentication gives, in one raw lookup."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework import authentication as drf
from rest_framework.authtoken.models import Token
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.test import APIClient

from casino.api.authentication import TokenAuthentication
from tests.api.conftest import make_player

pytestmark = pytest.mark.django_db


def _fields(instance: Any) -> dict[str, Any]:
    return {f.attname: getattr(instance, f.attname) for f in instance._meta.concrete_fields}


def test_the_token_lookup_equals_drfs_in_one_statement() -> None:
    player = make_player(staff=True)
    key = Token.objects.create(user=player).key
    with CaptureQueriesContext(connection) as queries:
        user, token = TokenAuthentication().authenticate_credentials(key)
    assert len(queries) == 1
    their_user, their_token = drf.TokenAuthentication().authenticate_credentials(key)
    assert type(user) is type(their_user) and _fields(user) == _fields(their_user)
    assert type(token) is Token and _fields(token) == _fields(their_token)
    assert token.user is user and not user._state.adding and user._state.db == "default"
    assert not hasattr(user, "_token_created")


def test_a_wrong_or_inactive_token_is_refused_like_drf() -> None:
    player = make_player()
    key = Token.objects.create(user=player).key
    with pytest.raises(AuthenticationFailed) as wrong:
        TokenAuthentication().authenticate_credentials("nope")
    assert str(wrong.value.detail) == "Invalid token."
    player.is_active = False
    player.save()
    with pytest.raises(AuthenticationFailed) as inactive:
        TokenAuthentication().authenticate_credentials(key)
    assert str(inactive.value.detail) == "User inactive or deleted."


def test_the_game_api_answers_a_token_and_a_bad_token_is_a_401() -> None:
    player = make_player()
    key = Token.objects.create(user=player).key
    client = APIClient()
    me = client.get("/api/auth/me/", HTTP_AUTHORIZATION=f"Token {key}")
    assert me.status_code == 200 and me.json()["id"] == player.pk
    bad = client.get("/api/auth/me/", HTTP_AUTHORIZATION="Token x" + key[1:])
    assert bad.status_code == 401 and bad.headers["WWW-Authenticate"] == "Token"
