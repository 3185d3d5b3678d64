"""The game endpoints' fast body validation (casino.api.fastinput) gives exactly the DRF
serializer's validated data, or steps aside: every error stays the serializer's."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from casino.api import fastinput
from casino.api.rounds import (
    DoubleApi,
    EvenMoneyApi,
    HitApi,
    InsuranceApi,
    SplitApi,
    StandApi,
)
from casino.api.tables import TableDealApi

VIEWS = [HitApi, StandApi, DoubleApi, SplitApi, InsuranceApi, EvenMoneyApi, TableDealApi]

values = st.none() | st.booleans() | st.integers(-3, 5) | st.floats(allow_nan=False)
values |= st.sampled_from(["", "true", "1", "bet", "rebet", "double", "x", "1.00", "0", "2.5"])
values |= st.lists(
    st.sampled_from(["1.00", "0", "0.000001", "1e3", "-1", "12.1234567", 1, None, "5"]),
    max_size=4,
)
bodies = st.dictionaries(
    st.sampled_from(["confirm", "take", "box", "amount", "mode", "bets", "other"]),
    values,
    max_size=4,
) | st.sampled_from([None, [], "text", 3])


def _serializer(view: Any, body: Any) -> dict[str, Any] | None:
    """The serializer's validated data, or None where it refuses (either way it reports)."""
    data = view.InputSerializer(data=body)
    try:
        if not data.is_valid():
            return None
    except Exception:  # ledger.money raises its 400 from inside the field
        return None
    return dict(data.validated_data)


@pytest.mark.parametrize("view", VIEWS, ids=lambda v: v.__name__)
@settings(max_examples=300, deadline=None)
@given(body=bodies)
def test_the_fast_path_agrees_with_the_serializer_or_steps_aside(view: Any, body: Any) -> None:
    fast = fastinput.validated(view.FAST, view.InputSerializer, body)
    if fast is not None:
        assert fast == _serializer(view, body)


@pytest.mark.parametrize(
    ("view", "body", "expected"),
    [
        (StandApi, {}, {}),
        (StandApi, {"anything": 1}, {}),
        (HitApi, {}, {"confirm": False}),
        (HitApi, {"confirm": True}, {"confirm": True}),
        (InsuranceApi, {"take": False, "box": 1}, {"take": False, "box": 1}),
        (EvenMoneyApi, {"take": True}, {"take": True, "box": 0}),
        (TableDealApi, {"bets": ["1.00"]}, {"mode": "bet", "bets": [1_000_000]}),
        (TableDealApi, {"mode": "rebet"}, {"mode": "rebet"}),
        (TableDealApi, {"mode": "double", "bets": []}, {"mode": "double", "bets": []}),
    ],
)
def test_the_usual_bodies_take_the_fast_path(view: Any, body: Any, expected: Any) -> None:
    assert fastinput.validated(view.FAST, view.InputSerializer, body) == expected
    assert _serializer(view, body) == expected


@pytest.mark.parametrize(
    ("view", "body"),
    [
        (HitApi, {"confirm": "true"}),  # DRF takes it: the serializer's call
        (InsuranceApi, {"box": 1}),  # take is required
        (InsuranceApi, {"take": True, "amount": "1.00"}),  # amounts go to the serializer
        (TableDealApi, {}),  # DEAL needs at least one bet
        (TableDealApi, {"bets": ["0"]}),
        (TableDealApi, {"bets": ["1", "1", "1", "1"]}),  # three boxes at most
        (TableDealApi, {"bets": [1]}),  # a JSON number is refused with its own error
        (StandApi, []),
    ],
)
def test_anything_else_goes_to_the_serializer(view: Any, body: Any) -> None:
    assert fastinput.validated(view.FAST, view.InputSerializer, body) is None


def test_a_subclass_with_its_own_serializer_does_not_inherit_the_fast_path() -> None:
    from rest_framework import serializers

    class Strict(StandApi):
        class InputSerializer(serializers.Serializer[Any]):
            reason = serializers.CharField()

    assert fastinput.validated(Strict.FAST, Strict.InputSerializer, {}) is None
