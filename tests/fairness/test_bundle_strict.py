"""Strict bundle lines (fairness.bundle): a known format, no unknown, missing or duplicated
key at any depth. Each tamper is made on rounds played through the rule engine and, where it
touches hashed or signed data, re-chained and re-signed as a dishonest operator would."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import types
import typing
from typing import Any

import pytest

from fairness.bundle import (
    BEACON_EVENTS,
    BUNDLE_FORMAT,
    BUNDLE_FORMAT_V2,
    EVENT_DATA,
    EVENT_DATA_V1,
    NESTED,
    PAYOUTS,
    RECEIPT_ITEMS,
    RECEIPT_NESTED,
    RECEIPT_NESTED_V2,
    duplicated_key,
    line_failures,
    parse_line,
)
from fairness.canonical import canonical_text
from fairness.chain import create_chain
from fairness.receipt import RECEIPT_KEYS, private_key_from_hex
from fairness.replay import PlayCheck, load, shapes_strict
from fairness.sample import beacon_round_line, resign, sample_bundle
from fairness.verify import KeyRing, main, verify_lines

KEY = private_key_from_hex(hashlib.sha256(b"strict lines").hexdigest())
CHAIN = create_chain(8, head=hashlib.sha256(b"strict chain").hexdigest())
KINDS = (
    (["alice"], "classic", None),
    (["alice"], "atlantic_city", None),
    (["a", "b", "c"], "duel_classic", None),
    (["a", "b", "c"], "duel", None),
    (["a", "b"], "duel_classic", "dealer misdeal"),
)


def played(
    nonce: int = 3, seeds: tuple[str, ...] = ("alice", "bob"), **kwargs: Any
) -> dict[str, Any]:
    return sample_bundle(
        round_id=f"r{nonce}", server_seed=CHAIN.seed(nonce), client_seeds=list(seeds),
        nonce=nonce, private_key=KEY, **kwargs,
    )  # fmt: skip


PLAY = load()


def failures(line: dict[str, Any] | str) -> list[str]:
    """The line's failures without the proof of play. With it (which decodes the events first,
    and then spares the strict check the look at the data of a round that decoded), the
    same failures come first."""
    text = line if isinstance(line, str) else canonical_text(line)
    (report,) = verify_lines([text], KeyRing())
    (played_report,) = verify_lines([text], KeyRing(), PLAY)
    assert played_report.failures[: len(report.failures)] == report.failures
    assert bool(played_report.failures) >= bool(report.failures)
    return report.failures


def index_of(line: dict[str, Any], type_: str) -> int:
    return next(i for i, e in enumerate(line["events"]) if e["type"] == type_)


# --- the event-data table is the engine's ---------------------------------------------------


def _shape(cls: type[Any]) -> dict[str, str | None]:
    """A dataclass's fields as fairness.bundle writes them: None, "Name", "[Name]" or "Name?"
    (`Name | None`: left out of the data when None)."""
    from casino.engine.events import _NESTED

    hints = typing.get_type_hints(cls)
    out: dict[str, str | None] = {}
    for f in dataclasses.fields(cls):
        hint = hints[f.name]
        args = typing.get_args(hint)
        if hint in _NESTED:
            out[f.name] = hint.__name__
        elif typing.get_origin(hint) in (typing.Union, types.UnionType) and type(None) in args:
            (inner,) = [a for a in args if a is not type(None)]
            assert inner in _NESTED, (cls, f.name)
            out[f.name] = f"{inner.__name__}?"
        elif typing.get_origin(hint) is tuple:
            (inner, *_) = typing.get_args(hint)
            out[f.name] = f"[{inner.__name__}]" if inner in _NESTED else "[]"
        else:
            out[f.name] = None
    return out


def test_the_event_data_table_is_the_engines_dataclasses_exactly() -> None:
    from casino.engine.events import _NESTED, EVENT_TYPES

    assert list(EVENT_DATA) == list(EVENT_TYPES)  # every type, in the engine's order
    for type_, cls in EVENT_TYPES.items():
        assert list(EVENT_DATA[type_].items()) == list(_shape(cls).items()), type_
    nested = {cls.__name__: tuple(f.name for f in dataclasses.fields(cls)) for cls in _NESTED}
    assert nested == NESTED
    assert list(NESTED) == [cls.__name__ for cls in _NESTED]
    for cls in _NESTED:  # no nesting below one level (the fast check relies on it)
        assert all(kind is None for kind in _shape(cls).values()), cls


def test_the_engines_decoded_events_prove_the_strict_data_shapes() -> None:
    from casino.engine.events import EVENT_TYPES, BetPlaced, RoundOpened

    assert isinstance(PLAY, PlayCheck) and PLAY.shapes_strict
    assert shapes_strict(EVENT_TYPES)

    @dataclasses.dataclass(frozen=True)
    class Bet:  # one field more than the table's BetPlaced
        player_id: str
        box: int
        amount: int
        currency: str

    @dataclasses.dataclass(frozen=True)
    class Participant:  # a seat without its options
        player_id: str
        client_seed: str

    assert not shapes_strict({**EVENT_TYPES, "BetPlaced": Bet})
    assert not shapes_strict({k: v for k, v in EVENT_TYPES.items() if v is not BetPlaced})
    hints = typing.get_type_hints(RoundOpened)
    fields = [(f.name, hints[f.name]) for f in dataclasses.fields(RoundOpened)]
    swapped = [(n, tuple[Participant, ...] if n == "participants" else h) for n, h in fields]
    opened = dataclasses.make_dataclass("RoundOpened", swapped, frozen=True)
    assert not shapes_strict({**EVENT_TYPES, "RoundOpened": opened})


def test_the_receipt_shapes_are_the_receipts() -> None:
    from fairness.receipt import BEACON_FIELDS, RECEIPT_KEYS_V2, SETTLED_FIELDS, VOID_FIELDS

    line = played()
    receipt = line["receipt"]
    assert set(receipt) == RECEIPT_KEYS
    assert set(receipt["participants"][0]) == set(RECEIPT_ITEMS["ReceiptParticipant"])
    assert set(receipt["cards"][0]) == set(RECEIPT_ITEMS["ReceiptCard"])
    assert set(RECEIPT_NESTED) <= RECEIPT_KEYS
    assert tuple(PAYOUTS["settled"]) == SETTLED_FIELDS and tuple(PAYOUTS["voided"]) == VOID_FIELDS
    v2 = beacon_round_line("duel")["receipt"]
    assert set(v2) == RECEIPT_KEYS_V2 == RECEIPT_KEYS | {"beacon"}
    assert tuple(v2["beacon"]) == BEACON_FIELDS == RECEIPT_ITEMS["ReceiptBeacon"]
    assert set(RECEIPT_NESTED_V2) <= RECEIPT_KEYS_V2


def test_fairness_v1_lines_have_the_event_data_without_the_beacon() -> None:
    assert list(EVENT_DATA_V1) == [t for t in EVENT_DATA if t not in BEACON_EVENTS]
    assert set(BEACON_EVENTS) == {"BeaconAwaited", "BeaconRecorded"}
    assert "beacon" not in EVENT_DATA_V1["RoundOpened"]
    assert EVENT_DATA["RoundOpened"] == {**EVENT_DATA_V1["RoundOpened"], "beacon": "BeaconSpec?"}
    assert all(EVENT_DATA_V1[t] == EVENT_DATA[t] for t in EVENT_DATA_V1 if t != "RoundOpened")


@pytest.mark.parametrize(("seeds", "ruleset", "void"), KINDS)
def test_played_rounds_of_every_kind_are_strict_lines(
    seeds: list[str], ruleset: str, void: str | None
) -> None:
    for nonce in (1, 2, 5):
        line = played(nonce, tuple(seeds), ruleset=ruleset, void_reason=void)
        text = canonical_text(line)
        assert line["format"] == BUNDLE_FORMAT
        assert line_failures(parse_line(text)) == []
        assert duplicated_key(text, parse_line(text)) is None
        assert failures(text) == []
    # prev_hash on every event is allowed (docs/fairness.md)
    prev = "0" * 64
    for event in line["events"]:
        event["prev_hash"], prev = prev, event["hash"]
    assert failures(line) == []


# --- duplicated keys ----------------------------------------------------------------------


def test_a_key_twice_with_another_value_fails_the_line_wherever_it_is() -> None:
    line = played()
    text = canonical_text(line)
    dealt = index_of(line, "PlayerCardDealt")
    card = line["events"][dealt]["data"]["card"]
    other = "AS" if card != "AS" else "KD"
    at = text.rindex('"card":"', 0, text.index(line["events"][dealt]["hash"]))
    cases = {
        # the event data: parsers that keep the first value see another card than the last
        text[:at] + f'"card":"{other}",' + text[at:]: (
            f'bundle: duplicated key "card" in events[{dealt}].data (PlayerCardDealt)'
        ),
        # the receipt, after the signed one
        text.replace('"receipt":{', '"receipt":{"nonce":7,', 1): (
            'bundle: duplicated key "nonce" in receipt'
        ),
        # the line itself
        text[:-1] + ',"key_id":"0000000000000000"}': 'bundle: duplicated key "key_id" in the line',
        # a nested object in an event's data (the events come first in canonical order)
        text.replace('"participants":[{', '"participants":[{"player_id":"mallory",', 1): (
            'bundle: duplicated key "player_id" in events[0].data.participants[0] (RoundOpened)'
        ),
    }
    for tampered, expected in cases.items():
        assert tampered != text
        assert failures(tampered) == [expected]


def test_a_key_twice_with_the_same_value_fails_too_and_other_layouts_pass() -> None:
    line = played()
    text = canonical_text(line)
    assert failures(text.replace('{"events":', '{"format":"fairness-v1-bundle","events":')) == [
        'bundle: duplicated key "format" in the line'
    ]
    pretty = json.dumps(line, indent=1)  # no duplicate: read again, found none, verified
    assert failures(pretty) == []
    assert failures(json.dumps(line, ensure_ascii=True, sort_keys=True) + "\r\n") == []


def test_the_cli_names_a_duplicated_key_with_round_unknown(tmp_path: Any) -> None:
    text = canonical_text(played(2))
    file = tmp_path / "b.jsonl"
    file.write_text(text.replace('"receipt":{', '"receipt":{"outcome":"voided",', 1) + "\n")
    out = io.StringIO()
    assert main([str(file), "--no-replay"], out=out) == 1
    assert out.getvalue().splitlines()[0] == (
        'FAIL line 1 round ?: bundle: duplicated key "outcome" in receipt'
    )


# --- formats and fields -------------------------------------------------------------------


@pytest.mark.parametrize("ruleset", ["duel", "duel_classic"])
@pytest.mark.parametrize("void", [False, True])
def test_beacon_rounds_are_strict_v2_lines(ruleset: str, void: bool) -> None:
    for seed in (0, 1, 2):
        line = beacon_round_line(ruleset, seed=seed, void=void)
        text = canonical_text(line)
        assert line["format"] == BUNDLE_FORMAT_V2
        assert line_failures(parse_line(text)) == []
        assert line_failures(parse_line(text), data_decoded=True) == []
        assert failures(text) == []


def test_an_unknown_or_missing_format_fails() -> None:
    line = played()
    assert failures({**line, "format": "fairness-v3-bundle"}) == [
        'bundle: unknown format "fairness-v3-bundle" (this verifier reads fairness-v1-bundle, '
        "fairness-v2-bundle and fairness-v1-chain lines)"
    ]
    del line["format"]
    assert failures(line) == [
        'bundle: no format (a round line says "format": "fairness-v1-bundle")',
        'bundle: missing field "format" in the line',
    ]
    beacon = beacon_round_line("duel")
    del beacon["format"]
    assert failures(beacon) == [
        'bundle: no format (a round line says "format": "fairness-v2-bundle")',
        'bundle: missing field "format" in the line',
    ]


def test_a_v1_line_carrying_beacon_data_fails_as_unknown() -> None:
    """The beacon's fields are fairness-v2's: a fairness-v1-bundle line that has them is not
    read as a v1 line with extras, nor as a v2 line."""
    line = beacon_round_line("duel_classic", seed=1)
    awaited, recorded = index_of(line, "BeaconAwaited"), index_of(line, "BeaconRecorded")
    expected = [
        'bundle: unknown field "beacon" in receipt',
        'bundle: unknown field "beacon" in events[0].data (RoundOpened)',
        f'bundle: unknown event type "BeaconAwaited" in events[{awaited}] (a beacon round is '
        "a fairness-v2-bundle line)",
        f'bundle: unknown event type "BeaconRecorded" in events[{recorded}] (a beacon round is '
        "a fairness-v2-bundle line)",
    ]
    found = failures({**line, "format": BUNDLE_FORMAT})
    assert found[:4] == expected
    # the RoundOpened's beacon alone, in a v1 line otherwise without beacon data: refused too,
    # with or without the proof of play's strict decoding (which takes a RoundOpened.beacon)
    plain = played()
    plain["events"][0]["data"]["beacon"] = line["events"][0]["data"]["beacon"]
    forged = resign(plain, KEY)
    text = canonical_text(forged)
    message = 'bundle: unknown field "beacon" in events[0].data (RoundOpened)'
    assert line_failures(parse_line(text)) == [message]
    assert line_failures(parse_line(text), data_decoded=True) == [message]
    assert failures(text)[0] == message
    # a beacon's null is not its absence
    nulled = played()
    nulled["events"][0]["data"]["beacon"] = None
    assert failures(resign(nulled, KEY))[0] == message


def test_a_v2_lines_beacon_fields_are_strict() -> None:
    line = beacon_round_line("duel", seed=2)
    line["events"][0]["data"]["beacon"]["note"] = "x"
    del line["events"][0]["data"]["beacon"]["wait_s"]
    awaited = index_of(line, "BeaconAwaited")
    line["events"][awaited]["data"]["extra"] = 1
    line["receipt"]["beacon"]["extra"] = 1
    found = line_failures(parse_line(canonical_text(line)))
    assert found == [
        'bundle: unknown field "extra" in receipt.beacon',
        'bundle: unknown field "note" in events[0].data.beacon (RoundOpened)',
        'bundle: missing field "wait_s" in events[0].data.beacon (RoundOpened)',
        f'bundle: unknown field "extra" in events[{awaited}].data (BeaconAwaited)',
    ]
    nulled = beacon_round_line("duel", seed=2)
    nulled["events"][0]["data"]["beacon"] = None
    assert line_failures(parse_line(canonical_text(nulled))) == [
        "bundle: events[0].data.beacon (RoundOpened) is not an object"
    ]
    v1_receipt = beacon_round_line("duel", seed=2)
    del v1_receipt["receipt"]["beacon"]
    assert line_failures(v1_receipt) == ['bundle: missing field "beacon" in receipt']


def test_an_unknown_field_at_the_top_level_fails() -> None:
    line = played()
    assert failures({**line, "note": "trust me"}) == ['bundle: unknown field "note" in the line']
    without_key = {k: v for k, v in line.items() if k != "public_key"}  # optional
    keys = KeyRing({line["key_id"]: line["public_key"]})
    (report,) = verify_lines([canonical_text(without_key)], keys)
    assert report.failures == []


def test_an_unknown_field_in_an_event_fails() -> None:
    line = played()
    bet = index_of(line, "BetPlaced")
    line["events"][bet]["amount"] = 1  # outside the hashed body: only strictness sees it
    assert failures(line) == [f'bundle: unknown field "amount" in events[{bet}] (BetPlaced)']


def test_an_unknown_field_in_event_data_fails_though_rechained_and_resigned() -> None:
    line = played()
    bet = index_of(line, "BetPlaced")
    line["events"][bet]["data"]["currency"] = "USDC"
    forged = resign(line, KEY)
    assert failures(forged) == [
        f'bundle: unknown field "currency" in events[{bet}].data (BetPlaced)'
    ]
    nested = played()
    nested["events"][0]["data"]["participants"][1]["vip"] = True
    nested["events"][0]["data"]["options"]["max_payout"] = 1
    assert failures(resign(nested, KEY)) == [
        'bundle: unknown field "vip" in events[0].data.participants[1] (RoundOpened)',
        'bundle: unknown field "max_payout" in events[0].data.options (RoundOpened)',
    ]


def test_a_missing_field_in_event_data_is_named() -> None:
    line = played()
    dealt = index_of(line, "PlayerCardDealt")
    del line["events"][dealt]["data"]["hidden"]
    assert failures(resign(line, KEY)) == [
        f'bundle: missing field "hidden" in events[{dealt}].data (PlayerCardDealt)'
    ]


def test_an_unknown_field_in_the_receipt_fails_though_resigned() -> None:
    line = played()
    line["receipt"]["bonus"] = 5
    assert failures(resign(line, KEY)) == ['bundle: unknown field "bonus" in receipt']
    settled = played()
    settled["receipt"]["payouts"]["hands"][0]["tip"] = 1
    settled["receipt"]["cards"][2]["face_up"] = True
    found = failures(resign(settled, KEY))
    assert found[:2] == [
        'bundle: unknown field "face_up" in receipt.cards[2]',
        'bundle: unknown field "tip" in receipt.payouts.hands[0]',
    ]  # (and the payouts then differ from the RoundSettled event's)
    assert found[2:] == [
        "outcome: the receipt's payouts differ from the settled event's "
        "(payouts.hands[0].tip: receipt 1, events None)"
    ]
    voided = played(4, ("a", "b"), void_reason="misdeal")
    voided["receipt"]["payouts"]["refunds"][0]["currency"] = "USDC"
    del voided["receipt"]["payouts"]["reversed_fee"]
    found = failures(resign(voided, KEY))
    assert found[:2] == [
        'bundle: missing field "reversed_fee" in receipt.payouts',
        'bundle: unknown field "currency" in receipt.payouts.refunds[0]',
    ]  # (and the payouts then differ from the RoundVoided event's)
    assert found[2].startswith("outcome: the receipt's payouts differ from the voided event's")


def test_an_unknown_event_type_or_schema_version_fails() -> None:
    line = played()
    bet = index_of(line, "BetPlaced")
    line["events"][bet]["type"] = "BetPlacedTwice"
    assert failures(resign(line, KEY))[0] == (
        f'bundle: unknown event type "BetPlacedTwice" in events[{bet}]'
    )
    newer = played()
    newer["events"][bet]["schema_version"] = 2
    found = failures(newer)
    assert found[0] == (
        f"bundle: events[{bet}] (BetPlaced) has schema_version 2; {BUNDLE_FORMAT} has 1"
    )


def test_malformed_shapes_fail_with_messages_not_exceptions() -> None:
    line = played()
    for mangle in (
        lambda x: x["receipt"].__setitem__("participants", {"a": 1}),
        lambda x: x["receipt"].__setitem__("cards", [1, 2]),
        lambda x: x["events"][0]["data"].__setitem__("options", []),
        lambda x: x["events"].__setitem__(1, "event"),
        lambda x: x["events"][2].__setitem__("type", ["BetPlaced"]),
        lambda x: x["events"][2].__setitem__("data", None),
        lambda x: x["events"][2].__setitem__("schema_version", True),
        lambda x: x.__setitem__("receipt", []),
    ):
        copy = json.loads(json.dumps(line))
        mangle(copy)
        found = failures(copy)
        assert found and found[0].startswith("bundle: "), found
