"""The verifier: valid rounds pass; each tamper fails with a reason naming what and where."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given, settings
from hypothesis import strategies as st

from fairness.canonical import GENESIS, canonical_text
from fairness.chain import create_chain
from fairness.receipt import key_id, private_key_from_hex, public_key_bytes
from fairness.sample import resign, sample_bundle
from fairness.shoe import shoe_cards
from fairness.verify import (
    KeyRing,
    format_report,
    load_engine_replay,
    main,
    verify_lines,
    verify_round,
)
from tests.fairness.terminal import verify_on_a_terminal

KEY = private_key_from_hex(hashlib.sha256(b"operator").hexdigest())
CHAIN = create_chain(10, head=hashlib.sha256(b"chain").hexdigest())


def bundle(nonce: int = 4, seeds: tuple[str, ...] = ("alice", "bob.2")) -> dict[str, Any]:
    return sample_bundle(
        round_id=f"r{nonce}",
        server_seed=CHAIN.seed(nonce),
        client_seeds=list(seeds),
        nonce=nonce,
        private_key=KEY,
    )


def failures(line: dict[str, Any], keys: KeyRing | None = None) -> list[str]:
    return verify_round(line, keys or KeyRing()).failures


def dealt(line: dict[str, Any]) -> list[dict[str, Any]]:
    return [e["data"] for e in line["events"] if e["type"].endswith("CardDealt")]


def test_a_valid_round_verifies() -> None:
    line = bundle()
    report = verify_round(line, KeyRing())
    assert report.ok, report.failures
    assert report.cards == len(line["receipt"]["cards"]) >= 6
    assert format_report(report).startswith("OK   line 0 round r4: ")


def test_one_changed_card_is_named_with_its_position() -> None:
    line = bundle()
    shoe = shoe_cards(CHAIN.seed(4), "alice|bob.2", 4, 10)
    card = dealt(line)[2]
    card["card"] = "AS" if shoe[2] != "AS" else "KD"
    line["receipt"]["cards"][2]["card"] = card["card"]
    forged = resign(line, KEY)  # the forger even re-chains and re-signs
    assert failures(forged) == [f"cards: position 2 dealt {card['card']}, the shoe has {shoe[2]}"]


def test_one_changed_seed_fails_against_the_commitment() -> None:
    line = bundle()
    other = CHAIN.seed(5)
    line["receipt"]["server_seed"] = other
    for event in line["events"]:
        if event["type"] == "ServerSeedRevealed":
            event["data"]["server_seed"] = other
    found = failures(resign(line, KEY))
    assert any(
        f.startswith(f"seed: sha256 of server seed {other} is ") and CHAIN.seed(4) in f
        for f in found
    ), found
    assert any(f.startswith("cards: position 0 dealt ") for f in found), found


def test_swapped_client_seeds_are_caught() -> None:
    line = bundle()
    line["receipt"]["client_material"] = "bob.2|alice"
    for event in line["events"]:
        if event["type"] == "BettingClosed":
            event["data"]["client_material"] = "bob.2|alice"
    found = failures(resign(line, KEY))
    assert (
        "client material: 'bob.2|alice', but the participants' seeds in seat order give "
        "'alice|bob.2'" in found
    )
    assert any(f.startswith("cards: position ") for f in found)


def test_a_skipped_position_is_caught() -> None:
    line = bundle()
    full = shoe_cards(CHAIN.seed(4), "alice|bob.2", 4, 20)
    for index, card in enumerate(dealt(line)):
        if index >= 3:  # the forger skips position 3 and deals on from 4
            card["position"], card["card"] = index + 1, full[index + 1]
    line["receipt"]["cards"] = [{"position": c["position"], "card": c["card"]} for c in dealt(line)]
    found = failures(resign(line, KEY))
    assert found[0].startswith("cards: dealt card #3 (")
    assert "is at position 4, expected 3 (no skips)" in found[0]


def test_a_bad_signature_is_caught() -> None:
    line = bundle()
    line["signature"] = line["signature"][:-2] + ("00" if line["signature"][-2:] != "00" else "11")
    assert failures(line) == [
        f"signature: not a valid Ed25519 signature of this receipt by key {line['key_id']}"
    ]


def test_a_receipt_changed_after_signing_is_caught() -> None:
    line = bundle()
    line["receipt"]["payouts"]["hands"][0]["gross_return"] += 1
    found = failures(line)
    assert found[0].startswith("signature: not a valid Ed25519 signature")
    assert "payouts.hands[0].gross_return" in found[1]


def test_an_unknown_key_id_is_caught() -> None:
    line = bundle()
    other = public_key_bytes(Ed25519PrivateKey.generate())
    published = KeyRing({key_id(other): other.hex()})
    assert failures(line, published) == [
        f"key: unknown key id {line['key_id']} (not in the published keys)"
    ]
    del line["public_key"]
    assert failures(line) == [f"key: unknown key id {line['key_id']} (no public key given)"]


def test_a_public_key_that_does_not_match_its_key_id_is_caught() -> None:
    line = bundle()
    line["public_key"] = public_key_bytes(Ed25519PrivateKey.generate()).hex()
    assert failures(line)[0].endswith(f"does not have key id {line['key_id']}")


def test_a_key_id_is_checked_against_a_public_key_seen_on_an_earlier_line() -> None:
    line = bundle()
    other_id = "0" * 16 if line["key_id"] != "0" * 16 else "1" * 16
    wrong = {**line, "key_id": other_id}
    first, second = verify_lines([json.dumps(line), json.dumps(wrong)], KeyRing())
    assert first.ok
    assert second.failures == [
        f"key: public key {line['public_key'][:16]}... does not have key id {other_id}"
    ]


def test_a_published_key_verifies_a_line_without_its_own_key() -> None:
    line = bundle()
    published = KeyRing({line["key_id"]: line.pop("public_key")})
    assert failures(line, published) == []


def test_an_edited_event_breaks_the_hash_chain_at_that_version() -> None:
    line = bundle()
    line["events"][1]["data"]["amount"] += 1
    found = failures(line)
    assert found[0].startswith("event hash: version 2 (BetPlaced) records ")


def test_a_dropped_event_is_caught() -> None:
    line = bundle()
    del line["events"][3]
    assert any("found where version 4 belongs" in f for f in failures(line))


def test_payouts_that_differ_from_the_settlement_are_caught() -> None:
    line = bundle()
    line["receipt"]["payouts"]["fee"] = 5
    assert failures(resign(line, KEY)) == [
        "outcome: the receipt's payouts differ from the settled event's "
        "(payouts.fee: receipt 5, events 0)"
    ]


def test_malformed_lines_fail_without_raising() -> None:
    good = json.dumps(bundle())
    reports = list(
        verify_lines(["not json", "[1]", "{}", good, '{"receipt": {}, "events": [{}]}'], KeyRing())
    )
    assert [r.ok for r in reports] == [False, False, False, True, False]
    assert reports[0].failures[0].startswith("bundle: line is not valid JSON")
    assert reports[4].failures[-1].startswith("bundle: malformed round data")


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_a_line_holding_nan_or_infinity_fails_as_not_json(constant: str) -> None:
    good = json.dumps(bundle())
    tampered = good[:-1] + f', "note": {constant}}}'
    untouched, with_null, report = verify_lines(
        [good, good[:-1] + ', "note": null}', tampered], KeyRing()
    )
    assert untouched.ok  # an extra key fails the line as unknown, a NaN as not JSON
    assert with_null.failures == ['bundle: unknown field "note" in the line']
    assert not report.ok
    assert report.failures == [
        f"bundle: line is not valid JSON (ValueError: {constant} is not a JSON number (money is "
        "integer micro-USDC))"
    ]


def write_bundle(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_cli_exits_0_and_prints_one_line_per_round(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = write_bundle(tmp_path / "b.jsonl", [bundle(n) for n in (1, 2, 3)])
    assert main([str(file), "--no-replay"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [o.split(":")[0] for o in out[:3]] == [f"OK   line {n} round r{n}" for n in (1, 2, 3)]
    assert out[3].startswith("3 rounds: 3 verified, 0 failed")


def test_cli_exits_1_naming_the_failure(tmp_path: Path) -> None:
    bad = bundle(2)
    bad["signature"] = "00" * 64
    keys = tmp_path / "keys.json"
    keys.write_text(
        json.dumps({"keys": [{"key_id": bad["key_id"], "public_key": bad["public_key"]}]})
    )
    file = write_bundle(tmp_path / "b.jsonl", [bundle(1), bad])
    out = subprocess.run(
        [sys.executable, "-m", "fairness.verify", str(file), "--keys", str(keys)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert out.returncode == 1, out.stderr
    assert "FAIL line 2 round r2: signature: not a valid Ed25519 signature" in out.stdout
    assert "2 rounds: 1 verified, 1 failed" in out.stdout


@pytest.mark.parametrize("how", ["file", "stdin", "jobs"])
def test_cli_a_line_that_is_not_utf8_fails_alone(tmp_path: Path, how: str) -> None:
    """Read as text, such a line stopped the run with a traceback and no report."""
    file = tmp_path / "b.jsonl"
    good = [json.dumps(bundle(n)).encode() + b"\n" for n in (1, 3)]
    file.write_bytes(good[0] + b'{"receipt": "\xff\xfe"}\n' + good[1])
    args = {"file": [str(file)], "stdin": ["-"], "jobs": [str(file), "--jobs", "2"]}[how]
    out = subprocess.run(
        [sys.executable, "-m", "fairness.verify", *args, "--no-replay"],
        input=file.read_bytes() if how == "stdin" else None, capture_output=True,
    )  # fmt: skip
    assert out.returncode == 1, out.stderr
    lines = out.stdout.decode().splitlines()
    assert lines[0].startswith("OK   line 1 round r1: ")
    assert lines[1] == (
        "FAIL line 2 round ?: bundle: line is not valid JSON (UnicodeDecodeError: 'utf-8' "
        "codec can't decode byte 0xff in position 13: invalid start byte)"
    )
    assert lines[2].startswith("OK   line 3 round r3: ")
    assert lines[3].startswith("3 rounds: 2 verified, 1 failed")
    assert out.stderr == b""


def test_cli_refuses_a_missing_file() -> None:
    assert main(["/nonexistent/bundle.jsonl"]) == 2


def test_cli_says_why_an_empty_bundle_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An empty export (say, a --since with no rounds) exited 1 with a clean-looking summary."""
    file = tmp_path / "empty.jsonl"
    file.write_text("")
    assert main([str(file)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("0 rounds: 0 verified, 0 failed")
    assert out[1] == "FAIL the bundle holds no round lines: nothing was verified"


@pytest.mark.parametrize(
    ("document", "why"),
    [
        ("nope", "JSONDecodeError: Expecting value: line 1 column 1 (char 0)"),
        ('{"keys": 5}', "TypeError: 'int' object is not iterable"),
        ('{"keys": [{"key_id": "k1"}]}', "KeyError: 'public_key'"),
    ],
)
def test_cli_names_a_keys_file_that_is_not_the_published_keys(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], document: str, why: str
) -> None:
    keys = tmp_path / "keys.json"
    keys.write_text(document)
    file = write_bundle(tmp_path / "b.jsonl", [bundle(1)])
    assert main([str(file), "--keys", str(keys)]) == 2
    assert capsys.readouterr().err == (
        f"error: --keys {keys}: not the JSON of GET /api/fairness/keys ({why})\n"
    )


def test_the_engine_replays_valid_rounds_of_every_kind() -> None:
    check = load_engine_replay()
    assert check is not None  # the rule engine is part of this repository
    for seeds, ruleset, void in (
        (["alice"], "classic", None),
        (["alice"], "atlantic_city", None),
        (["a", "b", "c"], "duel_classic", None),
        (["a", "b", "c"], "duel", None),
        (["a", "b"], "duel_classic", "dealer misdeal"),
    ):
        line = sample_bundle(
            round_id="r", server_seed=CHAIN.seed(2), client_seeds=seeds, nonce=2,
            private_key=KEY, ruleset=ruleset, void_reason=void,
        )  # fmt: skip
        report = verify_round(line, KeyRing(), replay_check=check)
        assert report.ok and report.replayed, (ruleset, report.failures)


def test_the_compiled_decoders_make_the_engines_own_events() -> None:
    from casino.engine.events import EVENT_TYPES, event_from_dict
    from fairness.replay import load_decoders

    decoders = load_decoders()
    assert decoders is not None and set(decoders) == set(EVENT_TYPES)
    seen = set()
    for seeds, ruleset, void in (
        (["alice"], "classic", None),
        (["alice"], "atlantic_city", None),
        (["a", "b", "c"], "duel_classic", None),
        (["a", "b", "c"], "duel", None),
        (["a", "b"], "duel_classic", "dealer misdeal"),
    ):
        for nonce in range(1, 9):
            line = sample_bundle(
                round_id="r", server_seed=CHAIN.seed(nonce), client_seeds=seeds, nonce=nonce,
                private_key=KEY, ruleset=ruleset, void_reason=void,
            )  # fmt: skip
            for event in line["events"]:
                engine = event_from_dict({**event["data"], "type": event["type"]})
                assert decoders[event["type"]](event["data"]) == engine
                seen.add(event["type"])
    assert len(seen) >= 12  # nested values included: participants, options, hands, refunds
    opened = next(e["data"] for e in bundle()["events"] if e["type"] == "RoundOpened")
    missing = {k: v for k, v in opened.items() if k != "commitment"}
    with pytest.raises(KeyError) as ours:
        decoders["RoundOpened"](missing)
    with pytest.raises(KeyError) as engine_error:
        event_from_dict({**missing, "type": "RoundOpened"})
    assert ours.value.args == engine_error.value.args == ("commitment",)


def test_the_engine_replay_catches_a_payout_the_rules_do_not_give() -> None:
    line = bundle(3, ("alice",))
    settled = next(e for e in line["events"] if e["type"] == "RoundSettled")
    settled["data"]["hands"][0]["gross_return"] += 10_000  # events and receipt agree, rules don't
    line["receipt"]["payouts"]["hands"][0]["gross_return"] += 10_000
    forged = resign(line, KEY)
    assert failures(forged) == []  # consistent on its face: only the engine can tell
    found = verify_round(forged, KeyRing(), replay_check=load_engine_replay()).failures
    assert found[0].startswith("play: version 12: recorded RoundSettled {")
    assert found[0].endswith(
        " (the settlement differs: hands[0].gross_return: recorded 10000, derived 0)"
    )
    assert len(found) == 1


def test_the_engine_replay_refuses_an_illegal_event_sequence() -> None:
    line = bundle(3, ("alice",))
    line["events"] = [e for e in line["events"] if e["type"] != "BetPlaced"]
    forged = resign(line, KEY)
    found = verify_round(forged, KeyRing(), replay_check=load_engine_replay()).failures
    assert len(found) == 1 and found[0].startswith("play: version 2: recorded BettingClosed"), found


def test_lines_with_prev_hash_verify_and_a_wrong_prev_hash_is_named() -> None:
    line = bundle()
    prev = "0" * 64
    for event in line["events"]:
        event["prev_hash"], prev = prev, event["hash"]
    text = json.dumps(line, sort_keys=True, separators=(",", ":"))
    assert [r.ok for r in verify_lines([text], KeyRing())] == [True]
    line["events"][2]["prev_hash"] = "f" * 64
    found = failures(line)
    assert found == [f"event hash: version 3 (BetPlaced) records prev_hash {'f' * 64}, "
                     f"expected {line['events'][1]['hash']}"]  # fmt: skip


def test_cli_with_jobs_reports_every_line_in_order(tmp_path: Path) -> None:
    lines = [bundle(n) for n in range(1, 7)]
    lines[3]["signature"] = "00" * 64
    file = write_bundle(tmp_path / "b.jsonl", lines)
    out = subprocess.run(
        [sys.executable, "-m", "fairness.verify", str(file), "--jobs", "2"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert out.returncode == 1, out.stderr
    rows = out.stdout.splitlines()
    assert [r.split(":")[0].split()[-1] for r in rows[:6]] == [f"r{n}" for n in range(1, 7)]
    assert rows[3].startswith("FAIL line 4 round r4: signature: ")
    assert rows[6].startswith("6 rounds: 5 verified, 1 failed") and "proof of play on" in rows[6]


@pytest.mark.parametrize(
    ("jobs", "why"),
    [
        ("0", "0 is outside 1.."),
        ("-3", "-3 is outside 1.."),
        ("100000", "100000 is outside 1.."),
        ("two", "'two' is not a whole number"),
    ],
)
def test_cli_refuses_a_jobs_count_it_cannot_use(tmp_path: Path, jobs: str, why: str) -> None:
    """Exit 2 naming the value, before any worker starts (0 ran one job; 100000 forked)."""
    file = write_bundle(tmp_path / "b.jsonl", [bundle(1)])
    out = subprocess.run(
        [sys.executable, "-m", "fairness.verify", str(file), "--jobs", jobs],
        capture_output=True, text=True,
    )  # fmt: skip
    assert out.returncode == 2, out.stdout
    assert f"argument --jobs: {why}" in out.stderr
    assert out.stdout == ""


BODY_KEYS = ("stream", "version", "type", "schema_version", "data", "recorded_at")


def hashed_as_written(line: dict[str, Any], event_text: Any, receipt_text: Any = None) -> str:
    """A line whose event hashes (and signature) cover texts in another layout than canonical
    JSON: `event_text(index, canonical body text)` gives the text hashed for each event, and
    `receipt_text(canonical receipt text)` the text signed. The chain and the signature are
    consistent with what is written: only the canonical form tells them apart."""
    prev, texts = GENESIS, []
    for index, event in enumerate(line["events"]):
        written = event_text(index, canonical_text({k: event[k] for k in BODY_KEYS}))
        prev = hashlib.sha256((prev + written).encode()).hexdigest()
        cut = written.index(',"recorded_at":')  # sorted keys: "hash" sits between the two
        texts.append(written[:cut] + f',"hash":"{prev}"' + written[cut:])
    receipt = {**line["receipt"], "final_event_hash": prev}
    signed = receipt_text(canonical_text(receipt)) if receipt_text else canonical_text(receipt)
    signature = KEY.sign(signed.encode()).hex()
    rest = {k: v for k, v in line.items() if k not in ("events", "receipt", "signature")}
    events = '{"events":[' + ",".join(texts) + "],"
    return f'{events}{canonical_text(rest)[1:-1]},"receipt":{signed},"signature":"{signature}"}}'


def first_report(text: str) -> Any:
    return next(iter(verify_lines([text], KeyRing(), load_engine_replay())))


def test_a_line_hashed_and_signed_canonically_verifies_from_its_text() -> None:
    text = hashed_as_written(bundle(2), lambda index, body: body)
    assert text == canonical_text(json.loads(text))
    assert first_report(text).failures == []


def test_an_event_hashed_over_a_duplicate_key_fails_though_its_chain_is_consistent() -> None:
    # The hashed text says "card":"AS" then the real card; parsers that keep the last key see
    # the real card, parsers that keep the first see AS. The spec's hash is over the
    # canonical JSON of the event, which has one "card": the recorded hash is not it.
    line = bundle(2)
    first = next(i for i, e in enumerate(line["events"]) if e["type"] == "PlayerCardDealt")

    def duplicate(index: int, body: str) -> str:
        return body.replace('"card":"', '"card":"AS","card":"', 1) if index == first else body

    text = hashed_as_written(line, duplicate)
    failures = verify_round(json.loads(text), KeyRing()).failures
    assert failures[0].startswith(f"event hash: version {first + 1} (PlayerCardDealt) records ")
    # Read as a bundle line, it fails before any hash: a key twice (fairness.bundle).
    assert first_report(text).failures == [
        f'bundle: duplicated key "card" in events[{first}].data (PlayerCardDealt)'
    ]


@pytest.mark.parametrize(
    "layout",
    [
        lambda body: body.replace(":", ": ", 1),  # a space
        lambda body: body.replace("}", "} ", 1),  # a space after a value
        lambda body: body.replace('"type":', '"type":"x","type":', 1),  # a duplicate key
    ],
)
def test_an_event_hashed_in_another_layout_fails(layout: Any) -> None:
    text = hashed_as_written(bundle(2), lambda i, body: layout(body) if i == 3 else body)
    hashed = verify_round(json.loads(text), KeyRing()).failures
    assert hashed[0].startswith("event hash: version 4 ")
    duplicated = 'bundle: duplicated key "type" in events[3] (BettingClosed)'
    assert first_report(text).failures[0].startswith(("event hash: version 4 ", duplicated))


def test_a_receipt_signed_in_another_layout_fails() -> None:
    line = bundle(2)

    def reordered(text: str) -> str:  # the same receipt, its first two keys swapped
        receipt = json.loads(text)
        keys = sorted(receipt)
        keys[0], keys[1] = keys[1], keys[0]
        return json.dumps({k: receipt[k] for k in keys}, separators=(",", ":"))

    text = hashed_as_written(line, lambda index, body: body, reordered)
    assert json.loads(text)["receipt"] == line["receipt"]  # it says the same thing
    assert first_report(text).failures == [
        f"signature: not a valid Ed25519 signature of this receipt by key {line['key_id']}"
    ]


def flip(text: str, at: int) -> str:
    """The text with the character at `at` replaced by another of its kind (digit, rank)."""
    old = text[at]
    new = str((int(old) + 1) % 10) if old.isdigit() else ("K" if old != "K" else "Q")
    return text[:at] + new + text[at + 1 :]


def test_one_changed_character_of_a_canonical_line_is_caught_where_it_lands() -> None:
    line = bundle(2)
    text = canonical_text(line)
    receipt_at = text.index('"receipt":')
    bet = next(e for e in line["events"] if e["type"] == "BetPlaced")["data"]["amount"]
    first, second = dealt(line)[0]["card"], dealt(line)[1]["card"]
    second_at = text.index(f'"card":"{second}"', text.index(f'"card":"{first}"') + 1)
    payout = line["receipt"]["payouts"]["hands"][0]["gross_return"]
    cases = {
        "a digit of a bet, in its event": (text.index(f'"amount":{bet}') + 9, "event hash: "),
        "the rank of the second card, in its event": (second_at + 8, "event hash: "),
        "a digit of a payout, in the receipt": (
            text.index(f'"gross_return":{payout}', receipt_at) + 15,
            "signature: not a valid Ed25519 signature",
        ),
        "a hex digit of the signature": (
            text.index('"signature":"') + 20,
            "signature: not a valid Ed25519 signature",
        ),
    }
    assert second_at < receipt_at and first_report(text).failures == []
    for name, (at, expected) in cases.items():
        failures = first_report(flip(text, at)).failures
        assert failures and failures[0].startswith(expected), (name, failures)


def test_other_layouts_verify_by_re_encoding() -> None:
    line = bundle(2)
    pretty = json.dumps(line, indent=2)
    reordered = json.dumps(dict(reversed(list(line.items()))))
    lines = [pretty.replace("\n", " "), reordered]
    assert [r.ok for r in verify_lines(lines, KeyRing())] == [True, True]


def test_a_second_events_or_receipt_key_cannot_smuggle_a_forgery_past_the_checks() -> None:
    genuine = bundle(2)
    text = canonical_text(genuine)
    forged_events = json.loads(json.dumps(genuine["events"]))
    dealt = next(e for e in forged_events if e["type"].endswith("CardDealt"))
    dealt["data"]["card"] = "AS" if dealt["data"]["card"] != "AS" else "KD"
    # JSON parsers keep the last duplicate key: the forged events, after the genuine ones.
    smuggled = text[:-1] + ',"events":' + json.dumps(forged_events, separators=(",", ":")) + "}"
    forged_receipt = {**genuine["receipt"], "server_seed": CHAIN.seed(3)}
    sneaky = text.replace(
        ',"signature":"',
        ',"receipt":' + json.dumps(forged_receipt, separators=(",", ":")) + ',"signature":"',
    )
    reports = [verify_round(json.loads(t), KeyRing()) for t in (smuggled, sneaky)]
    assert [r.ok for r in reports] == [False, False]
    assert any(f.startswith("event hash: version ") for f in reports[0].failures)
    assert reports[1].failures[0].startswith("signature: not a valid Ed25519 signature")
    # Read as bundle lines, both fail before any check: a key twice (fairness.bundle).
    assert [r.failures for r in verify_lines([smuggled, sneaky], KeyRing())] == [
        ['bundle: duplicated key "events" in the line'],
        ['bundle: duplicated key "receipt" in the line'],
    ]


def test_progress_is_shown_on_a_terminal(tmp_path: Path) -> None:
    file = tmp_path / "many.jsonl"
    chain = create_chain(260, head=hashlib.sha256(b"many").hexdigest())
    # 260 rounds of one chain (the same round 260 times fails: a round id repeated)
    rounds = [
        sample_bundle(
            round_id=f"r{k}", server_seed=chain.seed(k), client_seeds=["a"], nonce=k,
            private_key=KEY,
        )
        for k in range(1, 261)
    ]  # fmt: skip
    file.write_text("".join(canonical_text(line) + "\n" for line in rounds))
    out, progress = verify_on_a_terminal(str(file), "--quiet", "--no-replay")
    assert out.returncode == 0
    assert "\r250 rounds, 0 failed, " in progress
    assert out.stdout.startswith("260 rounds: 260 verified, 0 failed")


MUTANT_LINE = canonical_text(bundle(5, ("alice", "b")))


def _meaning(text: str) -> Any:
    """What a line says, up to what does not matter (hex case, the format label and any other
    top-level key the verifier does not read, e.g. "format" with a letter changed)."""
    read = ("receipt", "signature", "key_id", "public_key", "events")
    line = {k: v for k, v in json.loads(text).items() if k in read}
    for key in ("signature", "public_key"):
        if isinstance(line.get(key), str):
            line[key] = line[key].lower()
    return line


@settings(max_examples=200, deadline=None)
@given(
    st.integers(min_value=0, max_value=len(MUTANT_LINE) - 1),
    st.sampled_from('0123456789abcdefAS"{}[],:x \\'),
)
def test_no_single_character_change_that_alters_the_round_verifies(
    position: int, char: str
) -> None:
    mutant = MUTANT_LINE[:position] + char + MUTANT_LINE[position + 1 :]
    report = next(iter(verify_lines([mutant], KeyRing())))
    if report.ok:
        assert _meaning(mutant) == _meaning(MUTANT_LINE), (position, char)


def test_absurd_lines_fail_cleanly() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    odd = json.dumps({"receipt": {"round_id": 1}, "events": [[]]})
    reports = list(verify_lines([deep, odd], KeyRing()))
    assert [r.ok for r in reports] == [False, False]
    assert reports[0].failures[0].startswith("bundle: line is not valid JSON (RecursionError")
    assert reports[1].failures[-1].startswith("bundle: malformed round data")


def test_a_revealed_card_that_differs_from_the_dealt_one_is_caught() -> None:
    line = sample_bundle(
        round_id="r", server_seed=CHAIN.seed(2), client_seeds=["a", "b", "c"], nonce=2,
        private_key=KEY, ruleset="duel",
    )  # fmt: skip
    revealed = next(e for e in line["events"] if e["type"] == "CardsRevealed")
    shown = revealed["data"]["cards"][0]
    was = shown["card"]
    shown["card"] = "AS" if was != "AS" else "KD"
    assert failures(resign(line, KEY)) == [
        f"cards: CardsRevealed shows {shown['card']} at position {shown['position']}, "
        f"dealt was {was}"
    ]


def _stdlib_parse(text: str) -> tuple[str, Any]:
    """What the standard library's parser alone makes of a line: ("ok", value) or the error."""
    from fairness.bundle import _DECODER

    try:
        return "ok", _DECODER.decode(text)
    except (ValueError, RecursionError) as exc:
        return type(exc).__name__, str(exc)


def _parsed(text: str) -> tuple[str, Any]:
    from fairness.bundle import parse_line

    try:
        return "ok", parse_line(text)
    except (ValueError, RecursionError) as exc:
        return type(exc).__name__, str(exc)


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1.5}', '{"a": -0.0}', "[1e5]", "[1E5]", '{"a": [1, [2, 3.25]]}',
        "[18446744073709551616]", "[-9223372036854775809]", "[12345678901234567890123]",
        '"\\ud800"', '["\\udc00\\ud800"]', '"\\ud83d\\ude00"', '{"a": 1, "a": 2, "b": 3}',
        " [1] \n", "[1,]", "01", '"\x01"', "\ufeff[]", "NaN", "[-Infinity]", "",
        "[" * 993 + "]" * 993, "[" * 400 + "]" * 400, '{"x": "' + "[" * 600 + '"}',
    ],
)  # fmt: skip
def test_the_fast_parser_gives_the_standard_librarys_value_or_error(text: str) -> None:
    assert _parsed(text) == _stdlib_parse(text)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text() | st.floats(allow_nan=True),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(json_values, st.sampled_from([None, 0, 2]), st.booleans())
