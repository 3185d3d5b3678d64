"""Reading bundle lines: one C parse that refuses floats, then the strict checks. Pure: no Django.

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

Then the line must be strict (docs/fairness.md, "Bundle format"): `duplicated_key` fails a key
twice in one object at any depth (a canonical line is proven free of them by one encoding),
and `line_failures` an unknown or missing format and every unknown or missing field, from the
one table of the event data (`EVENT_DATA`, held equal to the engine's event classes by
tests/fairness/test_bundle_strict.py). `chain_line` builds a chain line (CHAIN_FORMAT).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Union

from fairness.canonical import canonical_json_float_free
from fairness.receipt import BEACON_FIELDS as RECEIPT_BEACON_FIELDS
from fairness.receipt import (
    RECEIPT_KEYS,
    RECEIPT_KEYS_V2,
    SETTLED_FIELDS,
    SPEC_V2,
    VOID_FIELDS,
)

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
# (the deepest line of 60 rounds of every rule set played by `casino.tables.play`). A line that
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


# --- Strict lines -------------------------------------------------------------------------
# A line is one of three formats, named by its "format": a round (BUNDLE_FORMAT, or
# BUNDLE_FORMAT_V2 for a round at a beacon table) or a seed chain (CHAIN_FORMAT). Every key of
# every object is known: an unknown field, a missing one or a duplicated key fails the line
# (docs/fairness.md, "Bundle format"). A new field needs a new format version, documented:
# fairness-v2-bundle added RoundOpened's "beacon", the events BeaconAwaited and BeaconRecorded
# and the receipt's "beacon"; in a fairness-v1-bundle line they are unknown.

BUNDLE_FORMAT = "fairness-v1-bundle"
BUNDLE_FORMAT_V2 = "fairness-v2-bundle"  # a round at a beacon table (RoundOpened.beacon)
CHAIN_FORMAT = "fairness-v1-chain"
ROUND_FORMATS = (BUNDLE_FORMAT, BUNDLE_FORMAT_V2)
FORMATS = (*ROUND_FORMATS, CHAIN_FORMAT)
EVENT_SCHEMA_VERSION = 1  # the schema version of the event data below

# A round line's keys, and each event's (the hashed body plus its hash); () are optional.
LINE_FIELDS = ("format", "receipt", "signature", "key_id", "events")
LINE_OPTIONAL = ("public_key",)
EVENT_FIELDS = ("data", "hash", "recorded_at", "schema_version", "stream", "type", "version")
EVENT_OPTIONAL = ("prev_hash",)
# A chain line: the seed chain as GET /api/fairness/chains/{id} serves it (without its
# status), and the range of its nonces the bundle covers, first_nonce to last_nonce.
CHAIN_FIELDS = (
    "format", "chain_id", "table_id", "terminal", "length", "created_at", "first_nonce",
    "last_nonce",
)  # fmt: skip

# The event data of schema version 1: the fields of the rule engine's events
# (casino.engine.events), in their order. A field's value is None for a JSON scalar, "Name" for
# an object with the fields NESTED[Name], "[Name]" for a list of such objects, "Name?" for such
# an object or nothing (the key left out, never null).
# tests/fairness/test_bundle_strict.py holds this table equal to the engine's dataclasses.
NESTED: dict[str, tuple[str, ...]] = {
    "Participant": ("player_id", "client_seed", "offer_insurance", "safety_net"),
    "RoundOptions": ("min_bet", "max_bet", "chip_unit", "stake"),
    "BeaconSpec": (
        "name", "chain_hash", "public_key", "genesis_time", "period", "margin_s", "wait_s",
    ),
    "HandResult": ("player_id", "box", "hand", "outcome", "stake", "gross_return", "total"),
    "InsuranceResult": ("player_id", "box", "stake", "gross_return"),
    "PlayerAmount": ("player_id", "amount"),
    "RevealedCard": ("player_id", "position", "card"),
}  # fmt: skip
_S = None  # a JSON scalar
EVENT_DATA: dict[str, dict[str, str | None]] = {
    "RoundOpened": {
        "round_id": _S, "table_id": _S, "ruleset": _S, "ruleset_hash": _S, "chain_id": _S,
        "nonce": _S, "commitment": _S, "participants": "[Participant]",
        "options": "RoundOptions", "opened_at_ms": _S, "betting_deadline_ms": _S,
        "beacon": "BeaconSpec?",
    },
    "BetPlaced": {"player_id": _S, "box": _S, "amount": _S},
    "BettingClosed": {"client_material": _S, "closed_at_ms": _S},
    "BeaconAwaited": {"round": _S, "round_time": _S, "deadline_ms": _S},
    "BeaconRecorded": {
        "round": _S, "signature": _S, "randomness": _S, "client_material": _S,
        "recorded_at_ms": _S,
    },
    "PlayerCardDealt": {
        "position": _S, "card": _S, "player_id": _S, "box": _S, "hand": _S, "hidden": _S,
    },
    "DealerCardDealt": {"position": _S, "card": _S, "hole": _S},
    "InsuranceOffered": {"deadline_ms": _S},
    "InsuranceTaken": {"player_id": _S, "box": _S, "amount": _S},
    "InsuranceDeclined": {"player_id": _S, "box": _S, "auto": _S},
    "EvenMoneyTaken": {"player_id": _S, "box": _S},
    "DealerPeeked": {"blackjack": _S},
    "HoleCardRevealed": {"position": _S, "card": _S},
    "TurnStarted": {"player_id": _S, "box": _S, "hand": _S, "deadline_ms": _S},
    "PlayerStood": {"player_id": _S, "box": _S, "hand": _S, "auto": _S},
    "HandDoubled": {"player_id": _S, "box": _S, "hand": _S, "amount": _S},
    "HandSplit": {"player_id": _S, "box": _S, "hand": _S, "amount": _S},
    "DuelTimerStarted": {"deadline_ms": _S},
    "CardsRevealed": {"cards": "[RevealedCard]"},
    "RoundSettled": {
        "hands": "[HandResult]", "insurance": "[InsuranceResult]", "fee": _S,
        "dealer_total": _S, "settled_at_ms": _S,
    },
    "RoundVoided": {
        "reason": _S, "evidence": _S, "refunds": "[PlayerAmount]",
        "reversed_payouts": "[PlayerAmount]", "reversed_fee": _S, "was_settled": _S,
        "voided_at_ms": _S,
    },
    "ServerSeedRevealed": {"server_seed": _S},
}  # fmt: skip
# What fairness-v2 added to the event data; a fairness-v1-bundle line has EVENT_DATA without it.
BEACON_EVENTS = ("BeaconAwaited", "BeaconRecorded")
BEACON_DATA_FIELDS = {"RoundOpened": ("beacon",)}
EVENT_DATA_V1: dict[str, dict[str, str | None]] = {
    type_: {k: v for k, v in fields.items() if k not in BEACON_DATA_FIELDS.get(type_, ())}
    for type_, fields in EVENT_DATA.items()
    if type_ not in BEACON_EVENTS
}
EVENT_DATA_BY_FORMAT = {BUNDLE_FORMAT: EVENT_DATA_V1, BUNDLE_FORMAT_V2: EVENT_DATA}

# The receipt (fairness.receipt): its keys, its nested objects, and its payouts by outcome,
# which copy the RoundSettled / RoundVoided fields of the same names. fairness-v2's receipt
# adds "beacon" (a ReceiptBeacon: its round, round_time, signature, randomness may be null).
RECEIPT_ITEMS: dict[str, tuple[str, ...]] = {
    "ReceiptParticipant": ("player_id", "client_seed"),
    "ReceiptCard": ("position", "card"),
    "ReceiptBeacon": RECEIPT_BEACON_FIELDS,
}
RECEIPT_NESTED: dict[str, str | None] = {
    "participants": "[ReceiptParticipant]",
    "cards": "[ReceiptCard]",
}
RECEIPT_NESTED_V2: dict[str, str | None] = {**RECEIPT_NESTED, "beacon": "ReceiptBeacon"}
PAYOUTS: dict[str, dict[str, str | None]] = {
    "settled": {name: EVENT_DATA["RoundSettled"][name] for name in SETTLED_FIELDS},
    "voided": {name: EVENT_DATA["RoundVoided"][name] for name in VOID_FIELDS},
}


def line_format(receipt: Mapping[str, Any]) -> str:
    """A round line's format for its receipt: fairness-v2-bundle for a fairness-v2 receipt
    (a round at a beacon table), else fairness-v1-bundle."""
    return BUNDLE_FORMAT_V2 if receipt.get("spec") == SPEC_V2 else BUNDLE_FORMAT


class _Shape:
    """An object's fields (required and optional) and the shapes of its nested objects."""

    __slots__ = ("exact", "fields", "nested", "optional", "with_optional")

    def __init__(
        self,
        fields: Iterable[str],
        optional: Iterable[str] = (),
        nested: Mapping[str, str | None] | None = None,
    ) -> None:
        self.fields = tuple(fields)
        self.optional = tuple(optional)
        self.exact = frozenset(self.fields)
        self.with_optional = frozenset(self.fields + self.optional)
        # (field, shape of the nested object(s), a list of them?, optional?)
        self.nested: tuple[tuple[str, _Shape, bool, bool], ...] = tuple(
            (name, _NESTED_SHAPES[kind.strip("[]?")], kind.startswith("["), kind.endswith("?"))
            for name, kind in (nested or {}).items()
            if kind is not None
        )

    def keys_ok(self, value: dict[str, Any]) -> bool:
        keys = value.keys()
        return keys == self.exact or (
            bool(self.optional) and keys <= self.with_optional and keys >= self.exact
        )


