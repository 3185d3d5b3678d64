"""Reading bundle lines: one C parse that refuses floats. Pure: no Django.

Nothing is taken from the line's text but its meaning: event hashes and the receipt signature
are checked over the canonical JSON of what the line says (fairness.checks), so a line in any
layout verifies exactly when its canonical form does, and text hashed or signed in another
layout (reordered or duplicated keys, spaces, other escapes) does not.

With msgspec installed (optional, like orjson) a line is first parsed by msgspec's decoder,
about twice as fast as the standard library's, typed as JSON values nested at most
`_FAST_DEPTH` deep (strings, integers, booleans, null, arrays and objects of them: no float
type, so a float fails to decode as NaN and Infinity do). Whatever msgspec does not take
(a float, an escaped lone surrogate, malformed JSON, a line nested deeper than that) is
parsed again by the standard library, so the value, or the error and its message, is the
standard library's in every case (tests/fairness/test_verify.py).
"""

from __future__ import annotations

import json
from typing import Any, Union

try:
    import msgspec as _msgspec
except ImportError:  # optional: the verifier runs on the standard library alone
    _msgspec = None  # type: ignore[assignment]


def _reject_float(text: str) -> Any:
    raise ValueError(f"number {text} is not an integer (money is integer micro-USDC)")


def _reject_constant(text: str) -> Any:
    raise ValueError(f"{text} is not a JSON number (money is integer micro-USDC)")


# Floats are refused while parsing: money is integer micro-USDC and hashes need exact numbers.
# So are NaN and Infinity, which Python's parser accepts by default: a NaN would be encoded as
# null by the canonical encoder, so a null in a signed value could be swapped for it unseen.
_DECODER = json.JSONDecoder(parse_float=_reject_float, parse_constant=_reject_constant)

# How deep msgspec's typed parse takes a line: real lines nest 6 levels of arrays and objects
# (the deepest line of 60 rounds of every rule set played by `casino.play`). A line that
# nests deeper goes to the standard library, so msgspec (whose recursion check lets it nest
# three levels deeper than the standard library's before Python's recursion limit) never
# takes a line the standard library would refuse as too deep; checking this while parsing
# costs nothing, where counting the line's brackets first cost about a tenth of the parse.
# Building the type costs about 6x more per level (every level names the one below twice):
# 10 levels take 13 ms at import, 16 took 1.5 s, paid by every process importing the
# verifier (the CLI, the server, the worker, each test run).
_FAST_DEPTH = 10


def _json_type(depth: int) -> Any:
    """The JSON values without floats, arrays and objects nested at most `depth` deep."""
    value: Any = Union[str, int, bool, None]  # noqa: UP007 - a runtime type for msgspec
    for _ in range(depth):
        value = Union[str, int, bool, None, list[value], dict[str, value]]  # noqa: UP007
    return value


# msgspec's parser: the same values as _DECODER for every line it accepts (it keeps integers
# exact, keeps the last of duplicated keys, and takes no float, NaN or Infinity: a float is
# not among the types). A line it refuses is parsed again by _DECODER.
_FAST = _msgspec.json.Decoder(_json_type(_FAST_DEPTH)).decode if _msgspec is not None else None


def parse_line(text: str | bytes) -> Any:
    """Parse one bundle line, text or UTF-8 bytes (ValueError if it is not JSON, not UTF-8,
    or holds a float, NaN or Infinity)."""
    if _FAST is not None:
        try:
            return _FAST(text)
        except Exception:  # whatever msgspec refuses, the standard library parses or refuses
            pass
    if not isinstance(text, str):  # UnicodeDecodeError is a ValueError
        text = bytes(text).decode("utf-8")
    return _DECODER.decode(text)
