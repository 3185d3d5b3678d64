"""Verify rounds from a JSON Lines bundle: `python -m fairness.verify FILE [--keys KEYS]
[--checkpoint CP --vkey KEY --log URL]`.

Each line is a seed chain's or a round's (formats in docs/fairness.md, "Bundle format"). Every
round is checked against fairness-v1 section 5 as docs/fairness.md states it: (1) the revealed
seed hashes to the commitment, (2) the client material is the participants' seeds in seat
order, (3) every dealt card equals the shoe at positions 0, 1, 2, ..., (4) the recorded events
are exactly those the rules derive from the players' choices and the shoe (the proof of play,
`fairness.replay`, when the rule engine `casino.engine` is importable), (5) the event hash
chain and the Ed25519 signature; then the chains across rounds (section 6); with a checkpoint,
the bundle against the public transparency log (`fairness.logcheck`). A round at a beacon
table (fairness-v2, a fairness-v2-bundle line) has its beacon checked too
(`fairness.checks.check_beacon`: the BLS signature, the randomness, the round against the lock,
the material), and its report says whose beacon it was; a shared table's round without one is
reported with a warning. Pure: no Django.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import os
import re
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from fairness import logcheck
from fairness.bundle import (
    CHAIN_FORMAT,
    ROUND_FORMATS,
    duplicated_key,
    line_failures,
    line_format,
    parse_line,
)
from fairness.checks import (
    NEVER_RECORDED,
    KeyRing,
    check_beacon,
    check_cards,
    check_client_material,
    check_event_chain,
    check_outcome,
    check_receipt_version,
    check_seed,
    check_signature,
)
from fairness.crossround import (
    CrossRounds,
    format_chain,
    round_facts,
    round_time_failures,
)
from fairness.crossround import summary as chains_summary
from fairness.replay import load
from fairness.shoe import SHOE_SIZE, first_cards

# (events, receipt, the dealt cards points 1-3 proved) -> failure messages; plugged in when
# the rule engine is importable.
ReplayCheck = Callable[[Sequence[Mapping[str, Any]], Mapping[str, Any], Sequence[str]], list[str]]
__all__ = [
    "KeyRing", "ReplayCheck", "RoundReport", "format_report", "load_engine_replay", "main",
    "verify_lines", "verify_round",
]  # fmt: skip


@dataclass(slots=True)
class RoundReport:
    """What the verifier found for one line (a round, or a chain line): ok when `failures` is
    empty. The fields after `replayed` are what the cross-round checks need
    (`fairness.crossround`), carried back from worker processes with `--jobs`."""

    line: int
    round_id: str
    failures: list[str] = field(default_factory=list)
    cards: int = 0
    replayed: bool = False
    kind: str = "round"  # "round", or "chain" for a chain line (fairness.bundle.CHAIN_FORMAT)
    chain: dict[str, Any] | None = None  # a chain line's fields
    chain_id: str | None = None  # a round's receipt: its chain, nonce, table, commitment, seed
    nonce: int | None = None
    table_id: str | None = None
    commitment: str | None = None
    server_seed: str | None = None
    opened_at: str | None = None  # recorded_at of RoundOpened
    revealed_at: str | None = None  # recorded_at of ServerSeedRevealed
    signature: str | None = None  # the receipt's, for the transparency log's check
    beacon: str | None = None  # fairness-v2: whose beacon the round used (checks.beacon_words)
    warning: str | None = None  # a shared table's round without a beacon (not a failure)

    @property
    def ok(self) -> bool:
        return not self.failures


def load_engine_replay() -> ReplayCheck | None:
    """Point 4 through the rule engine when it is importable (pure, no Django); else None."""
    return load()


def verify_round(
    bundle: Mapping[str, Any],
    keys: KeyRing,
    *,
    line: int = 0,
    replay_check: ReplayCheck | None = None,
    float_free: bool = False,
    events_float_free: bool | None = None,
    decoded: Sequence[Any] | None = None,
) -> RoundReport:
    """Check one bundle line; every failure names what differs and where.

    `float_free`: the line was parsed by `fairness.bundle.parse_line`, which refuses floats,
    so canonical JSON can take its fastest path (`canonical_json_float_free`).
    `events_float_free`: the same promise for the events alone (None: as `float_free`); the
    audit reads events and receipts apart, and knows it of its events.
    `decoded`: the events as `replay_check.decode` decoded them (a `fairness.replay.PlayCheck`),
    for its `decided` to take instead of decoding them again.
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
        check_signature(bundle, receipt, keys, fail, float_free=float_free)
        events_free = float_free if events_float_free is None else events_float_free
        scan = check_event_chain(receipt, events, fail, float_free=events_free)
        by_type = scan.by_type
        check_seed(receipt, by_type, fail)
        check_client_material(receipt, by_type, fail)
        check_receipt_version(receipt, by_type, fail)
        report.beacon, report.warning = check_beacon(receipt, by_type, events, fail)
        count = _cards_ok(receipt, scan.card_events)
        report.cards = (
            count if count is not None else check_cards(receipt, events, fail, scan.card_events)
        )
        check_outcome(receipt, by_type, fail, float_free=float_free)
        if replay_check is not None and not report.failures:
            # Points 1-3 hold: the receipt's cards are the shoe's, positions 0, 1, 2, ...
            dealt = [card["card"] for card in receipt["cards"]]
            if decoded is None:
                report.failures.extend(replay_check(events, receipt, dealt))
            else:
                decided = getattr(replay_check, "decided")  # noqa: B009 - a PlayCheck
                report.failures.extend(decided(decoded, receipt, dealt))
            report.replayed = True
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError) as exc:
        fail(f"bundle: malformed round data ({type(exc).__name__}: {exc})")
    return report


