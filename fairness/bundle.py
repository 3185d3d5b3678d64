"""Reading bundle lines: one C parse that refuses floats. Pure: no Django.

Nothing is taken from the line's text but its meaning: event hashes and the receipt signature
are checked over the canonical JSON of what the line says (fairness.checks), so a line in any
layout verifies exactly when its canonical form does, and text hashed or signed in another
layout (reordered or duplicated keys, spaces, other escapes) does not.

With msgspec installed (optional, like orjson) a line is first parsed by msgspec's decoder,
about twice as fast as the standard library's, whose `float_hook` refuses floats the same way.
Whatever msgspec does not take (a float, an escaped lone surrogate, malformed JSON, a line
that nests deeply) is parsed again by the standard library, so the value, or the error and
its message, is the standard library's in every case (tests/fairness/test_verify.py).
"""

from __future__ import annotations

import json
from typing import Any

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

# msgspec's parser: the same values as _DECODER for every line it accepts (it takes no NaN or
# Infinity, keeps integers of any size exact, keeps the last of duplicated keys, and its
# float_hook sees every float). A line it refuses is parsed again by _DECODER.
_FAST = _msgspec.json.Decoder(float_hook=_reject_float).decode if _msgspec is not None else None
# The two parsers hit Python's recursion limit at slightly different depths (msgspec about
# three levels deeper), so a line with more brackets than this, which may nest that deep, is
# left to the standard library alone. Real lines have a few hundred at most.
_FAST_MAX_BRACKETS = 500


def parse_line(text: str) -> Any:
    """Parse one bundle line (ValueError if it is not JSON or holds a float, NaN or Infinity)."""
    if _FAST is not None:
        try:
            data = text.encode()
            if data.count(b"[") + data.count(b"{") <= _FAST_MAX_BRACKETS:
                return _FAST(data)
        except Exception:  # whatever msgspec refuses, the standard library parses or refuses
            pass
    return _DECODER.decode(text)
