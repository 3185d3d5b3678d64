"""Login and logout for players: a session cookie (browsers) and a token (scripts, bots)."""

from __future__ import annotations

from typing import Any, cast

from django.contrib.auth import authenticate, login, logout
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

from casino.api.common import GameApi
from casino.errors import ApplicationError
from casino.schema import ApiError


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
    if origin is not None and not cast(Any, check)._origin_verified(request):
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
        token = serializers.CharField()
        csrf_token = serializers.CharField(help_text="send as X-CSRFToken with session auth")

    @extend_schema(
        operation_id="auth_login",
        request=InputSerializer,
        responses={
            200: OutputSerializer,
            401: OpenApiResponse(ApiError, description="Wrong username or password."),
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
        token, _ = Token.objects.get_or_create(user=user)
        body = {"user": user, "token": token.key, "csrf_token": get_token(request._request)}
        return Response(self.OutputSerializer(body).data)


class LogoutApi(GameApi):
    """Log out: ends the session and revokes the token."""

    @extend_schema(operation_id="auth_logout", request=None, responses={204: None})
    def post(self, request: Request) -> Response:
        Token.objects.filter(user=request.user).delete()  # type: ignore[misc]
        logout(request._request)
        return Response(status=204)


class MeApi(GameApi):
    @extend_schema(operation_id="auth_me", responses=MeOut)
    def get(self, request: Request) -> Response:
        return Response(MeOut(request.user).data)
