"""Verify rounds from a JSON Lines bundle: `python -m fairness.verify FILE [--keys KEYS]`.

Each line is one round: {"receipt", "signature", "key_id", "public_key"?, "events"} (format in
docs/fairness.md). Every round is checked against fairness-v1 section 5: (1) the revealed seed
hashes to the commitment, (2) the client material is the participants' seeds in seat order,
(3) every dealt card equals the shoe at positions 0, 1, 2, ..., (4) the recorded outcome and
payouts (replayed through the rule engine when `casino.engine.decider.replay` is importable),
(5) the event hash chain and the Ed25519 signature. Pure: no Django.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from fairness.canonical import canonical_json
from fairness.chain import hash_seed, is_seed
from fairness.hashchain import BODY_KEYS, GENESIS, event_hash
from fairness.receipt import (
    SETTLED_FIELDS,
    VOID_FIELDS,
    load_public_key,
    verify_receipt,
    verify_signature,
)
from fairness.receipt import key_id as compute_key_id
from fairness.shoe import FairnessInputError, FairShoe


def _reject_float(text: str) -> Any:
    raise ValueError(f"number {text} is not an integer (money is integer micro-USDC)")


# Floats are refused while parsing: money is integer micro-USDC and hashes need exact numbers.
_DECODER = json.JSONDecoder(parse_float=_reject_float)


@dataclass(slots=True)
class Spans:
    """Where the receipt and each event sit in the line's text (for hashing without re-encoding)."""

    text: str
    receipt: tuple[int, int] | None = None
    events: list[tuple[int, int]] = field(default_factory=list)


def parse_line(text: str) -> tuple[Any, Spans]:
    """Parse one bundle line and, if it is written canonically, locate the receipt and events.

    The spans are only candidates: an event span counts only if its bytes (minus the hash
    member) hash to the recorded hash, and the receipt span only if the signature covers it, so
    a line that is not canonical (or is crafted) falls back to re-encoding, never to a pass.
    """
    bundle = _DECODER.decode(text)
    spans = Spans(text)
    if not isinstance(bundle, dict):
        return bundle, spans
    events = bundle.get("events")
    # One "events" key, first: the array at offset 10 is the one the parser returned.
    if isinstance(events, list) and text.startswith('{"events":[') and text.count('"events":') == 1:
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
    # One "receipt" key, and "signature" (the last key) right after it.
    if text.count('"receipt":') == 1:
        start = text.find('"receipt":') + len('"receipt":')
        end = text.rfind(',"signature":"')
        if start < end and text[start : start + 1] == "{" and text[end - 1 : end] == "}":
            spans.receipt = (start, end)
    return bundle, spans


def _body_bytes(event: Mapping[str, Any], spans: Spans | None, index: int) -> bytes | None:
    """The event's text minus its "hash" (and "prev_hash") members: its body, if canonical."""
    if spans is None or index >= len(spans.events):
        return None
    start, end = spans.events[index]
    member = f',"hash":"{event.get("hash")}"'
    if "prev_hash" in event:  # sorted keys: "prev_hash" directly follows "hash"
        member += f',"prev_hash":"{event["prev_hash"]}"'
    cut = spans.text.rfind(member, start, end)
    # The member must sit at the top level, right before "recorded_at" as canonical JSON has it.
    if cut < 0 or not spans.text.startswith(',"recorded_at":"', cut + len(member)):
        return None
    return (spans.text[start:cut] + spans.text[cut + len(member) : end]).encode("utf-8")


# events, receipt -> failure messages; plugged in when the rule engine is importable.
ReplayCheck = Callable[[Sequence[Mapping[str, Any]], Mapping[str, Any]], list[str]]
BODY_ORDER = ("stream", "version", "type", "schema_version", "data", "recorded_at")


@dataclass(slots=True)
class RoundReport:
    """What the verifier found for one round: ok when `failures` is empty."""

    line: int
    round_id: str
    failures: list[str] = field(default_factory=list)
    cards: int = 0
    replayed: bool = False

    @property
    def ok(self) -> bool:
        return not self.failures