# What validate_server_seed and validate_client_material accept, each as one match: 64
# lowercase hex characters; client seeds (1 to 64 of [A-Za-z0-9_.-]) joined with "|", and
# after them, last, maybe a beacon's element (fairness-v2; its round at most 20 digits here,
# a larger one is left to validate_client_material, which names it).
_SEED = re.compile(r"[0-9a-f]{64}").fullmatch
_MATERIAL = re.compile(
    r"[A-Za-z0-9_.-]{1,64}(?:\|[A-Za-z0-9_.-]{1,64})*(?:\|[a-z0-9-]+:[1-9][0-9]{0,18}:[0-9a-f]{64})?"
).fullmatch


def _cards_ok(
    receipt: Mapping[str, Any], card_events: list[Mapping[str, Any]] | None
) -> int | None:
    """check_cards' count when check_cards would find nothing wrong; None when it might
    (then check_cards runs and names what it finds). The same checks on the same values:
    the seed, material and nonce valid; the dealt cards at positions 0, 1, 2, ... and equal
    to the shoe's (one list comparison); every card a reveal shows equal to the one dealt
    there; the receipt's cards the dealt ones (tests/fairness/test_fast_cards.py)."""
    if card_events is None:
        return None
    try:
        seed, material, nonce = (
            receipt["server_seed"], receipt["client_material"], receipt["nonce"]
        )  # fmt: skip
        if (
            type(seed) is not str
            or _SEED(seed) is None
            or type(material) is not str
            or _MATERIAL(material) is None
            or type(nonce) is not int
            or nonce < 1
        ):
            return None
        cards: list[Any] = []
        shown: list[Any] = []  # the items the reveals show
        for event in card_events:
            type_, data = event["type"], event["data"]
            if type_.endswith("CardDealt"):
                if data["position"] != len(cards):
                    return None
                cards.append(data["card"])
            elif type_ == "HoleCardRevealed":
                shown.append(data)
            elif type_ == "CardsRevealed":
                shown.extend(list(data.get("cards", [])))
        count = len(cards)
        if count > SHOE_SIZE or (count and cards != first_cards(seed, material, nonce, count)):
            return None
        for item in shown:
            position, card = item["position"], item["card"]
            if 0 <= position < count and card != cards[position]:
                return None
        if [(c["position"], c["card"]) for c in receipt["cards"]] != list(enumerate(cards)):
            return None
    except Exception:  # whatever it is, check_cards meets it too and names it
        return None
    return count


