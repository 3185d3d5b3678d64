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

from __future__ import annotations

import io
import re
from collections.abc import Mapping
from typing import IO, Any

import orjson
from django.conf import settings
from rest_framework import parsers
from rest_framework.exceptions import ParseError

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