class KeyRing:
    """Public keys by key id, from a keys file and/or the bundle lines themselves."""

    def __init__(self, published: Mapping[str, str] | None = None) -> None:
        self.published = dict(published) if published is not None else None
        self._loaded: dict[str, Ed25519PublicKey] = {}

    @classmethod
    def from_keys_document(cls, document: Any) -> KeyRing:
        """Read the JSON of GET /api/fairness/keys ({"keys": [{"key_id", "public_key"}]})."""
        entries = document["keys"] if isinstance(document, dict) else document
        return cls({entry["key_id"]: entry["public_key"] for entry in entries})

    def resolve(self, key_id: str, line_key: str | None) -> tuple[Ed25519PublicKey | None, str]:
        """The key to check a signature with, or None and why not."""
        if self.published is not None:
            published = self.published.get(key_id)
            if published is None:
                return None, f"key: unknown key id {key_id} (not in the published keys)"
            if line_key is not None and line_key != published:
                return None, f"key: the bundle's public key for {key_id} is not the published one"
            line_key = published
        if line_key is None:
            return None, f"key: unknown key id {key_id} (no public key given)"
        cached = self._loaded.get(line_key)
        if cached is not None:
            return cached, ""
        try:
            raw = bytes.fromhex(line_key)
            if compute_key_id(raw) != key_id:
                return None, f"key: public key {line_key[:16]}... does not have key id {key_id}"
            key = load_public_key(line_key)
        except ValueError:
            return None, f"key: malformed public key for key id {key_id}"
        self._loaded[line_key] = key
        return key, ""


def load_engine_replay() -> ReplayCheck | None:
    """Point 4 through the rule engine when it is importable (pure, no Django); else None."""
    from fairness.replay import load

    return load()


def verify_round(
    bundle: Mapping[str, Any],
    keys: KeyRing,
    *,
    line: int = 0,
    replay_check: ReplayCheck | None = None,
    spans: Spans | None = None,
) -> RoundReport:
    """Check one bundle line; every failure names what differs and where.

    `spans` (from `parse_line`) lets canonical lines be hashed and checked as written.
    """
    receipt = bundle.get("receipt")
    report = RoundReport(
        line=line, round_id=str(receipt.get("round_id", "?")) if isinstance(receipt, dict) else "?"
    )
    fail = report.failures.append
    events = bundle.get("events")
    if not isinstance(receipt, dict) or not isinstance(events, list) or not events:
        fail("bundle: a line needs a receipt object and a non-empty events list")
        return report
    try:
        _check_signature(bundle, receipt, keys, fail, spans)
        by_type = _check_event_chain(receipt, events, fail, spans)
        _check_seed(receipt, by_type, fail)
        _check_client_material(receipt, by_type, fail)
        report.cards = _check_cards(receipt, events, fail)
        _check_outcome(receipt, by_type, fail)
        if replay_check is not None and not report.failures:
            report.failures.extend(replay_check(events, receipt))
            report.replayed = True
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        fail(f"bundle: malformed round data ({type(exc).__name__}: {exc})")
    return report


def _check_signature(
    bundle: Mapping[str, Any],
    receipt: Mapping[str, Any],
    keys: KeyRing,
    fail: Callable[[str], None],
    spans: Spans | None = None,
) -> None:
    key_id, signature = bundle.get("key_id"), bundle.get("signature")
    if not isinstance(key_id, str) or not isinstance(signature, str):
        fail("signature: the line needs key_id and signature strings")
        return
    public_key, why = keys.resolve(key_id, bundle.get("public_key"))
    if public_key is None:
        fail(why)
        return
    if spans is not None and spans.receipt is not None:
        # A line written canonically carries the signed bytes as they are.
        written = spans.text[spans.receipt[0] : spans.receipt[1]].encode("utf-8")
        if verify_signature(written, signature, public_key):
            return
    if not verify_receipt(receipt, signature, public_key):
        fail(f"signature: not a valid Ed25519 signature of this receipt by key {key_id}")