def verify_lines(
    lines: Iterable[str | bytes],
    keys: KeyRing,
    replay_check: ReplayCheck | None = None,
    first_line: int = 1,
) -> Iterator[RoundReport]:
    """Verify every non-empty line of a bundle (text or UTF-8 bytes), in order; a line that
    cannot be read (not JSON, not UTF-8, a key twice in one object) fails alone, and the lines
    after it are verified. Lines are strict (`fairness.bundle.line_failures`: a known format,
    no unknown or missing field); each round's times must not run backwards. A chain line
    gives a report of kind "chain"; the checks across rounds are `fairness.crossround`'s.

    A proof of play that decodes a round's events up front (`fairness.replay.PlayCheck`, as
    `load_engine_replay` gives, with `shapes_strict`) decodes them first: a round whose
    events decode has event data of the strict shape, which the line check then takes as
    known, and its proof of play takes the decoded events."""
    decode = getattr(replay_check, "decode", None)
    if not getattr(replay_check, "shapes_strict", False):
        decode = None
    for number, text in enumerate(lines, start=first_line):
        if not text.strip():
            continue
        try:
            bundle = parse_line(text)
        except (ValueError, RecursionError) as exc:  # RecursionError: absurdly deep nesting
            failure = f"bundle: line is not valid JSON ({type(exc).__name__}: {exc})"
            yield RoundReport(line=number, round_id="?", failures=[failure])
            continue
        if not isinstance(bundle, dict):
            failure = "bundle: line is not a JSON object"
            yield RoundReport(line=number, round_id="?", failures=[failure])
            continue
        duplicated = duplicated_key(text, bundle)
        if duplicated is not None:  # which of its values would be the line's? Neither.
            yield RoundReport(line=number, round_id="?", failures=[duplicated])
            continue
        events = bundle.get("events")
        decoded = decode(events) if decode is not None and type(events) is list else None
        strict = line_failures(bundle, data_decoded=decoded is not None)
        if bundle.get("format") == CHAIN_FORMAT:
            chain_id = bundle.get("chain_id")
            yield RoundReport(
                line=number,
                round_id=chain_id if isinstance(chain_id, str) else "?",
                failures=strict,
                kind="chain",
                chain=None if strict else bundle,
            )
            continue
        format_, receipt = bundle.get("format"), bundle.get("receipt")
        if format_ in ROUND_FORMATS and type(receipt) is dict:
            wanted = line_format(receipt)
            if format_ != wanted:
                strict.append(
                    f"bundle: a {receipt.get('spec')!r} receipt is in a {format_} line, "
                    f"not {wanted}"
                )
        if isinstance(events, list):
            strict.extend(round_time_failures(events))
        report = verify_round(
            bundle, keys, line=number, replay_check=replay_check, float_free=True, decoded=decoded
        )
        if strict:  # the line's own faults first, then the round's
            report.failures[:0] = strict
        facts = round_facts(bundle)
        report.chain_id, report.nonce = facts["chain_id"], facts["nonce"]
        report.table_id, report.commitment = facts["table_id"], facts["commitment"]
        report.server_seed = facts["server_seed"]
        report.opened_at, report.revealed_at = facts["opened_at"], facts["revealed_at"]
        signature = bundle.get("signature")
        report.signature = signature if type(signature) is str else None
        yield report


def format_report(report: RoundReport) -> str:
    """One line per round: OK or FAIL with every reason (a chain line: FAIL only)."""
    if report.kind == "chain":
        state = "OK  " if report.ok else "FAIL"
        return f"{state} line {report.line} chain {report.round_id}: " + (
            "; ".join(report.failures) or "chain line"
        )
    beacon = f"; {report.beacon}" if report.beacon else ""
    if report.ok:
        replayed = ", play checked" if report.replayed else ""
        warning = f"; warning: {report.warning}" if report.warning else ""
        return (
            f"OK   line {report.line} round {report.round_id}: {report.cards} cards{replayed}"
            f"{beacon}{warning}"
        )
    return f"FAIL line {report.line} round {report.round_id}: " + "; ".join(
        [*report.failures, *([report.beacon] if report.beacon else [])]
    )


_worker_keys = KeyRing()
_worker_replay: ReplayCheck | None = None
CHUNK_LINES = 256
PROGRESS_EVERY = 250  # rounds between progress updates on a terminal
READ_BUFFER = 1 << 20  # bytes the bundle is read by


def _init_worker(published: dict[str, str] | None, replay: bool) -> None:
    global _worker_keys, _worker_replay
    _worker_keys = KeyRing(published)
    _worker_replay = load_engine_replay() if replay else None


# A report crosses from a worker as the tuple of its fields (`_packed`): pickling a slots
# dataclass goes through copyreg's generic reduction, object by object, in the parent too.
_REPORT_FIELDS = tuple(f.name for f in dataclasses.fields(RoundReport))


