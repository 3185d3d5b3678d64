"""Login and logout for players: a session cookie (browsers) and a token (scripts, bots)."""

from __future__ import annotations

from importlib import import_module
from typing import Any

from django.conf import settings
from django.contrib.auth import authenticate, login, logout
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.middleware.csrf import get_token
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.authentication import CSRFCheck
from rest_framework.authtoken.models import Token
from rest_framework.exceptions import PermissionDenied
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from casino.api.authentication import key_digest, new_login_key
from casino.api.common import GameApi
from casino.api.origins import origin_is_this_site
from casino.api.plumbing import user_pk
from casino.models import LoginToken
from casino.platform.errors import ApplicationError
from casino.platform.schema import ApiError


@extend_schema_serializer(component_name="Me")
class MeOut(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    username = serializers.CharField()
    is_staff = serializers.BooleanField()


_FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data", "text/plain")


def _no_response(request: HttpRequest) -> HttpResponse:  # CsrfViewMiddleware's get_response
    raise AssertionError("unused")


def login_csrf_check(request: HttpRequest) -> None:
    """Login CSRF: a page on another site must not log this browser into another account.

    Django's checks, as its own login applies them: a request that carries an `Origin` must
    come from this site (the Host it was sent to, scheme and port included, or one of
    CSRF_TRUSTED_ORIGINS); a form body (what a cross-site form can send without a CORS
    preflight) also needs the CSRF token, cookie and field or header. A JSON login without
    an `Origin` is a script's (a browser sends one with every cross-site POST, and cannot
    send JSON cross-site without a preflight this server never answers): it needs neither.
    """
    if getattr(request, "_dont_enforce_csrf_checks", False):  # Django's test client default
        return
    check = CSRFCheck(_no_response)
    origin = request.META.get("HTTP_ORIGIN")
    if origin is not None and not origin_is_this_site(
        origin, request.get_host(), secure=request.is_secure()
    ):
        raise PermissionDenied(
            f"CSRF Failed: Origin checking failed - {origin} does not match any trusted origins."
        )
    if (request.content_type or "").lower() in _FORM_TYPES:
        check.process_request(request)  # reads the CSRF cookie
        reason = check.process_view(request, _no_response, (), {})
        if reason:
            raise PermissionDenied(f"CSRF Failed: {reason}")


class LoginApi(APIView):
    """Log in: sets the session cookie and returns a token (`Authorization: Token <token>`)."""

    permission_classes = [AllowAny]
    authentication_classes: list[Any] = []  # the CSRF and Origin checks: login_csrf_check
    throttle_scope = "login"  # settings.THROTTLE_RATES: guessing passwords is rate-limited

    @extend_schema_serializer(component_name="LoginInput")
    class InputSerializer(serializers.Serializer[Any]):
        username = serializers.CharField(max_length=150)
        password = serializers.CharField(max_length=256, trim_whitespace=False)

    @extend_schema_serializer(component_name="Login")
    class OutputSerializer(serializers.Serializer[Any]):
        user = MeOut()
        token = serializers.CharField(help_text="this login's own token (one per login)")
        csrf_token = serializers.CharField(help_text="send as X-CSRFToken with session auth")

    @extend_schema(
        operation_id="auth_login",
        request=InputSerializer,
        responses={
            200: OutputSerializer,
            401: OpenApiResponse(ApiError, description="Wrong username or password."),
            403: OpenApiResponse(
                ApiError,
                description="CSRF: an Origin that is not this site, or a form body without "
                "the CSRF token (permission_denied).",
            ),
        },
        auth=[],
    )
    def post(self, request: Request) -> Response:
        login_csrf_check(request._request)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        user = authenticate(
            request._request,
            username=data.validated_data["username"],
            password=data.validated_data["password"],
        )
        if user is None or not user.is_active:
            raise ApplicationError(
                "Wrong username or password.", code="authentication_failed", status_code=401
            )
        login(request._request, user)
        session = request._request.session
        key, token = login_token_create(
            user=user,
            user_agent=request.headers.get("User-Agent", ""),
            session_key=session.session_key or "",
        )
        session[SESSION_TOKEN_ID] = token.pk
        body = {"user": user, "token": key, "csrf_token": get_token(request._request)}
        return Response(self.OutputSerializer(body).data)


SESSION_TOKEN_ID = "casino_login_token_id"  # the session's own token: its logout revokes it


def login_token_create(
    *, user: Any, user_agent: str = "", session_key: str = ""
) -> tuple[str, LoginToken]:
    """A new token for one login (its key, shown once, and its row); the oldest beyond
    settings.AUTH_TOKENS_PER_USER are revoked."""
    key = new_login_key()
    with transaction.atomic():
        token = LoginToken.objects.create(
            user=user,
            digest=key_digest(key),
            prefix=key[:8],
            user_agent=user_agent[:200],
            session_key=session_key,
        )
        keep = int(getattr(settings, "AUTH_TOKENS_PER_USER", 50))
        stale = LoginToken.objects.filter(user=user).order_by("-created", "-id")[keep:]
        login_tokens_revoke(
            LoginToken.objects.filter(pk__in=list(stale.values_list("pk", flat=True)))
        )
    return key, token


def login_tokens_revoke(tokens: QuerySet[LoginToken]) -> int:
    """Revoke these login tokens and end their logins' sessions; how many were revoked."""
    sessions = [k for k in tokens.values_list("session_key", flat=True) if k]
    deleted, _ = tokens.delete()
    store = import_module(settings.SESSION_ENGINE).SessionStore
    for session_key in sessions:
        store(session_key=session_key).delete()
    return deleted


def current_token_id(request: Request) -> int | None:
    """The login token this request came with, or its session's own (None: neither)."""
    if isinstance(request.auth, LoginToken):
        return int(request.auth.pk)
    session = getattr(request._request, "session", None)
    found = session.get(SESSION_TOKEN_ID) if session is not None else None
    return int(found) if isinstance(found, int) else None


class LogoutApi(GameApi):
    """Log out: ends the session and revokes this login's token only (other devices stay)."""

    @extend_schema(operation_id="auth_logout", request=None, responses={204: None})
    def post(self, request: Request) -> Response:
        if isinstance(request.auth, Token):  # a DRF token (scripts): the one this came with
            Token.objects.filter(pk=request.auth.pk).delete()
        token_id = current_token_id(request)
        if token_id is not None:
            login_tokens_revoke(LoginToken.objects.filter(pk=token_id, user_id=user_pk(request)))
        logout(request._request)
        return Response(status=204)


@extend_schema_serializer(component_name="LoginTokenInfo")
class TokenOut(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    prefix = serializers.CharField(help_text="the token's first characters")
    created = serializers.DateTimeField()
    user_agent = serializers.CharField(help_text="the User-Agent of the login that made it")
    current = serializers.BooleanField(help_text="the token of this request (or its session)")


class TokenListApi(GameApi):
    """Your login tokens, one per login (device), oldest first."""

    @extend_schema(operation_id="auth_tokens", responses=TokenOut(many=True))
    def get(self, request: Request) -> Response:
        current = current_token_id(request)
        tokens = LoginToken.objects.filter(user_id=user_pk(request)).order_by("created", "id")
        return Response(
            [
                TokenOut(
                    {
                        "id": t.pk,
                        "prefix": t.prefix,
                        "created": t.created,
                        "user_agent": t.user_agent,
                        "current": t.pk == current,
                    }
                ).data
                for t in tokens
            ]
        )


class TokenRevokeApi(GameApi):
    """Revoke one of your login tokens: that login (its token and its session) is logged out."""

    @extend_schema(
        operation_id="auth_token_revoke",
        responses={
            204: None,
            404: OpenApiResponse(ApiError, description="not_found: not one of your tokens"),
        },
    )
    def delete(self, request: Request, token_id: int) -> Response:
        mine = LoginToken.objects.filter(pk=token_id, user_id=user_pk(request))
        if not login_tokens_revoke(mine):
            raise ApplicationError("No such token.", code="not_found", status_code=404)
        return Response(status=204)


class MeApi(GameApi):
    """Who you are: your user id (the `player_id` of your seats in round views), username and
    whether you are staff."""

    @extend_schema(operation_id="auth_me", responses=MeOut)
    def get(self, request: Request) -> Response:
        return Response(MeOut(request.user).data)
