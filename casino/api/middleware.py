"""Every error under /api/ answers in the one JSON error shape, in DEBUG and not.

DRF's exception handler (`casino.platform.errors`) shapes what a view raises. What it never sees
answered in Django's HTML: an unknown URL in DEBUG (the technical 404 page), a body over
`DATA_UPLOAD_MAX_MEMORY_SIZE` (`RequestDataTooBig`, a 400 page), any unexpected exception (the
500 page, the technical one in DEBUG), a 405 or 403 from a view that is not DRF's. This
middleware, outermost, turns every such answer under /api/ into
`{"error": {"code", "message", "details"}}` with the same status (413 for a body too large).
Django has logged the failure and sent `got_request_exception` first, as before; only the body
changes.
"""

from __future__ import annotations

from collections.abc import Callable
from http import HTTPStatus

from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponseBase, JsonResponse

from casino.platform.errors import error_body

API_PREFIX = "/api/"

_CODES = {
    400: ("bad_request", "The request could not be read."),
    403: ("permission_denied", "You do not have permission to perform this action."),
    404: ("not_found", "No such resource."),
    405: ("method_not_allowed", "This method is not allowed here."),
    413: ("request_too_large", "The request body is too large."),
    500: ("internal_error", "The server failed to answer this request."),
}


def _json_error(status: int) -> JsonResponse:
    code, message = _CODES.get(status, ("", ""))
    if not code:
        try:
            phrase = HTTPStatus(status).phrase
        except ValueError:  # a status the standard library does not name
            phrase = "Error"
        code, message = phrase.lower().replace(" ", "_").replace("-", "_"), f"{phrase}."
    return JsonResponse(error_body(code, message), status=status)


class ApiErrorMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        response = self.get_response(request)
        if (
            response.status_code < 400
            or not request.path.startswith(API_PREFIX)
            or "json" in response.get("Content-Type", "")
            or response.streaming
        ):
            return response
        status = response.status_code
        if status == 400 and getattr(request, "_api_body_too_large", False):
            status = 413
        answer = _json_error(status)
        for header in ("Allow", "Retry-After", "WWW-Authenticate", "Vary"):
            if header in response:
                answer[header] = response[header]
        for name, cookie in response.cookies.items():  # e.g. a session Django just saved
            answer.cookies[name] = cookie
        # Not `response.close()`: that sends `request_finished` (which closes the database
        # connections) a second time, before the server closes the answer sent; an error page
        # that is not streamed holds nothing else to release.
        return answer

    def process_exception(self, request: HttpRequest, exception: Exception) -> None:
        """Note a body over the size limit (Django answers it as a 400: it becomes a 413)."""
        if isinstance(exception, RequestDataTooBig):
            request._api_body_too_large = True  # type: ignore[attr-defined]