def _packed(report: RoundReport) -> tuple[Any, ...]:
    return tuple([getattr(report, name) for name in _REPORT_FIELDS])


def _verify_chunk(chunk: tuple[int, list[bytes]]) -> list[tuple[Any, ...]]:
    first_line, lines = chunk
    return [_packed(r) for r in verify_lines(lines, _worker_keys, _worker_replay, first_line)]


def _pool_context() -> Any:
    """The workers' start method: fork where the platform has it and this process runs no
    other thread (a worker starts as a copy of this process, the verifier and the rule
    engine already imported and compiled), else spawn (every worker imports them anew)."""
    # only --jobs starts workers
    import multiprocessing
    import threading

    if (
        sys.platform.startswith("linux")
        and threading.active_count() == 1
        and "fork" in multiprocessing.get_all_start_methods()
    ):
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


def _chunks(source: Iterable[bytes]) -> Iterator[tuple[int, list[bytes]]]:
    lines = iter(source)
    first_line = 1
    while chunk := list(itertools.islice(lines, CHUNK_LINES)):
        yield first_line, chunk
        first_line += len(chunk)


def _reports(
    source: Iterable[bytes], keys: KeyRing, replay: bool, jobs: int
) -> Iterator[RoundReport]:
    """Reports in line order; with jobs > 1, chunks of lines are verified in worker processes."""
    if jobs <= 1:
        yield from verify_lines(source, keys, load_engine_replay() if replay else None)
        return
    with _pool_context().Pool(
        jobs, initializer=_init_worker, initargs=(keys.published, replay)
    ) as pool:
        for packed in pool.imap(_verify_chunk, _chunks(source)):
            for fields in packed:
                yield RoundReport(*fields)


def beacon_summary(counts: Mapping[str, int]) -> str:
    """The summary's beacon part (fairness-v2): how many rounds used drand quicknet, an
    operator-run beacon, how many of those were voided waiting for the beacon round (the house
    may void a round once it sees the round: each is counted), and how many shared-table rounds
    had none; "" when none of them."""
    parts = []
    if counts["independent"]:
        parts.append(f"{counts['independent']} drand quicknet (independent)")
    if counts["operator"]:
        parts.append(f"{counts['operator']} operator-run (not independent)")
    if counts["voided"]:
        parts.append(f"{counts['voided']} of them voided waiting for the beacon round")
    if counts["none"]:
        parts.append(
            f"{counts['none']} shared-table rounds without one (warning: a seat could "
            "choose its cards)"
        )
    return "; beacons: " + ", ".join(parts) if parts else ""


def _leaves_progress(read: int, size: int) -> None:
    """The log's leaves read so far, on a terminal's stderr (a page of 1,000 a request)."""
    print(f"\r{read:,}/{size:,} log leaves read", end="\n" if read >= size else "", file=sys.stderr)


# Worker processes --jobs may start: a few per core (the work is CPU-bound, so more only
# costs memory and start-up; a typo of 1000 must not fork a thousand interpreters).
MAX_JOBS = 4 * (os.cpu_count() or 1)


