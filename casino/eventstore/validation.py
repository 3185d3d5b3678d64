"""What event data may hold: JSON-native values that hash and store the same everywhere."""

from __future__ import annotations

from typing import Any


def check_json_native(value: Any, event_type: str) -> None:
    """Only str/int/bool/None/list/dict: floats would not hash the same in every language."""
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
            if not isinstance(key, str):
                raise TypeError(f"{event_type}: JSON object keys must be strings")
            check_json_native(key, event_type)
            check_json_native(item, event_type)
        return
    if isinstance(value, list):
        for item in value:
            check_json_native(item, event_type)
        return
    raise TypeError(f"{event_type}: {type(value).__name__} is not allowed in event data")
