"""The API's plumbing: what settings name (how a request's body is read, how an error under
/api/ answers), and a view's caller.

- `JSONParser` (DRF's `DEFAULT_PARSER_CLASSES`): request bodies, UTF-8 JSON read by orjson.
- `ApiErrorMiddleware` (outermost in `MIDDLEWARE`): every error under /api/ in the one JSON
  error shape.
- `request_user`, `user_pk`: a view's authenticated caller (the game views require one).

DRF imports its parser classes while `rest_framework.views` is still being defined, so this
module imports no view, nor anything that does (`casino.platform.errors` only when an error
answers).
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Mapping
from http import HTTPStatus
from typing import IO, TYPE_CHECKING, Any, cast

import orjson
from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponseBase, JsonResponse
from rest_framework import parsers
from rest_framework.exceptions import ParseError

if TYPE_CHECKING:  # types only: DRF imports this module before views and the auth models
    from django.contrib.auth.models import AbstractBaseUser
    from rest_framework.request import Request

# Request bodies ---------------------------------------------------------------------------

_LONG_DIGITS = re.compile(rb"[0-9]{19}")  # maybe an integer orjson would read as a float
_SURROGATE = re.compile("[\ud800-\udfff]")
LONE_SURROGATE_MESSAGE = (
    "JSON parse error - a string holds a lone surrogate escape (\\ud800-\\udfff), "
    "which is not Unicode text."
)


def has_lone_surrogate(value: Any) -> bool:
    """Whether a parsed JSON value holds a lone surrogate (U+D800-U+DFFF) in a string or key.

    The standard library's parser takes `"\\ud800"` as a one-character string that is not
    Unicode text: it cannot be written as UTF-8 (nor stored in PostgreSQL's text), and an
    error that echoed it made the renderer fail (a 500). A pair of escapes forms one real
    character and is fine."""
    pending = [value]  # a loop, not recursion: a document may be nested as deep as json allows
    while pending:
        item = pending.pop()
        kind = type(item)
        if kind is str:
            if _SURROGATE.search(item) is not None:
                return True
        elif kind is dict:
            pending.extend(item)
            pending.extend(item.values())
        elif kind is list:
            pending.extend(item)
    return False


class JSONParser(parsers.JSONParser):
    """Request bodies: DRF's JSON parser, with UTF-8 JSON parsed by orjson.

    orjson gives the same values as the standard library for every document it accepts (strict
    RFC 8259 JSON: objects, arrays, strings, 64-bit integers, floats correctly rounded, the last
    of duplicate keys). It refuses a few things the standard library takes (lone surrogate
    escapes, numbers that overflow to infinity) and everything invalid; it reads an integer past
    64 bits as a float, so a body with a run of 19 digits or more is not given to it. Those
    bodies go to DRF's own parser, so their values and every parse error stay DRF's
    (tests/api/test_parsers.py). A game request's body was parsed through a codecs reader and
    `json.load`.

    Two differences on purpose: a document nested too deeply for the standard library's
    recursion (DRF's parser raised RecursionError: a 500) is a 400 parse error here, and so is a
    string (or key) holding a lone surrogate escape such as `"\\ud800"`, which the standard library
    takes but which is not Unicode text (an error echoing it made DRF's renderer fail: a 500).
    """

    def parse(
        self,
        stream: IO[Any],
        media_type: str | None = None,
        parser_context: Mapping[str, Any] | None = None,
    ) -> Any:
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        if str(encoding).lower().replace("-", "").replace("_", "") != "utf8":
            return _text_only(super().parse(stream, media_type, parser_context))
        raw = stream.read()
        if _LONG_DIGITS.search(raw) is None:
            try:
                return orjson.loads(raw)  # never a lone surrogate: orjson refuses them
            except orjson.JSONDecodeError:  # DRF's parser decides (its value or its error)
                pass
        try:
            return _text_only(super().parse(io.BytesIO(raw), media_type, parser_context))
        except RecursionError:
            raise ParseError("JSON parse error - the document is nested too deeply.") from None


def _text_only(value: Any) -> Any:
    if has_lone_surrogate(value):
        raise ParseError(LONE_SURROGATE_MESSAGE)
    return value


# Errors under /api/ -----------------------------------------------------------------------

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
    # Here, not at the top: casino.platform.errors imports rest_framework.views, which DRF is
    # still defining when it imports this module's parser (DEFAULT_PARSER_CLASSES).
    from casino.platform.errors import error_body

    code, message = _CODES.get(status, ("", ""))
    if not code:
        try:
            phrase = HTTPStatus(status).phrase
        except ValueError:  # a status the standard library does not name
            phrase = "Error"
        code, message = phrase.lower().replace(" ", "_").replace("-", "_"), f"{phrase}."
    return JsonResponse(error_body(code, message), status=status)


class ApiErrorMiddleware:
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


# The caller ---------------------------------------------------------------------------------


def user_pk(request: Request) -> int:
    pk = request.user.pk
    assert pk is not None  # the views require an authenticated user
    return int(pk)


def request_user(request: Request) -> AbstractBaseUser:
    """The authenticated caller (the views require authentication)."""
    return cast("AbstractBaseUser", request.user)
