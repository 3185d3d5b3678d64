"""One error type for business errors and one JSON error shape for every API error.

Every error response is `{"error": {"code": str, "message": str, "details": {...}}}`.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from casino.platform.unreachable import REDIS_UNREACHABLE


class ApplicationError(Exception):
    """A business error with a stable code, mapped to one HTTP status."""

    status_code: int = status.HTTP_400_BAD_REQUEST

    def __init__(
        self,
        message: str,
        *,
        code: str = "bad_request",
        status_code: int | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        if status_code is not None:
            self.status_code = status_code
        self.extra = extra or {}


class ConflictError(ApplicationError):
    status_code: int = status.HTTP_409_CONFLICT


class NotYours(ApplicationError):
    """A resource the caller may not act on (404 none, 403 not theirs), found inside a
    command's transaction: the transaction rolls back and no Idempotency-Key answer is
    recorded, as when the check runs before it."""


def error_body(code: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "details": details or {}}}


_DRF_CODES = {
    exceptions.NotAuthenticated: "not_authenticated",
    exceptions.AuthenticationFailed: "authentication_failed",
    exceptions.PermissionDenied: "permission_denied",
    exceptions.NotFound: "not_found",
    exceptions.MethodNotAllowed: "method_not_allowed",
    exceptions.NotAcceptable: "not_acceptable",
    exceptions.UnsupportedMediaType: "unsupported_media_type",
    exceptions.Throttled: "throttled",
    exceptions.ParseError: "malformed_request",
    exceptions.ValidationError: "invalid_input",
}


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """Map every error to the one JSON shape; unknown exceptions stay 500s (and are logged)."""
    if isinstance(exc, ApplicationError):
        return Response(error_body(exc.code, exc.message, exc.extra), status=exc.status_code)
    if isinstance(exc, REDIS_UNREACHABLE):
        return Response(
            error_body("service_unavailable", "A backing service is restarting; retry shortly."),
            status=status.HTTP_503_SERVICE_UNAVAILABLE,
            headers={"Retry-After": "5"},
        )
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied()
    elif isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(detail=exc.messages)
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    code = next((c for cls, c in _DRF_CODES.items() if isinstance(exc, cls)), "error")
    if isinstance(exc, exceptions.ValidationError):
        message = "The request is not valid."
        details = {"fields": response.data}
    else:
        detail = response.data.get("detail", "") if isinstance(response.data, dict) else ""
        message = str(detail) or code.replace("_", " ")
        details = {}
    response.data = error_body(code, message, details)
    return response
