"""Reading bundle lines: one C parse, plus where a canonical line keeps its receipt and events.

Pure: no Django. The spans let `fairness.verify` hash and signature-check the text as written
(no re-encoding); they are only candidates, proven or discarded by those very checks.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


def _reject_float(text: str) -> Any:
    raise ValueError(f"number {text} is not an integer (money is integer micro-USDC)")


# Floats are refused while parsing: money is integer micro-USDC and hashes need exact numbers.
_DECODER = json.JSONDecoder(parse_float=_reject_float)


@dataclass(slots=True)
class Spans:
    """Where the receipt and each event sit in the line's text (for hashing without re-encoding)."""

    text: str
    ascii: memoryview | None = None  # the text's bytes when it is all ASCII
    receipt: tuple[int, int] | None = None
    events: list[tuple[int, int]] = field(default_factory=list)


def parse_line(text: str) -> tuple[Any, Spans]:
    """Parse one bundle line and, if it is written canonically, locate the receipt and events.

    The spans are only candidates: an event span counts only if its bytes (minus the hash
    member) hash to the recorded hash, and the receipt span only if the signature covers it, so
    a line that is not canonical (or is crafted) falls back to re-encoding, never to a pass.
    """
    bundle = _DECODER.decode(text)
    spans = Spans(text, memoryview(text.encode("ascii")) if text.isascii() else None)
    if not isinstance(bundle, dict):
        return bundle, spans
    events = bundle.get("events")
    after = 0  # where the top-level keys after the events array begin (0: unknown)
    if isinstance(events, list) and text.startswith('{"events":['):
        position, last = 11, len(events) - 1
        for index, event in enumerate(events):
            if not isinstance(event, dict) or type(event.get("version")) is not int:
                break
            marker = f'"version":{event["version"]}}}'  # canonical: "version" is the last key
            end = text.find(marker, position)
            if end < 0:
                break
            end += len(marker)
            if text[end : end + 1] != ("]" if index == last else ","):
                break
            spans.events.append((position, end))
            position = end + 1
        # The array the parser returned is this one only if no later top-level "events" follows.
        if len(spans.events) == len(events) and text.find('"events":', position) < 0:
            after = position
        else:
            spans.events.clear()
    # One top-level "receipt" key, and "signature" (the last key) right after it.
    start = text.find('"receipt":', after)
    if start >= 0 and (after or start == text.rfind('"receipt":')):
        start += len('"receipt":')
        end = text.rfind(',"signature":"')
        if (
            start < end
            and text[start : start + 1] == "{"
            and text[end - 1 : end] == "}"
            and text.find('"receipt":', start, end) < 0
            and text.find('"receipt":', end) < 0
        ):
            spans.receipt = (start, end)
    return bundle, spans


def body_hash(
    prev_hash: str, event: Mapping[str, Any], spans: Spans | None, index: int
) -> str | None:
    """sha256(prev_hash + the event's text minus its "hash"/"prev_hash" members), if locatable.

    Equal to the recorded hash only if that text is the canonical body the store hashed.
    """
    if spans is None or index >= len(spans.events):
        return None
    text = spans.text
    start, end = spans.events[index]
    member = f',"hash":"{event.get("hash")}"'
    if "prev_hash" in event:  # sorted keys: "prev_hash" directly follows "hash"
        member += f',"prev_hash":"{event["prev_hash"]}"'
    cut = text.rfind(member, start, end)
    # The member must sit at the top level, right before "recorded_at" as canonical JSON has it.
    if cut < 0 or not text.startswith(',"recorded_at":"', cut + len(member)):
        return None
    digest = hashlib.sha256(prev_hash.encode("ascii"))
    if spans.ascii is not None:  # ASCII text: byte offsets are character offsets, no copies
        digest.update(spans.ascii[start:cut])
        digest.update(spans.ascii[cut + len(member) : end])
    else:
        digest.update((text[start:cut] + text[cut + len(member) : end]).encode("utf-8"))
    return digest.hexdigest()
