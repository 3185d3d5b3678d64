"""The game endpoints' usual request bodies, validated without building a DRF serializer.

A serializer instance deep-copies its declared fields on every request (DRF's
`Serializer.get_fields`): about 1.5 % of a game request's server instructions. The bodies a
client sends on every action are plain: `{}`, `{"confirm": true}`, `{"take": false, "box":
0}`, `{"bets": ["1.00"]}`. For those, `validated` gives exactly the `validated_data` the
serializer would (the same keys and values; unknown keys ignored as DRF does). Anything else
(a string where a boolean goes, a missing required field, an amount that does not parse, a
mode DEAL would refuse) returns None, and the view runs its serializer as before, so every
error and its message stay the serializer's. `tests/api/test_fastinput.py` checks both agree.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from ledger.money import parse_amount

REQUIRED: Final = object()  # no default: absent means the serializer's "required" error
OPTIONAL: Final = object()  # required=False without a default: absent means not in the data


class Spec:
    """The simple fields of one input serializer: name -> (check, default, REQUIRED or
    OPTIONAL). `serializer` is the class it stands for: a view uses the spec only while its
    own InputSerializer is that class (a subclass with other fields falls back)."""

    __slots__ = ("fields", "serializer", "slow_keys", "then")

    def __init__(
        self,
        serializer: type,
        fields: Mapping[str, tuple[Callable[[Any], Any], Any]],
        *,
        slow_keys: tuple[str, ...] = (),
        then: Callable[[dict[str, Any]], bool] | None = None,
    ) -> None:
        self.serializer = serializer
        self.fields = dict(fields)
        self.slow_keys = slow_keys  # fields this path does not handle: present -> serializer
        self.then = then  # the serializer's validate(): False sends the body to the serializer


class _Slow(Exception):
    """This body is for the serializer."""


def boolean(value: Any) -> bool:
    if type(value) is not bool:  # DRF also takes "true", 1, "on"...: the serializer's call
        raise _Slow
    return value


def integer(low: int, high: int) -> Callable[[Any], int]:
    def check(value: Any) -> int:
        if type(value) is not int or not low <= value <= high:
            raise _Slow
        return value

    return check


def choice(*choices: str) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        if type(value) is not str or value not in choices:
            raise _Slow
        return value

    return check


def amounts(max_length: int, *, allow_zero: bool = False) -> Callable[[Any], list[int]]:
    """A ListField of AmountField (strict decimal strings, ledger.money.parse_amount); with
    `allow_zero`, of the bet field that takes 0 (an empty box)."""

    def check(value: Any) -> list[int]:
        if type(value) is not list or len(value) > max_length:
            raise _Slow
        try:
            return [parse_amount(item, field="amount", allow_zero=allow_zero) for item in value]
        except Exception as error:  # the serializer raises the same error, its own way
            raise _Slow from error

    return check


def validated(spec: Spec | None, serializer: type, data: Any) -> dict[str, Any] | None:
    """The serializer's `validated_data` for a plain body, or None (use the serializer)."""
    if spec is None or spec.serializer is not serializer or type(data) is not dict:
        return None
    out: dict[str, Any] = {}
    try:
        for key in spec.slow_keys:
            if key in data:
                return None
        for name, (check, default) in spec.fields.items():
            if name in data:
                out[name] = check(data[name])
            elif default is REQUIRED:
                return None
            elif default is not OPTIONAL:
                out[name] = default
    except _Slow:
        return None
    if spec.then is not None and not spec.then(out):
        return None
    return out
