"""casino.api.plumbing.JSONParser gives DRF's JSONParser's value or its very error."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rest_framework import parsers
from rest_framework.exceptions import ParseError

from casino.api.plumbing import JSONParser

documents = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=20,
)


def _both(raw: bytes) -> tuple[Any, Any]:
    def run(parser: Any) -> Any:
        try:
            return ("ok", parser.parse(io.BytesIO(raw), "application/json", {}))
        except ParseError as error:
            return ("error", str(error.detail))

    return run(JSONParser()), run(parsers.JSONParser())


@settings(max_examples=400, deadline=None)
@given(documents)
def test_a_document_parses_to_the_same_value(document: Any) -> None:
    raw = json.dumps(document, ensure_ascii=False).encode()
    ours, drfs = _both(raw)
    assert ours == drfs and ours[0] == "ok"


@pytest.mark.parametrize(
    "raw",
    [
        b'{"a": 1, "a": 2}',
        b'{"s": "\\ud83d\\ude00"}',  # a pair of escapes: one character (a lone one is refused,
        # tests/api/test_lone_surrogates.py)
        b"[1e400]",  # overflows to infinity in json
        b"NaN",
        b'{"x": Infinity}',
        b"\xef\xbb\xbf{}",
        b'{"a": }',
        b"\xff\xfe",
        b"",
        b"[-9223372036854775809, 18446744073709551616]",  # past 64 bits: orjson gives floats
        b'{"id": "12345678901234567890"}',  # a long digit run in a string: DRF's parser too
    ],
)
def test_odd_bodies_get_drfs_value_or_error(raw: bytes) -> None:
    ours, drfs = _both(raw)
    assert ours == drfs


def test_a_document_nested_too_deeply_is_a_400_not_a_500() -> None:
    raw = b'{"deep": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    with pytest.raises(RecursionError):  # DRF's own parser
        parsers.JSONParser().parse(io.BytesIO(raw), "application/json", {})
    with pytest.raises(ParseError, match="nested too deeply"):
        JSONParser().parse(io.BytesIO(raw), "application/json", {})


def test_other_charsets_go_to_drf() -> None:
    raw = '{"name": "é"}'.encode("latin-1")
    context = {"encoding": "latin-1"}
    assert JSONParser().parse(io.BytesIO(raw), "application/json", context) == {"name": "é"}