def test_the_fast_parser_agrees_with_the_standard_library_on_any_json(
    value: Any, indent: int | None, ascii_only: bool
) -> None:
    text = json.dumps(value, indent=indent, ensure_ascii=ascii_only)
    assert _parsed(text) == _stdlib_parse(text)


def test_real_lines_take_the_fast_parser_and_deeper_ones_the_standard_library() -> None:
    from fairness import bundle as bundle_module

    fast = bundle_module._FAST
    assert fast is not None  # msgspec is pinned in requirements.txt
    for players in (["a"], ["a", "b", "c"]):
        line = canonical_text(
            sample_bundle(
                round_id="r", server_seed=CHAIN.seed(3), client_seeds=players, nonce=3,
                private_key=KEY,
            )
        )  # fmt: skip
        assert fast(line) == json.loads(line)
    depth = bundle_module._FAST_DEPTH
    fits, deeper = "[" * depth + "]" * depth, "[" * (depth + 1) + "]" * (depth + 1)
    assert fast(fits) == json.loads(fits)
    with pytest.raises(ValueError):  # msgspec.ValidationError: left to the standard library
        fast(deeper)
    assert _parsed(deeper) == _stdlib_parse(deeper) == ("ok", json.loads(deeper))


def test_a_float_anywhere_in_a_line_still_fails_as_not_json() -> None:
    good = canonical_text(bundle())
    for tampered in (
        good.replace('"nonce":4,', '"nonce":4.0,', 1),
        good.replace('"version":1}', '"version":1e0}', 1),
        good[:-1] + ',"note":[0.5]}',
    ):
        assert tampered != good
        (report,) = verify_lines([tampered], KeyRing())
        assert report.failures[0].startswith("bundle: line is not valid JSON (ValueError: number")


