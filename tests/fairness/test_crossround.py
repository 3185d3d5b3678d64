"""Checks across rounds (fairness-v1 section 6, fairness.crossround) on a chain of rounds
played through the rule engine, rewritten as a dishonest operator would: rounds dropped,
repeated, or sharing a nonce; times running backwards; a round from another chain. Every
rewritten round is re-chained and re-signed, so only the cross-round checks can tell."""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from fairness.bundle import chain_line
from fairness.canonical import canonical_text
from fairness.chain import create_chain, hash_seed
from fairness.receipt import private_key_from_hex
from fairness.sample import resign, sample_bundle
from fairness.verify import KeyRing, main, verify_lines

KEY = private_key_from_hex(hashlib.sha256(b"cross-round").hexdigest())
CHAIN = create_chain(12, head=hashlib.sha256(b"cross chain").hexdigest())
OTHER = create_chain(12, head=hashlib.sha256(b"another chain").hexdigest())
SEEDS = (["alice"], ["a", "b", "c"])  # classic and duel_classic rounds, alternately


def round_line(nonce: int, chain: Any = CHAIN, round_id: str | None = None) -> dict[str, Any]:
    return sample_bundle(
        round_id=round_id or f"r{nonce}", server_seed=chain.seed(nonce),
        client_seeds=SEEDS[nonce % 2], nonce=nonce, private_key=KEY,
    )  # fmt: skip


def chain_of(first: int = 1, last: int = 8, **changes: Any) -> dict[str, Any]:
    fields = {
        "chain_id": "chain-1", "table_id": "table-1", "terminal": CHAIN.terminal, "length": 12,
        "created_at": "2025-12-31T23:59:00.000000Z", "first_nonce": first, "last_nonce": last,
    }  # fmt: skip
    return chain_line(**{**fields, **changes})


def verify(lines: list[dict[str, Any]], *args: str) -> tuple[int, list[str]]:
    """Exit code and output of `python -m fairness.verify` on these lines (no replay)."""
    with tempfile.TemporaryDirectory() as folder:
        file = Path(folder) / "bundle.jsonl"
        file.write_text("".join(canonical_text(line) + "\n" for line in lines))
        out = io.StringIO()
        code = main([str(file), *args, "--no-replay"], out=out)
    return code, out.getvalue().splitlines()


def chain_rows(output: list[str]) -> list[str]:
    """The lines after the rounds' summary: one per chain, then the chains' summary."""
    at = next(i for i, row in enumerate(output) if " rounds: " in row)
    return output[at + 1 :]


ROUNDS = [round_line(k) for k in range(1, 9)]


def test_a_complete_bundle_is_reported_complete_from_its_terminal() -> None:
    code, output = verify([chain_of(), *ROUNDS])
    assert code == 0, output
    assert [row.split(":")[0] for row in output[:8]] == [
        f"OK   line {n} round r{n - 1}" for n in range(2, 10)
    ]
    assert chain_rows(output) == [
        "OK   chain chain-1: complete from its terminal (nonces 1..8, table table-1)",
        "1 chain: 1 complete from the terminal, 0 partial, 0 coverage unknown, 0 failed",
    ]


def test_a_round_removed_from_the_middle_is_named() -> None:
    lines = [chain_of(), *ROUNDS[:4], *ROUNDS[5:]]  # nonce 5 gone
    code, output = verify(lines)
    assert code == 1
    assert not any(row.startswith("FAIL line") for row in output)  # each round is fine alone
    assert chain_rows(output) == [
        "FAIL chain chain-1: nonce 5 missing (range 1..8)",
        "1 chain: 0 complete from the terminal, 0 partial, 0 coverage unknown, 1 failed",
    ]
    code, output = verify([chain_of(), *ROUNDS[:2], *ROUNDS[5:7]])  # 3, 4, 5 and 8 gone
    assert chain_rows(output)[0] == (
        "FAIL chain chain-1: nonces 3..5 missing (range 1..8); nonce 8 missing (range 1..8)"
    )


def test_a_round_appearing_twice_is_named() -> None:
    code, output = verify([chain_of(), *ROUNDS, ROUNDS[2]])
    assert code == 1
    assert output[8].startswith("OK   line 10 round r3: ")  # alone it verifies
    assert chain_rows(output)[0] == (
        "FAIL chain chain-1: round r3 appears more than once (lines 4 and 10)"
    )