def _data_shape(fields: Mapping[str, str | None]) -> _Shape:
    """An event's data: its "Name?" fields are optional, the others required."""
    optional = [name for name, kind in fields.items() if kind is not None and kind.endswith("?")]
    return _Shape([name for name in fields if name not in optional], optional, fields)


_NESTED_SHAPES: dict[str, _Shape] = {
    name: _Shape(fields) for name, fields in {**NESTED, **RECEIPT_ITEMS}.items()
}
_DATA_SHAPES_BY_FORMAT = {
    format_: {type_: _data_shape(fields) for type_, fields in table.items()}
    for format_, table in EVENT_DATA_BY_FORMAT.items()
}
_LINE_SHAPE = _Shape(LINE_FIELDS, LINE_OPTIONAL)
_EVENT_SHAPE = _Shape(EVENT_FIELDS, EVENT_OPTIONAL)
_RECEIPT_SHAPES = {
    BUNDLE_FORMAT: _Shape(sorted(RECEIPT_KEYS), (), RECEIPT_NESTED),
    BUNDLE_FORMAT_V2: _Shape(sorted(RECEIPT_KEYS_V2), (), RECEIPT_NESTED_V2),
}
_PAYOUT_SHAPES = {outcome: _Shape(fields, (), fields) for outcome, fields in PAYOUTS.items()}
_CHAIN_SHAPE = _Shape(CHAIN_FIELDS)


