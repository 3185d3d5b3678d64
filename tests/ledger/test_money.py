"""ledger.money: strict parsing and printing of micro-USDC."""

from __future__ import annotations

import pytest
from django.test import override_settings
from hypothesis import given
from hypothesis import strategies as st

from casino.platform.errors import ApplicationError
from ledger.money import format_amount, parse_amount

GOOD = [
    ("12.5", 12_500_000),
    ("0.000001", 1),
    ("1", 1_000_000),
    ("0.1", 100_000),
    ("1000000", 1_000_000_000_000),
    ("500.000000", 500_000_000),
]

BAD = [
    ("1.0000001", "amount_too_precise"),
    ("0.0000000", "amount_too_precise"),
    ("-1", "amount_negative"),
    ("-0.5", "amount_negative"),
    ("NaN", "amount_not_finite"),
    ("nan", "amount_not_finite"),
    ("Infinity", "amount_not_finite"),
    ("-Infinity", "amount_not_finite"),
    ("inf", "amount_not_finite"),
    ("1e3", "amount_exponent_form"),
    ("1E-6", "amount_exponent_form"),
    ("2.5e+2", "amount_exponent_form"),
    (12.5, "amount_not_string"),
    (12, "amount_not_string"),
    (True, "amount_not_string"),
    (None, "amount_not_string"),
    (float("nan"), "amount_not_string"),
    ("1000000.000001", "amount_too_large"),
    ("99999999999999", "amount_too_large"),
    ("0", "amount_zero"),
    ("0.000000", "amount_zero"),
    ("", "amount_malformed"),
    (" 1", "amount_malformed"),
    ("1 ", "amount_malformed"),
    ("+1", "amount_malformed"),
    ("01", "amount_malformed"),
    (".5", "amount_malformed"),
    ("5.", "amount_malformed"),
    ("1,5", "amount_malformed"),
    ("0x10", "amount_malformed"),
    ("１", "amount_malformed"),
    ("1" * 50, "amount_malformed"),
]


@pytest.mark.parametrize(("text", "micro"), GOOD)
def test_parse_good(text: str, micro: int) -> None:
    assert parse_amount(text) == micro


@pytest.mark.parametrize(("value", "code"), BAD)
def test_parse_bad(value: object, code: str) -> None:
    with pytest.raises(ApplicationError) as caught:
        parse_amount(value)
    assert caught.value.code == code
    assert caught.value.status_code == 400
    assert caught.value.message


@override_settings(MAX_AMOUNT_MICRO=5_000_000)
def test_maximum_is_configured() -> None:
    assert parse_amount("5") == 5_000_000
    with pytest.raises(ApplicationError) as caught:
        parse_amount("5.000001")
    assert caught.value.code == "amount_too_large"


def test_zero_when_allowed() -> None:
    assert parse_amount("0", allow_zero=True) == 0


def test_format_always_six_places() -> None:
    assert format_amount(12_500_000) == "12.500000"
    assert format_amount(1) == "0.000001"
    assert format_amount(0) == "0.000000"
    assert format_amount(-1_500_000) == "-1.500000"
    with pytest.raises(TypeError):
        format_amount(1.5)  # type: ignore[arg-type]


@given(st.integers(min_value=1, max_value=1_000_000_000_000))
def test_round_trip(micro: int) -> None:
    text = format_amount(micro)
    assert parse_amount(text) == micro
    trimmed = text.rstrip("0").rstrip(".")
    assert parse_amount(trimmed) == micro