def test_a_second_round_id_reusing_a_nonce_is_named() -> None:
    # The same seed dealt again under another round id (other seats, so another shoe): each
    # round verifies alone, as a re-deal bought by a void would.
    again = sample_bundle(
        round_id="r3-again", server_seed=CHAIN.seed(3), client_seeds=["mallory"], nonce=3,
        private_key=KEY,
    )  # fmt: skip
    code, output = verify([chain_of(), *ROUNDS[:3], again, *ROUNDS[3:]])
    assert code == 1
    assert output[3].startswith("OK   line 5 round r3-again: ")
    assert chain_rows(output)[0] == (
        "FAIL chain chain-1: nonce 3 is used by more than one round: r3 (line 4), r3-again (line 5)"
    )


def test_a_timestamp_running_backwards_within_a_round_is_named() -> None:
    line = json.loads(json.dumps(ROUNDS[3]))
    events = line["events"]
    assert events[4]["recorded_at"] == "2026-01-01T00:00:04.005000Z"
    events[5]["recorded_at"] = "2026-01-01T00:00:04.002500Z"  # v6 before v5, re-chained
    forged = resign(line, KEY, keep_times=True)
    (report,) = verify_lines([canonical_text(forged)], KeyRing())
    assert report.failures == [
        f"time: version 6 ({events[5]['type']}) is recorded at 2026-01-01T00:00:04.002500Z, "
        f"before version 5 ({events[4]['type']}) at {events[4]['recorded_at']}"
    ]


def test_settled_before_the_round_opened_is_named() -> None:
    line = json.loads(json.dumps(ROUNDS[3]))
    opened = line["events"][0]["data"]["opened_at_ms"]
    settled = next(e for e in line["events"] if e["type"] == "RoundSettled")
    settled["data"]["settled_at_ms"] = opened - 1
    forged = resign(line, KEY)
    (report,) = verify_lines([canonical_text(forged)], KeyRing())
    assert report.failures == [
        f"time: version {settled['version']} (RoundSettled) settled_at_ms {opened - 1} is "
        f"before version 1 (RoundOpened) opened_at_ms {opened}"
    ]


def test_a_round_opened_before_the_previous_one_revealed_its_seed_is_named() -> None:
    line = json.loads(json.dumps(ROUNDS[4]))  # nonce 5, moved to open at 00:00:04.010
    for index, event in enumerate(line["events"]):
        event["recorded_at"] = f"2026-01-01T00:00:04.{10 + index:03d}000Z"
    forged = resign(line, KEY, keep_times=True)
    revealed = ROUNDS[3]["events"][-1]
    assert revealed["type"] == "ServerSeedRevealed"
    code, output = verify([chain_of(), *ROUNDS[:4], forged, *ROUNDS[5:]])
    assert code == 1
    assert chain_rows(output)[0] == (
        "FAIL chain chain-1: nonce 5 (round r5) opened at 2026-01-01T00:00:04.010000Z, before "
        f"nonce 4 (round r4) revealed its seed at {revealed['recorded_at']}"
    )


def test_a_round_from_another_chain_breaks_the_commitment_links() -> None:
    stranger = round_line(5, chain=OTHER)  # valid alone: its seed hashes to its commitment
    code, output = verify([chain_of(), *ROUNDS[:4], stranger, *ROUNDS[5:]])
    assert code == 1
    assert output[4].startswith("OK   line 6 round r5: ")
    assert chain_rows(output)[0] == (
        f"FAIL chain chain-1: nonce 5 (round r5) commits to {OTHER.seed(4)}, but nonce 4 "
        f"(round r4) revealed {CHAIN.seed(4)}; nonce 6 (round r6) commits to {CHAIN.seed(5)}, "
        f"but nonce 5 (round r5) revealed {OTHER.seed(5)}"
    )


def test_round_one_must_commit_to_the_chains_terminal() -> None:
    wrong = hash_seed(CHAIN.terminal)
    code, output = verify([chain_of(terminal=wrong), *ROUNDS])
    assert code == 1
    assert chain_rows(output)[0] == (
        f"FAIL chain chain-1: nonce 1 (round r1) commits to {CHAIN.terminal}, not the chain's "
        f"terminal {wrong}"
    )