def _quoted(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def _check_object(
    value: Any, shape: _Shape, where: str, fail: Callable[[str], None], label: str = ""
) -> bool:
    """Whether `value` is an object with exactly the shape's fields (nested objects included);
    each unknown or missing field is named, at its path `where` (`label`: an event's type)."""
    if type(value) is not dict:
        fail(f"bundle: {where}{label} is not an object")
        return False
    ok = True
    if not shape.keys_ok(value):
        ok = False
        known = shape.with_optional
        for name in value:
            if name not in known:
                fail(f"bundle: unknown field {_quoted(name)} in {where}{label}")
        for name in shape.fields:
            if name not in value:
                fail(f"bundle: missing field {_quoted(name)} in {where}{label}")
    for name, nested, many, _ in shape.nested:
        if name not in value:
            continue
        item, path = value[name], f"{where}.{name}"
        if not many:
            ok = _check_object(item, nested, path, fail, label) and ok
        elif type(item) is not list:
            fail(f"bundle: {path}{label} is not a list")
            ok = False
        else:
            for index, element in enumerate(item):
                ok = _check_object(element, nested, f"{path}[{index}]", fail, label) and ok
    return ok


def _label(type_: Any) -> str:
    """An event's type after its path, as in "events[3].data (BetPlaced)"."""
    return f" ({type_})" if type(type_) is str else ""


def _fast_ok(value: Any, shape: _Shape) -> bool:
    """Whether `value` has exactly the shape (one level of nested objects, as every shape here)."""
    if type(value) is not dict:
        return False
    keys = value.keys()
    if keys != shape.exact and not (
        shape.optional and keys <= shape.with_optional and keys >= shape.exact
    ):
        return False
    for name, nested, many, optional in shape.nested:
        if optional and name not in value:
            continue
        item, exact = value[name], nested.exact
        if many:
            if type(item) is not list:
                return False
            for element in item:
                if type(element) is not dict or element.keys() != exact:
                    return False
        elif type(item) is not dict or item.keys() != exact:
            return False
    return True


# Per format and event type: its data's fields, its shape when it nests objects or has optional
# fields (else None), and whether data the proof of play decoded strictly is known to be of
# this format's shape: not a fairness-v1 RoundOpened, since the engine's decoder also takes
# the "beacon" that fairness-v1 does not have.
_DATA_SPECS_BY_FORMAT = {
    format_: {
        type_: (
            shape.exact,
            shape if shape.nested or shape.optional else None,
            not (format_ == BUNDLE_FORMAT and type_ in BEACON_DATA_FIELDS),
        )
        for type_, shape in shapes.items()
    }
    for format_, shapes in _DATA_SHAPES_BY_FORMAT.items()
}
_LINE_EXACT = _LINE_SHAPE.exact
_LINE_ALL = _LINE_SHAPE.with_optional
_EVENT_EXACT = _EVENT_SHAPE.exact
_EVENT_ALL = _EVENT_SHAPE.with_optional


def _round_line_ok(line: dict[str, Any], data_decoded: bool = False) -> bool:
    """True when `line_failures` finds nothing in a round line, at the least cost (the
    common case); False when it may find something (it then names it). `data_decoded`: as
    in `line_failures`."""
    try:
        keys = line.keys()
        format_ = line["format"]
        specs = _DATA_SPECS_BY_FORMAT.get(format_)  # an unhashable format: TypeError
        if specs is None or (keys != _LINE_EXACT and keys != _LINE_ALL):
            return False
        receipt = line["receipt"]
        if not _fast_ok(receipt, _RECEIPT_SHAPES[format_]):
            return False
        payouts = _PAYOUT_SHAPES.get(receipt["outcome"])
        if payouts is None or not _fast_ok(receipt["payouts"], payouts):
            return False
        events = line["events"]
        if type(events) is not list:
            return False
        exact, with_prev = _EVENT_EXACT, _EVENT_ALL
        version = EVENT_SCHEMA_VERSION
        for event in events:
            if type(event) is not dict:
                return False
            keys = event.keys()
            if keys != exact and keys != with_prev:
                return False
            spec = specs.get(event["type"])
            schema_version = event["schema_version"]
            if spec is None or type(schema_version) is not int or schema_version != version:
                return False  # (True == 1, but true is not a schema version)
            if data_decoded and spec[2]:
                continue
            data = event["data"]
            if spec[1] is not None:
                if not _fast_ok(data, spec[1]):
                    return False
            elif type(data) is not dict or data.keys() != spec[0]:
                return False
    except (TypeError, KeyError):  # an unhashable type, a missing field: the long way names it
        return False
    return True


def line_failures(line: dict[str, Any], *, data_decoded: bool = False) -> list[str]:
    """What makes a parsed line other than a strict line of its format (empty: nothing): an
    unknown or missing format, and every unknown or missing field, at every level, by the
    tables of the line's format (of its receipt's spec when the format is not a round's).

    `data_decoded`: every event's data is already known to have exactly its type's fields,
    nested objects included (the proof of play decoded them strictly, with the shapes of
    EVENT_DATA and NESTED: `fairness.replay.PlayCheck.shapes_strict`), so the data are not
    looked at again unless something else is wrong."""
    if _round_line_ok(line, data_decoded):
        return []
    failures: list[str] = []
    fail = failures.append
    format_ = line.get("format")
    if format_ == CHAIN_FORMAT:
        chain_line_failures(line, fail)
        return failures
    receipt = line.get("receipt")
    if type(format_) is not str or format_ not in ROUND_FORMATS:
        wanted = line_format(receipt) if type(receipt) is dict else BUNDLE_FORMAT
        if "format" not in line:
            fail(f'bundle: no format (a round line says "format": "{wanted}")')
        else:
            fail(
                f"bundle: unknown format {_quoted(format_)} (this verifier reads "
                f"{BUNDLE_FORMAT}, {BUNDLE_FORMAT_V2} and {CHAIN_FORMAT} lines)"
            )
        format_ = wanted  # the fields are checked as that format has them
    if not _LINE_SHAPE.keys_ok(line):
        _check_object(line, _LINE_SHAPE, "the line", fail)
    if type(receipt) is dict:
        _check_object(receipt, _RECEIPT_SHAPES[format_], "receipt", fail)
        payouts = _PAYOUT_SHAPES.get(receipt.get("outcome"))  # type: ignore[arg-type]
        if payouts is not None and "payouts" in receipt:
            _check_object(receipt["payouts"], payouts, "receipt.payouts", fail)
    events = line.get("events")
    if type(events) is list:
        event_shape, version = _EVENT_SHAPE, EVENT_SCHEMA_VERSION
        data_shapes = _DATA_SHAPES_BY_FORMAT[format_]
        for index, event in enumerate(events):
            if type(event) is not dict:
                fail(f"bundle: events[{index}] is not an object")
                continue
            type_ = event.get("type")
            if not event_shape.keys_ok(event):
                _check_object(event, event_shape, f"events[{index}]", fail, _label(type_))
            data_shape = data_shapes.get(type_) if type(type_) is str else None
            if data_shape is None:
                known = type(type_) is str and type_ in EVENT_DATA and format_ == BUNDLE_FORMAT
                since = f" (a beacon round is a {BUNDLE_FORMAT_V2} line)" if known else ""
                fail(f"bundle: unknown event type {_quoted(type_)} in events[{index}]{since}")
                continue
            schema_version = event.get("schema_version", version)
            if type(schema_version) is not int or schema_version != version:
                fail(
                    f"bundle: events[{index}] ({type_}) has schema_version "
                    f"{_quoted(event['schema_version'])}; {format_} has {version}"
                )
                continue
            if "data" not in event:
                continue
            data = event["data"]
            if type(data) is not dict or not data_shape.keys_ok(data) or data_shape.nested:
                _check_object(data, data_shape, f"events[{index}].data", fail, _label(type_))
    return failures


def chain_line_failures(line: dict[str, Any], fail: Callable[[str], None]) -> None:
    """A chain line's fields: exactly CHAIN_FIELDS, each of its type."""
    if not _check_object(line, _CHAIN_SHAPE, "the chain line", fail):
        return
    for name in ("chain_id", "table_id", "created_at"):
        if type(line[name]) is not str or not line[name]:
            fail(f"bundle: the chain line's {name} must be a non-empty string")
    if type(line["terminal"]) is not str or _SEED(line["terminal"]) is None:
        fail("bundle: the chain line's terminal must be 64 lowercase hex characters")
    numbers = [line[name] for name in ("length", "first_nonce", "last_nonce")]
    if any(type(n) is not int or n < 1 for n in numbers):
        fail("bundle: the chain line's length, first_nonce and last_nonce must be integers >= 1")
    elif not numbers[1] <= numbers[2] <= numbers[0]:
        fail(
            f"bundle: the chain line's nonces {numbers[1]}..{numbers[2]} are not a range "
            f"within the chain's length {numbers[0]}"
        )


_SEED = re.compile(r"[0-9a-f]{64}").fullmatch


def chain_line(
    *,
    chain_id: str,
    table_id: str,
    terminal: str,
    length: int,
    created_at: str,
    first_nonce: int,
    last_nonce: int,
) -> dict[str, Any]:
    """A chain line (CHAIN_FORMAT): the chain's public facts and the nonces the bundle covers."""
    return {
        "format": CHAIN_FORMAT,
        "chain_id": chain_id,
        "table_id": table_id,
        "terminal": terminal,
        "length": length,
        "created_at": created_at,
        "first_nonce": first_nonce,
        "last_nonce": last_nonce,
    }


# --- Duplicated keys ----------------------------------------------------------------------


class _Duplicated(dict):  # type: ignore[type-arg]
    """An object that held a key twice (the parse below keeps the last value and marks it)."""

    __slots__ = ("key",)
    key: str


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) == len(pairs):
        return value
    seen: set[str] = set()
    marked = _Duplicated(value)
    for key, _ in pairs:
        if key in seen:
            marked.key = key
            break
        seen.add(key)
    return marked