def _jobs(value: str) -> int:
    """--jobs: a whole number of worker processes from 1 to MAX_JOBS."""
    try:
        jobs = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
    if not 1 <= jobs <= MAX_JOBS:
        raise argparse.ArgumentTypeError(
            f"{jobs} is outside 1..{MAX_JOBS} (4 per core on this machine's {os.cpu_count()})"
        )
    return jobs


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """CLI entry point: exit 0 when every round verifies, 1 on any failure, 2 on bad usage."""
    parser = argparse.ArgumentParser(
        prog="python -m fairness.verify",
        description="Verify fairness-v1 and fairness-v2 round bundles.",
    )
    parser.add_argument("file", help="JSON Lines bundle, one round per line ('-' for stdin)")
    parser.add_argument("--keys", help="the JSON of GET /api/fairness/keys (trusted keys)")
    parser.add_argument(
        "--no-replay", action="store_true", help="skip the proof of play (the round decided anew)"
    )
    parser.add_argument("--quiet", action="store_true", help="print failures and the summary only")
    parser.add_argument(
        "--jobs", type=_jobs, default=1, help=f"worker processes, 1..{MAX_JOBS} (default 1)"
    )
    parser.add_argument("--checkpoint", help="a signed checkpoint of the transparency log (file)")
    parser.add_argument("--vkey", help="the log's verifier key, or @file holding it")
    parser.add_argument(
        "--log", help="the log's /api/log URL, or a JSON Lines file of its leaves {index, data}"
    )
    args = parser.parse_args(argv)
    log_args = [args.checkpoint, args.vkey, args.log]
    if any(log_args) and not all(log_args):
        print("error: --checkpoint, --vkey and --log go together", file=sys.stderr)
        return 2
    out = out or sys.stdout
    try:
        keys = KeyRing()
        if args.keys:
            with open(args.keys, encoding="utf-8") as handle:
                try:
                    keys = KeyRing.from_keys_document(json.load(handle))
                except (ValueError, KeyError, TypeError) as exc:  # say which file, and what
                    raise ValueError(
                        f"--keys {args.keys}: not the JSON of GET /api/fairness/keys "
                        f"({type(exc).__name__}: {exc})"
                    ) from exc
        # Bytes, each line decoded by its parse: a line that is not UTF-8 fails alone
        # (read as text, it stopped the whole run with a traceback). Read through a buffer
        # of READ_BUFFER bytes: a round's line is longer than the default 8 KiB buffer, and
        # reading such lines through it costs several times more.
        source = (
            open(sys.stdin.fileno(), "rb", buffering=READ_BUFFER, closefd=False)  # noqa: SIM115
            if args.file == "-"
            else open(args.file, "rb", buffering=READ_BUFFER)  # noqa: SIM115
        )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    replay_on = not args.no_replay and load_engine_replay() is not None
    progress = sys.stderr.isatty()
    started = time.perf_counter()
    total = failed = bad_chain_lines = 0
    beacons = {"independent": 0, "operator": 0, "voided": 0, "none": 0}
    cross = CrossRounds()
    logged: list[RoundReport] = []  # what the log check reads of each round
    with source:
        for report in _reports(source, keys, replay_on, args.jobs):
            cross.add(report)
            if args.log:
                logged.append(report)
            if report.kind == "chain":  # reported with the chains, below (a failure: here)
                if not report.ok:
                    bad_chain_lines += 1
                    print(format_report(report), file=out)
                continue
            total += 1
            failed += not report.ok
            if report.beacon:
                independent = report.beacon.endswith(": independent")
                beacons["independent" if independent else "operator"] += 1
                beacons["voided"] += NEVER_RECORDED in report.beacon
            elif report.warning:
                beacons["none"] += 1
            if not report.ok or not args.quiet:
                print(format_report(report), file=out)
            if progress and total % PROGRESS_EVERY == 0:
                rate = total / max(time.perf_counter() - started, 1e-9)
                print(f"\r{total} rounds, {failed} failed, {rate:,.0f}/s", end="", file=sys.stderr)
    if progress and total >= PROGRESS_EVERY:
        print(file=sys.stderr)
    elapsed = time.perf_counter() - started
    replay_note = "proof of play on" if replay_on else "proof of play off"
    print(
        f"{total} rounds: {total - failed} verified, {failed} failed "
        f"({elapsed:.2f} s, {replay_note}){beacon_summary(beacons)}",
        file=out,
    )
    if total == 0:  # an empty file (or chain lines alone) proves nothing: say why it fails
        print("FAIL the bundle holds no round lines: nothing was verified", file=out)
    # fairness-v1 section 6, per chain: after every line, so --jobs workers need not share.
    chains = cross.results()
    for chain in chains:
        if not chain.ok or not args.quiet:
            print(format_chain(chain), file=out)
    if chains:
        print(chains_summary(chains), file=out)
    chains_failed = bad_chain_lines + sum(not chain.ok for chain in chains)
    log_failed = False
    if args.log:
        try:
            with open(args.checkpoint, encoding="utf-8") as handle:
                checkpoint = handle.read()
            result = logcheck.check(
                logged,
                checkpoint=checkpoint,
                vkey=args.vkey,
                log=args.log,
                progress=_leaves_progress if progress else None,
            )
        except (OSError, logcheck.LogError) as exc:
            print(f"FAIL log: {exc}", file=out)
            return 1
        print(logcheck.format_result(result), file=out)
        log_failed = not result.ok
    return 1 if failed or chains_failed or log_failed or total == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