def test_a_partial_bundle_with_a_gap_inside_its_range_is_named() -> None:
    partial = [chain_of(3, 8), *ROUNDS[2:5], *ROUNDS[6:]]  # 3..8 without 6
    code, output = verify(partial)
    assert code == 1
    assert chain_rows(output)[0] == "FAIL chain chain-1: nonce 6 missing (range 3..8)"
    code, output = verify([chain_of(3, 8), *ROUNDS[2:]])
    assert code == 0
    assert chain_rows(output) == [
        "OK   chain chain-1: nonces 3..8, none missing (partial: from nonce 3, not from the "
        "terminal, table table-1)",
        "1 chain: 0 complete from the terminal, 1 partial, 0 coverage unknown, 0 failed",
    ]
    # the first round of a partial range walks down to the terminal: a foreign one does not
    code, output = verify([chain_of(3, 4), round_line(3, chain=OTHER), round_line(4, OTHER)])
    assert chain_rows(output)[0] == (
        "FAIL chain chain-1: nonce 3 (round r3): its commitment does not walk down to the "
        f"chain's terminal {CHAIN.terminal} in 2 steps"
    )


def test_rounds_outside_the_stated_range_or_table_fail() -> None:
    code, output = verify([chain_of(1, 7, table_id="table-9"), *ROUNDS[:8]])
    assert code == 1
    rows = chain_rows(output)[0].removeprefix("FAIL chain chain-1: ").split("; ")
    assert rows[:2] == [
        "nonce 1 (round r1) is on table table-1, the chain's table is table-9",
        "nonce 2 (round r2) is on table table-1, the chain's table is table-9",
    ]
    assert "nonce 8 (round r8) is outside the chain line's range 1..7" in rows


def test_without_a_chain_line_coverage_is_unknown_and_links_still_checked() -> None:
    code, output = verify(ROUNDS[1:5])
    assert code == 0
    assert chain_rows(output) == [
        "OK   chain chain-1: coverage unknown (no chain line); 4 rounds between nonces 2 and "
        "5, linked",
        "1 chain: 0 complete from the terminal, 0 partial, 1 coverage unknown, 0 failed",
    ]
    # across a gap, the later commitment walks down to the earlier seed; duplicates still fail
    code, output = verify([ROUNDS[1], ROUNDS[4], round_line(7, chain=OTHER), ROUNDS[4]])
    assert code == 1
    assert chain_rows(output)[0] == (
        "FAIL chain chain-1: round r5 appears more than once (lines 2 and 4); nonce 7 (round "
        "r7): its commitment does not walk down to the seed nonce 5 (round r5) revealed "
        "(1 step)"
    )


def test_a_chain_line_is_strict_too() -> None:
    code, output = verify([{**chain_of(), "note": 1}, *ROUNDS])
    assert code == 1
    assert output[0] == 'FAIL line 1 chain chain-1: bundle: unknown field "note" in the chain line'
    code, output = verify([chain_of(5, 3), *ROUNDS])
    assert output[0] == (
        "FAIL line 1 chain chain-1: bundle: the chain line's nonces 5..3 are not a range within "
        "the chain's length 12"
    )
    code, output = verify([chain_of(), chain_of(), *ROUNDS])
    assert (
        chain_rows(output)[0] == "FAIL chain chain-1: its chain line appears twice (lines 1 and 2)"
    )


def test_quiet_prints_only_failed_chains_and_the_summaries() -> None:
    code, output = verify([chain_of(), *ROUNDS], "--quiet")
    assert code == 0
    assert output[1:] == [
        "1 chain: 1 complete from the terminal, 0 partial, 0 coverage unknown, 0 failed"
    ]


@pytest.mark.slow
def test_jobs_carry_the_cross_round_facts_back_from_the_workers(tmp_path: Path) -> None:
    lines = [chain_of(), *ROUNDS[:4], *ROUNDS[5:], ROUNDS[0]]
    file = tmp_path / "b.jsonl"
    file.write_text("".join(canonical_text(line) + "\n" for line in lines))
    outputs = []
    for jobs in ("1", "2"):
        out = subprocess.run(
            [sys.executable, "-m", "fairness.verify", str(file), "--jobs", jobs, "--no-replay"],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert out.returncode == 1, out.stderr
        outputs.append(chain_rows(out.stdout.splitlines()))
    assert outputs[0] == outputs[1]
    assert outputs[1][0] == (
        "FAIL chain chain-1: round r1 appears more than once (lines 2 and 9); nonce 5 missing "
        "(range 1..8)"
    )