# The standard library's parser, refusing floats as _DECODER does, with every object's pairs seen.
_PAIRS_DECODER = json.JSONDecoder(
    parse_float=_reject_float, parse_constant=_reject_constant, object_pairs_hook=_pairs
)


def duplicated_key(text: str | bytes, value: Any) -> str | None:
    """The failure of a line that holds a key twice in one object, at any depth, or None.

    `value` is `parse_line(text)`. The product writes lines canonically (fairness.canonical),
    and canonical JSON never repeats a key: a line that is its value's canonical JSON (up to
    a trailing newline) holds no duplicate, which costs one encoding to see. Any other line is
    parsed again by the standard library with every object's pairs seen, and the first object
    (in the line's order) that repeats a key is named by its path.
    """
    try:
        raw = text.encode("utf-8") if isinstance(text, str) else text
        if canonical_json_float_free(value) == raw.rstrip(b"\r\n"):
            return None
    except ValueError:  # a lone surrogate cannot be UTF-8: not canonical, so parse again
        pass
    try:
        parsed = _PAIRS_DECODER.decode(
            text if isinstance(text, str) else bytes(text).decode("utf-8")
        )
    except (ValueError, RecursionError):  # parse_line read it: cannot happen, nothing to add
        return None
    found = _first_duplicate(parsed)
    if found is None:
        return None
    key, where = found
    if where.startswith("events["):  # name the event's type, as the other messages do
        index = int(where[7 : where.index("]")])
        event = parsed["events"][index] if isinstance(parsed.get("events"), list) else None
        if isinstance(event, dict):
            where += _label(event.get("type"))
    return f"bundle: duplicated key {_quoted(key)} in {where}"


def _first_duplicate(value: Any) -> tuple[str, str] | None:
    """The first object, in the line's order, that held a key twice: (the key, its path)."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, path = stack.pop()
        if isinstance(item, dict):
            if isinstance(item, _Duplicated):
                return item.key, path or "the line"
            prefix = f"{path}." if path else ""
            stack.extend(
                (child, f"{prefix}{key}")
                for key, child in reversed(item.items())
                if isinstance(child, dict | list)
            )
        elif isinstance(item, list):
            stack.extend(
                (child, f"{path}[{index}]")
                for index, child in reversed(list(enumerate(item)))
                if isinstance(child, dict | list)
            )
    return None
