"""What event data may hold: JSON-native values that hash and store the same everywhere."""

from __future__ import annotations

from typing import Any


def check_json_native(value: Any, event_type: str) -> None:
    """Only str/int/bool/None/list/dict: floats would not hash the same in every language.

    Plain values are checked inline (this runs on every appended event); anything else,
    subclasses included, goes through `_check_value`, which says what is wrong.
    """
    kind = type(value)
    if kind is dict:
        for key in value:
            if type(key) is not str or not key.isascii() or "\x00" in key:
                _check_key(key, event_type)
        items = value.values()
    elif kind is list:
        items = value
    else:
        _check_value(value, event_type)
        return
    for item in items:
        kind = type(item)
        if kind is int or kind is bool or item is None:
            continue
        if kind is str and item.isascii() and "\x00" not in item:
            continue
        check_json_native(item, event_type)


def _check_key(key: Any, event_type: str) -> None:
    if not isinstance(key, str):
        raise TypeError(f"{event_type}: JSON object keys must be strings")
    _check_value(key, event_type)


def _check_value(value: Any, event_type: str) -> None:
    if value is None or isinstance(value, bool | int):
        return
    if isinstance(value, str):
        if "\x00" in value:
            raise ValueError(f"{event_type}: NUL characters cannot be stored (PostgreSQL)")
        if not value.isascii():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise ValueError(f"{event_type}: strings must be valid UTF-8") from exc
        return
    if isinstance(value, dict):
        for key, item in value.items():
            _check_key(key, event_type)
            check_json_native(item, event_type)
        return
    if isinstance(value, list):
        for item in value:
            check_json_native(item, event_type)
        return
    raise TypeError(f"{event_type}: {type(value).__name__} is not allowed in event data")
