"""Login and logout for players: a session cookie (browsers) and a token (scripts, bots)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import authenticate, login, logout
from django.middleware.csrf import get_token
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.authtoken.models import Token
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


class LoginApi(APIView):
    """Log in: sets the session cookie and returns a token (`Authorization: Token <token>`)."""

    permission_classes = [AllowAny]
    authentication_classes: list[Any] = []  # no CSRF check on the way in
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
