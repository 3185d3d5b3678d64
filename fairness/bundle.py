"""Reading bundle lines: one C parse that refuses floats. Pure: no Django.

Nothing is taken from the line's text but its meaning: event hashes and the receipt signature
are checked over the canonical JSON of what the line says (fairness.checks), so a line in any
layout verifies exactly when its canonical form does, and text hashed or signed in another
layout (reordered or duplicated keys, spaces, other escapes) does not.
"""

from __future__ import annotations

import json
from typing import Any


def _reject_float(text: str) -> Any:
    raise ValueError(f"number {text} is not an integer (money is integer micro-USDC)")


def _reject_constant(text: str) -> Any:
    raise ValueError(f"{text} is not a JSON number (money is integer micro-USDC)")


# Floats are refused while parsing: money is integer micro-USDC and hashes need exact numbers.
# So are NaN and Infinity, which Python's parser accepts by default: a NaN would be encoded as
# null by the canonical encoder, so a null in a signed value could be swapped for it unseen.
_DECODER = json.JSONDecoder(parse_float=_reject_float, parse_constant=_reject_constant)


def parse_line(text: str) -> Any:
    """Parse one bundle line (ValueError if it is not JSON or holds a float, NaN or Infinity)."""
    return _DECODER.decode(text)