def _check_event_chain(
    receipt: Mapping[str, Any],
    events: list[Any],
    fail: Callable[[str], None],
    spans: Spans | None = None,
) -> dict[str, list[Mapping[str, Any]]]:
    """Recompute every event hash from GENESIS; return the events grouped by type."""
    by_type: dict[str, list[Mapping[str, Any]]] = {}
    prev, stream = GENESIS, receipt["stream"]
    sha256 = hashlib.sha256
    for index, event in enumerate(events):
        version, type_, recorded = event["version"], event["type"], event.get("hash")
        where = f"version {version} ({type_})"
        if event["stream"] != stream:
            fail(f"event hash: {where} belongs to stream {event['stream']}, not {stream}")
        if version != index + 1:
            fail(f"event hash: {where} found where version {index + 1} belongs")
        if "prev_hash" in event and event["prev_hash"] != prev:
            fail(f"event hash: {where} records prev_hash {event['prev_hash']}, expected {prev}")
        if BODY_KEYS.issubset(event) and len(event) == len(BODY_KEYS) + 1 + ("prev_hash" in event):
            written = _body_bytes(event, spans, index)
            # Matching the recorded hash proves the written text is the hashed canonical body.
            if (
                written is not None
                and sha256(prev.encode("ascii") + written).hexdigest() == recorded
            ):
                prev = recorded
                by_type.setdefault(type_, []).append(event["data"])
                continue
        body = {k: event[k] for k in BODY_ORDER}
        computed = event_hash(prev, body)
        if recorded != computed:
            fail(f"event hash: {where} records {recorded}, recomputed {computed}")
            computed = recorded if isinstance(recorded, str) else computed  # check the rest
        prev = computed
        by_type.setdefault(type_, []).append(event["data"])
    last = events[-1]
    if prev != receipt["final_event_hash"] or last["version"] != receipt["final_event_version"]:
        fail(
            f"event hash: the receipt names final event v{receipt['final_event_version']} "
            f"{receipt['final_event_hash']}, the events end at v{last['version']} {prev}"
        )
    return by_type


def _one(by_type: Mapping[str, list[Mapping[str, Any]]], type_: str) -> Mapping[str, Any] | None:
    found = by_type.get(type_)
    return found[0] if found else None


def _check_seed(
    receipt: Mapping[str, Any],
    by_type: Mapping[str, list[Mapping[str, Any]]],
    fail: Callable[[str], None],
) -> None:
    seed, commitment = receipt["server_seed"], receipt["commitment"]
    if not is_seed(seed) or not is_seed(commitment):
        fail("seed: the server seed and commitment must be 64 lowercase hex characters")
        return
    if hash_seed(seed) != commitment:
        fail(
            f"seed: sha256 of server seed {seed} is {hash_seed(seed)}, "
            f"not the commitment {commitment}"
        )
    opened = _one(by_type, "RoundOpened")
    if opened is None:
        fail("seed: no RoundOpened event records the commitment")
    else:
        for name in (
            "commitment",
            "nonce",
            "chain_id",
            "round_id",
            "table_id",
            "ruleset",
            "ruleset_hash",
        ):
            if opened.get(name) != receipt[name]:
                fail(
                    f"seed: the receipt's {name} {receipt[name]!r} differs "
                    f"from RoundOpened's {opened.get(name)!r}"
                )
    revealed = _one(by_type, "ServerSeedRevealed")
    if revealed is None or revealed.get("server_seed") != seed:
        fail("seed: no ServerSeedRevealed event reveals the receipt's server seed")


def _check_client_material(
    receipt: Mapping[str, Any],
    by_type: Mapping[str, list[Mapping[str, Any]]],
    fail: Callable[[str], None],
) -> None:
    material = receipt["client_material"]
    participants = receipt["participants"]
    joined = "|".join(p["client_seed"] for p in participants)
    if joined != material:
        fail(
            f"client material: {material!r}, but the participants' seeds "
            f"in seat order give {joined!r}"
        )
    opened = _one(by_type, "RoundOpened")
    if opened is not None:
        recorded = [(p["player_id"], p["client_seed"]) for p in opened["participants"]]
        listed = [(p["player_id"], p["client_seed"]) for p in participants]
        if recorded != listed:
            fail(
                f"client material: receipt participants {listed} "
                f"differ from RoundOpened's {recorded}"
            )
    closed = _one(by_type, "BettingClosed")
    if closed is None and receipt.get("outcome") == "voided" and not receipt.get("cards"):
        return  # voided before betting closed: nothing was locked, nothing was dealt
    if closed is None or closed.get("client_material") != material:
        got = None if closed is None else closed.get("client_material")
        fail(f"client material: BettingClosed locked {got!r}, the receipt says {material!r}")


