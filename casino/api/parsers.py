"""Request bodies: DRF's JSON parser, with UTF-8 JSON parsed by orjson.

orjson gives the same values as the standard library for every document it accepts (strict
RFC 8259 JSON: objects, arrays, strings, 64-bit integers, floats correctly rounded, the last
of duplicate keys). It refuses a few things the standard library takes (lone surrogate
escapes, numbers that overflow to infinity) and everything invalid; it reads an integer past
64 bits as a float, so a body with a run of 19 digits or more is not given to it. Those
bodies go to DRF's own parser, so their values and every parse error stay DRF's
(tests/api/test_parsers.py). A game request's body was parsed through a codecs reader and
`json.load`.

One difference on purpose: a document nested too deeply for the standard library's
recursion (DRF's parser raised RecursionError: a 500) is a 400 parse error here.
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


class JSONParser(parsers.JSONParser):
    def parse(
        self,
        stream: IO[Any],
        media_type: str | None = None,
        parser_context: Mapping[str, Any] | None = None,
    ) -> Any:
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        if str(encoding).lower().replace("-", "").replace("_", "") != "utf8":
            return super().parse(stream, media_type, parser_context)
        raw = stream.read()
        if _LONG_DIGITS.search(raw) is None:
            try:
                return orjson.loads(raw)
            except orjson.JSONDecodeError:  # DRF's parser decides (its value or its error)
                pass
        try:
            return super().parse(io.BytesIO(raw), media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - the document is nested too deeply.") from None
