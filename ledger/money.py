"""Parsing and printing of USDC amounts: the one place money crosses the system's edge.

Inside the system an amount is an int of micro-USDC (6 decimals). At the edges it is a
decimal string with at most 6 decimals ("12.5", "0.000001"); responses always print 6.
Parsing is strict and never goes through float or Decimal arithmetic.
"""

from __future__ import annotations

import re

from django.conf import settings

from casino.platform.errors import ApplicationError

SCALE = 6
MICRO_PER_USDC = 10**SCALE
CURRENCY = "USDC"

# Canonical decimal: no sign, no leading zeros, no exponent, 1..6 decimals if a point is present.
_CANONICAL = re.compile(r"(0|[1-9][0-9]*)(?:\.([0-9]+))?")
_EXPONENT = re.compile(r"[0-9.]+[eE][+-]?[0-9]+")
_NON_FINITE = {"nan", "+nan", "-nan", "inf", "+inf", "-inf", "infinity", "+infinity", "-infinity"}
_MAX_LENGTH = 40


def _reject(code: str, message: str, field: str, value: object) -> ApplicationError:
    shown = (
        value if isinstance(value, str) and len(value) <= _MAX_LENGTH else repr(value)[:_MAX_LENGTH]
    )
    return ApplicationError(
        message, code=code, status_code=400, extra={"field": field, "value": shown}
    )


def parse_amount(value: object, *, field: str = "amount", allow_zero: bool = False) -> int:
    """Parse a decimal USDC string into micro-USDC, or raise a 400 `ApplicationError`.

    Rejected: non-strings (bare JSON numbers), more than 6 decimals, negatives, NaN and
    Infinity, exponent forms, anything non-canonical, zero unless `allow_zero`, and amounts
    above `settings.MAX_AMOUNT_MICRO`.
    """
    if not isinstance(value, str):
        raise _reject(
            "amount_not_string",
            f'{field} must be a decimal string such as "12.5", not a JSON number.',
            field,
            value,
        )
    text = value
    if len(text) > _MAX_LENGTH:
        raise _reject("amount_malformed", f"{field} is too long to be an amount.", field, value)
    if text.strip().lower() in _NON_FINITE:
        raise _reject("amount_not_finite", f"{field} must be a finite number.", field, value)
    if text.startswith("-"):
        raise _reject("amount_negative", f"{field} must not be negative.", field, value)
    if _EXPONENT.fullmatch(text):
        raise _reject(
            "amount_exponent_form",
            f"{field} must be written as a plain decimal, without an exponent.",
            field,
            value,
        )
    match = _CANONICAL.fullmatch(text)
    if match is None:
        raise _reject(
            "amount_malformed",
            f'{field} must be a plain decimal string such as "12.5".',
            field,
            value,
        )
    whole, fraction = match.group(1), match.group(2)
    if fraction is not None and len(fraction) > SCALE:
        raise _reject(
            "amount_too_precise",
            f"{field} has more than {SCALE} decimal places (USDC has {SCALE}).",
            field,
            value,
        )
    micro: int = int(whole) * MICRO_PER_USDC + int((fraction or "").ljust(SCALE, "0"))
    if micro == 0 and not allow_zero:
        raise _reject("amount_zero", f"{field} must be greater than zero.", field, value)
    maximum = int(settings.MAX_AMOUNT_MICRO)
    if micro > maximum:
        raise _reject(
            "amount_too_large",
            f"{field} is above the maximum of {usdc(maximum)}.",
            field,
            value,
        )
    return micro


def format_amount(micro: int) -> str:
    """Print micro-USDC as a decimal string with exactly 6 places ("-1.500000" if negative)."""
    if isinstance(micro, bool) or not isinstance(micro, int):
        raise TypeError(f"amounts are int micro-USDC, got {type(micro).__name__}")
    sign = "-" if micro < 0 else ""
    whole, fraction = divmod(abs(micro), MICRO_PER_USDC)
    return f"{sign}{whole}.{fraction:0{SCALE}d}"


MIN_DECIMALS = 2  # a shown amount keeps at least the cents


def usdc_number(micro: int) -> str:
    """The amount in USDC without the unit: "12.50", "-0.000001", "600.00"."""
    whole, fraction = format_amount(micro).split(".")
    return f"{whole}.{fraction.rstrip('0').ljust(MIN_DECIMALS, '0')}"


def usdc(micro: int) -> str:
    """The amount in USDC with its unit: "12.50 USDC"."""
    return f"{usdc_number(micro)} {CURRENCY}"