def _dealt_cards(events: Iterable[Mapping[str, Any]]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    for event in events:
        if event["type"].endswith("CardDealt"):
            yield event["type"], event["data"]


def _revealed_cards(event: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Cards a reveal event shows again (the hole card, duel's hidden cards)."""
    if event["type"] == "HoleCardRevealed":
        return [event["data"]]
    if event["type"] == "CardsRevealed":
        return list(event["data"].get("cards", []))
    return []


def _check_cards(receipt: Mapping[str, Any], events: list[Any], fail: Callable[[str], None]) -> int:
    """Every card dealt, in event order, is the shoe at positions 0, 1, 2, ..."""
    try:
        shoe = FairShoe(receipt["server_seed"], receipt["client_material"], receipt["nonce"])
    except FairnessInputError as exc:
        fail(f"cards: cannot rebuild the shoe ({exc})")
        return 0
    dealt = list(_dealt_cards(events))
    for index, (type_, data) in enumerate(dealt):
        position, card = data["position"], data["card"]
        if position != index:
            fail(
                f"cards: dealt card #{index} ({type_} {card}) is at position {position}, "
                f"expected {index} (no skips)"
            )
            continue
        expected = shoe.card_at(position)
        if card != expected:
            fail(f"cards: position {position} dealt {card}, the shoe has {expected}")
    for event in events:
        for item in _revealed_cards(event):
            position, card = item["position"], item["card"]
            if 0 <= position < len(dealt) and card != dealt[position][1]["card"]:
                was = dealt[position][1]["card"]
                fail(f"cards: {event['type']} shows {card} at position {position}, dealt was {was}")
    stated = [(c["position"], c["card"]) for c in receipt["cards"]]
    recorded = [(d["position"], d["card"]) for _, d in dealt]
    if stated != recorded:
        pairs = zip(stated, recorded, strict=False)
        first = next(
            (i for i, (a, b) in enumerate(pairs) if a != b), min(map(len, (stated, recorded)))
        )
        said = stated[first] if first < len(stated) else "missing"
        seen = recorded[first] if first < len(recorded) else "missing"
        fail(f"cards: the receipt's card #{first} {said} differs from the events' {seen}")
    return len(dealt)


def _check_outcome(
    receipt: Mapping[str, Any],
    by_type: Mapping[str, list[Mapping[str, Any]]],
    fail: Callable[[str], None],
) -> None:
    """Point 4 as far as the receipt states it: its outcome and payouts are the events' own."""
    outcome, payouts = receipt["outcome"], receipt["payouts"]
    voided, settled = _one(by_type, "RoundVoided"), _one(by_type, "RoundSettled")
    if outcome == "voided":
        if voided is None:
            fail("outcome: the receipt says voided but no RoundVoided event exists")
            return
        expected = {name: voided.get(name) for name in VOID_FIELDS}
    elif outcome == "settled":
        if settled is None or voided is not None:
            fail("outcome: the receipt says settled but the events do not end settled")
            return
        expected = {name: settled.get(name) for name in SETTLED_FIELDS}
    else:
        fail(f"outcome: unknown outcome {outcome!r}")
        return
    if canonical_json(payouts) != canonical_json(expected):
        fail(
            f"outcome: the receipt's payouts differ from the {outcome} event's "
            f"({_first_difference(payouts, expected)})"
        )


def _first_difference(stated: Any, recorded: Any, path: str = "payouts") -> str:
    if isinstance(stated, dict) and isinstance(recorded, dict):
        for key in sorted(set(stated) | set(recorded)):
            if stated.get(key) != recorded.get(key):
                return _first_difference(stated.get(key), recorded.get(key), f"{path}.{key}")
    if isinstance(stated, list) and isinstance(recorded, list) and len(stated) == len(recorded):
        for index, (a, b) in enumerate(zip(stated, recorded, strict=True)):
            if a != b:
                return _first_difference(a, b, f"{path}[{index}]")
    return f"{path}: receipt {stated!r}, events {recorded!r}"


def verify_lines(
    lines: Iterable[str],
    keys: KeyRing,
    replay_check: ReplayCheck | None = None,
    first_line: int = 1,
) -> Iterator[RoundReport]:
    """Verify every non-empty line of a bundle, in order."""
    for number, text in enumerate(lines, start=first_line):
        if not text.strip():
            continue
        try:
            bundle, spans = parse_line(text)
        except ValueError as exc:
            failure = f"bundle: line is not valid JSON ({exc})"
            yield RoundReport(line=number, round_id="?", failures=[failure])
            continue
        if not isinstance(bundle, dict):
            failure = "bundle: line is not a JSON object"
            yield RoundReport(line=number, round_id="?", failures=[failure])
            continue
        yield verify_round(bundle, keys, line=number, replay_check=replay_check, spans=spans)


def format_report(report: RoundReport) -> str:
    """One line per round: OK or FAIL with every reason."""
    if report.ok:
        replayed = ", replayed" if report.replayed else ""
        return f"OK   line {report.line} round {report.round_id}: {report.cards} cards{replayed}"
    return f"FAIL line {report.line} round {report.round_id}: " + "; ".join(report.failures)


_worker_keys = KeyRing()
_worker_replay: ReplayCheck | None = None
CHUNK_LINES = 256


def _init_worker(published: dict[str, str] | None, replay: bool) -> None:
    global _worker_keys, _worker_replay
    _worker_keys = KeyRing(published)
    _worker_replay = load_engine_replay() if replay else None


def _verify_chunk(chunk: tuple[int, list[str]]) -> list[RoundReport]:
    first_line, lines = chunk
    return list(verify_lines(lines, _worker_keys, _worker_replay, first_line))


def _chunks(source: Iterable[str]) -> Iterator[tuple[int, list[str]]]:
    lines = iter(source)
    first_line = 1
    while chunk := list(itertools.islice(lines, CHUNK_LINES)):
        yield first_line, chunk
        first_line += len(chunk)


def _reports(
    source: Iterable[str], keys: KeyRing, replay: bool, jobs: int
) -> Iterator[RoundReport]:
    """Reports in line order; with jobs > 1, chunks of lines are verified in worker processes."""
    if jobs <= 1:
        yield from verify_lines(source, keys, load_engine_replay() if replay else None)
        return
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(
        jobs, initializer=_init_worker, initargs=(keys.published, replay)
    ) as pool:
        for reports in pool.imap(_verify_chunk, _chunks(source)):
            yield from reports


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """CLI entry point: exit 0 when every round verifies, 1 on any failure, 2 on bad usage."""
    parser = argparse.ArgumentParser(
        prog="python -m fairness.verify", description="Verify fairness-v1 round bundles."
    )
    parser.add_argument("file", help="JSON Lines bundle, one round per line ('-' for stdin)")
    parser.add_argument("--keys", help="the JSON of GET /api/fairness/keys (trusted keys)")
    parser.add_argument("--no-replay", action="store_true", help="skip the rule-engine replay")
    parser.add_argument("--quiet", action="store_true", help="print failures and the summary only")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    args = parser.parse_args(argv)
    out = out or sys.stdout
    try:
        keys = KeyRing()
        if args.keys:
            with open(args.keys, encoding="utf-8") as handle:
                keys = KeyRing.from_keys_document(json.load(handle))
        source = sys.stdin if args.file == "-" else open(args.file, encoding="utf-8")  # noqa: SIM115
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    replay_on = not args.no_replay and load_engine_replay() is not None
    progress = sys.stderr.isatty()
    started = time.perf_counter()
    total = failed = 0
    with source:
        for report in _reports(source, keys, replay_on, max(args.jobs, 1)):
            total += 1
            failed += not report.ok
            if not report.ok or not args.quiet:
                print(format_report(report), file=out)
            if progress and total % 1000 == 0:
                rate = total / max(time.perf_counter() - started, 1e-9)
                print(f"\r{total} rounds, {failed} failed, {rate:,.0f}/s", end="", file=sys.stderr)
    if progress and total >= 1000:
        print(file=sys.stderr)
    elapsed = time.perf_counter() - started
    replay_note = "engine replay on" if replay_on else "engine replay off"
    print(
        f"{total} rounds: {total - failed} verified, {failed} failed "
        f"({elapsed:.2f} s, {replay_note})",
        file=out,
    )
    return 1 if failed or total == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
