"""Answers of the game endpoints are rendered by orjson: the bytes DRF's JSONRenderer writes."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from rest_framework.renderers import JSONRenderer

from casino.api.commands import NativeJSONResponse

native = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=8)
    | st.sampled_from(["\u2028", "a\u2029b", "é", "</script>", "\x00"]),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=20,
)


def _rendered(data: Any, media_type: str = "application/json") -> tuple[bytes, str]:
    response = NativeJSONResponse(data)
    response.accepted_renderer = JSONRenderer()
    response.accepted_media_type = media_type
    response.renderer_context = {}
    return response.rendered_content, response["Content-Type"]


def _drf(data: Any, media_type: str = "application/json") -> bytes:
    return JSONRenderer().render(data, media_type, {})


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.text(max_size=6), native, max_size=5))
def test_an_answer_renders_as_drfs_json_renderer_byte_for_byte(data: dict[str, Any]) -> None:
    body, content_type = _rendered(data)
    assert body == _drf(data)
    assert content_type == "application/json"


def test_what_orjson_would_write_differently_goes_to_the_renderer() -> None:
    import datetime
    import decimal

    from casino.models import RoundStatus

    at = datetime.datetime(2026, 11, 30, 13, 5, 7, 123456, tzinfo=datetime.UTC)
    for data in (
        {"at": at},  # DRF: milliseconds and "Z"
        {"status": RoundStatus.OPEN},  # a str subclass
        {"amount": decimal.Decimal("1.50")},
        {"big": 2**80},
        {1: "int key"},
    ):
        assert _rendered(data)[0] == _drf(data)
    assert _rendered({"a": [1, 2]}, "application/json; indent=4")[0] == _drf(
        {"a": [1, 2]}, "application/json; indent=4"
    )
    assert b"\n" in _rendered({"a": [1, 2]}, "application/json; indent=4")[0]