def _bets_reordered(original: list[Any], objects: list[Any]) -> bool:
    """Whether `objects` is `original` with its bets in another order: a legal stream at a
    banked table, where each player bets when they like (a duel's open places every stake
    in seat order)."""
    bets = [i for i, o in enumerate(original) if o.type == "BetPlaced"]
    others = [i for i in range(len(original)) if i not in bets]
    return (
        original[0].ruleset != "duel"
        and len(objects) == len(original)
        and all(objects[i] is original[i] for i in others)
        and sorted(map(repr, (objects[i] for i in bets)))
        == sorted(map(repr, (original[i] for i in bets)))
    )


def _folded_rounds() -> list[tuple[dict[str, Any], list[Any], list[Any]]]:
    """Engine events of sample rounds of every kind, and card runs tampered in several ways."""
    import dataclasses

    from fairness.replay import load_decoders

    decoders = load_decoders()
    assert decoders is not None
    rounds = []
    kinds = (
        (["alice"], "classic"),
        (["alice"], "atlantic_city"),
        (["a", "b", "c"], "duel_classic"),
        (["a", "b", "c"], "duel"),
    )
    for seeds, ruleset in kinds:
        for nonce in range(1, 6):
            line = sample_bundle(
                round_id="r", server_seed=CHAIN.seed(nonce), client_seeds=seeds, nonce=nonce,
                private_key=KEY, ruleset=ruleset,
            )  # fmt: skip
            objects = [decoders[e["type"]](e["data"]) for e in line["events"]]
            variants = [objects]
            cards = [i for i, o in enumerate(objects) if o.type.endswith("CardDealt")]
            a, b = cards[1], cards[2]
            swapped = list(objects)
            swapped[a], swapped[b] = swapped[b], swapped[a]
            moved = list(objects)
            moved[a] = dataclasses.replace(moved[a], position=moved[a].position + 1)
            dropped = objects[:a] + objects[a + 1 :]
            doubled = objects[: a + 1] + objects[a:]
            variants += [swapped, moved, dropped, doubled]
            if objects[a].type == "PlayerCardDealt":
                stranger = list(objects)
                stranger[a] = dataclasses.replace(objects[a], player_id="nobody")
                variants.append(stranger)
            variants += _tampered_deals_and_bets(objects)
            rounds += [(line["receipt"], objects, variant) for variant in variants]
    return rounds


