"""The project's OpenAPI schema generator.

Views follow the HackSoft pattern: each APIView nests its own `InputSerializer` and
`OutputSerializer`. drf-spectacular names components by class name alone, so every view's
"Input" and "Output" would collide; components are named after the view instead
(`StaffDepositApi.InputSerializer` -> `StaffDepositApiInput`).
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema
from drf_spectacular.utils import extend_schema_serializer, inline_serializer
from rest_framework import serializers
from rest_framework.permissions import AllowAny, IsAuthenticated


class AutoSchema(SpectacularAutoSchema):
    def get_serializer_name(self, serializer: Any, direction: Any) -> str:
        cls = type(serializer)
        parts = cls.__qualname__.split(".")
        if len(parts) >= 2 and parts[-2] != "<locals>":
            return parts[-2] + parts[-1].removesuffix("Serializer")
        return str(cls.__name__)

    # Error answers (issue 9, Schemathesis): every operation documents the errors it can give,
    # all in the one JSON error shape of casino/platform/errors.py. An explicit `responses`
    # entry wins.
    def get_operation(self, *args: Any, **kwargs: Any) -> Any:
        operation = super().get_operation(*args, **kwargs)
        if operation is None:
            return None
        responses = operation.setdefault("responses", {})
        for status in self._error_statuses(operation):
            if str(status) not in responses:
                body = self._get_response_for_code(ApiError, str(status))  # type: ignore[no-untyped-call]
                body["description"] = ERROR_DESCRIPTIONS[status]
                responses[str(status)] = body
        return operation

    def _error_statuses(self, operation: dict[str, Any]) -> list[int]:
        view = self.view
        params = operation.get("parameters", [])
        unsafe = self.method not in ("GET", "HEAD", "OPTIONS")
        authenticators = view.get_authenticators()
        permissions = view.get_permissions()
        restricted = any(not isinstance(p, AllowAny) for p in permissions)
        idempotent = any(p["in"] == "header" and p["name"] == "Idempotency-Key" for p in params)
        statuses = []
        if unsafe or params or "requestBody" in operation:
            statuses.append(400)
        if authenticators:  # a wrong or revoked token is refused even where anyone may read
            statuses.append(401)
        if restricted and (
            unsafe
            or any(not isinstance(p, (AllowAny, IsAuthenticated)) for p in permissions)
            or any(p["in"] == "path" for p in params)
        ):
            statuses.append(403)  # not your role or not your round; CSRF with session auth
        if any(p["in"] == "path" for p in params):
            statuses.append(404)
        if idempotent:
            statuses += [409, 422]  # a conflict or the wrong turn; an Idempotency-Key reused
        if "requestBody" in operation:
            statuses.append(415)  # a body in a media type the view does not parse
        if unsafe and getattr(view, "throttle_scope", None):
            statuses.append(429)
        return statuses


@extend_schema_serializer(component_name="ApiErrorBody")
class _ApiErrorBody(serializers.Serializer[Any]):
    code = serializers.CharField(help_text="stable machine-readable code, e.g. not_found")
    message = serializers.CharField()
    details = serializers.DictField()


@extend_schema_serializer(component_name="ApiError")
class ApiError(serializers.Serializer[Any]):
    """The one error shape: `{"error": {"code", "message", "details"}}`."""

    error = _ApiErrorBody()


ERROR_DESCRIPTIONS = {
    400: "Bad input: invalid_input, malformed_request, idempotency_key_required, ...",
    401: "Not authenticated, or a wrong or revoked credential.",
    403: "Not allowed: the wrong role, not your round or table, or a missing CSRF token.",
    404: "No such resource.",
    409: "A conflict: the round's state or turn does not allow it now (retry may succeed).",
    415: "Unsupported media type: send JSON (or a form) as the operation says.",
    422: "The Idempotency-Key was already used with another body.",
    429: "Rate limited (settings.THROTTLE_RATES); retry after the Retry-After header.",
}


def paginated(child: type[serializers.Serializer[Any]], name: str) -> Any:
    """The schema of a LimitOffsetPagination page of `child` (views that paginate by hand)."""
    return inline_serializer(
        name,
        {
            "count": serializers.IntegerField(),
            "next": serializers.URLField(allow_null=True),
            "previous": serializers.URLField(allow_null=True),
            "results": child(many=True),
        },
    )