def _tampered_deals_and_bets(objects: list[Any]) -> list[list[Any]]:
    """The first deal and the bets changed: positions that are bools, cards that are not
    cards, hands and boxes that do not exist, cards short or twice, bets twice, by a
    stranger or in another order."""
    import dataclasses

    from casino.engine.events import HandDoubled

    out = []
    first = next(i for i, o in enumerate(objects) if o.type.endswith("CardDealt"))
    bets = [i for i, o in enumerate(objects) if o.type == "BetPlaced"]

    def changed(index: int, **fields: Any) -> list[Any]:
        copy = list(objects)
        copy[index] = dataclasses.replace(objects[index], **fields)
        return copy

    out.append(changed(first + 1, position=True) if first + 1 < len(objects) else objects)
    out.append(changed(first, position=True))  # position 0 as false: 0 == False
    out.append(changed(first, card="ZZ"))  # not a card: refused at that card
    if objects[first].type == "PlayerCardDealt":
        out.append(changed(first, hand=1))  # no such hand
        out.append(changed(first, hand=False))  # hand 0 as false
        out.append(changed(first, box=1))  # another box of the same player
        out.append(changed(first, box="0"))
    out.append(objects[:first] + objects[first + 2 :])  # the deal two cards short
    out.append(objects[: first + 1] + objects[first:])  # a card twice
    if bets:
        b = objects[bets[0]]
        doubled = HandDoubled(b.player_id, b.box, 0, b.amount)  # before the first card
        out.append([*objects[:first], doubled, *objects[first:]])
        out.append(objects[: bets[0] + 1] + objects[bets[0] :])  # the same bet twice
        out.append(changed(bets[0], box="0"))  # a box that is not an int
        out.append(changed(bets[0], box=True))
        out.append(changed(bets[-1], player_id="nobody"))  # no seat: refused
        out.append(changed(bets[0], player_id="nobody"))
        out.append(changed(bets[0], box=1))  # a second box of the same player
        if len(bets) > 1:  # the seats bet in reverse order: sorted into seat order
            reverse = list(objects)
            for i, j in zip(bets, reversed(bets), strict=True):
                reverse[i] = objects[j]
            out.append(reverse)
    return out


def test_the_proof_of_play_refuses_every_tampered_deal_bet_and_card_run() -> None:
    """Every rewrite of the sample rounds' cards and bets (swapped, moved, dropped, doubled,
    given to a stranger, a non-card, a bet out of order) that changes the stream fails the
    proof of play, and every untouched round passes."""
    from casino.engine.events import event_to_dict
    from fairness.replay import load

    check = load()
    assert check is not None
    refused = passed = 0
    for receipt, original, objects in _folded_rounds():
        events = []
        for obj in objects:  # as a forger writes them into a bundle line: JSON
            data = event_to_dict(obj)
            events.append({"type": data.pop("type"), "data": data})
        failures_ = check(events, receipt)
        if objects is original or _bets_reordered(original, objects):
            assert failures_ == []  # players may bet in any order
            passed += 1
        else:
            assert len(failures_) == 1 and failures_[0].startswith("play: "), failures_
            refused += 1
    assert passed >= 20 and refused >= 300, (passed, refused)
