"""Fairness benchmarks: shoe, seed chains, receipts, verifier throughput.

`python -m bench fairness [--quick]` or `python bench/fairness.py [--quick]`. Times are the best of
several repeats (the machine is shared and noisy); throughput is also given per CPU second
(`time.process_time`), which is the per-core figure. Targets: first 20 cards <= 20 us, full
416-card shoe <= 250 us, verifier with the proof of play (each round decided anew from its
players' choices, the CLI's default) >= 3,000 3-player rounds/s per core.

The anchor, measured in the same run: one bare Ed25519 verification in a tight loop (the public
key loaded once, the message bytes ready), which every round pays once: `cryptography`'s
(OpenSSL, `ed25519_verify_anchor_us`) and libsodium's through PyNaCl
(`ed25519_libsodium_anchor_us`), which is what the verifier pays for a valid signature
(`fairness.ed25519`). The verifier's own figure for it
(`receipt_verify_us`) adds the receipt's canonical encoding.
"""

from __future__ import annotations

import hashlib
import os
import platform
import subprocess
import sys
import tempfile
import time
import timeit
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fairness import ed25519
from fairness.canonical import canonical_json
from fairness.chain import create_chain
from fairness.crossround import CrossRounds
from fairness.receipt import (
    private_key_from_hex,
    public_key_bytes,
    sign_receipt,
    verify_receipt,
)
from fairness.sample import sample_bundle
from fairness.shoe import FairShoe
from fairness.verify import KeyRing, load_engine_replay, verify_lines

SEED = hashlib.sha256(b"bench").hexdigest()


def _best_us(function: Any, number: int, repeat: int = 7) -> float:
    return min(timeit.repeat(function, number=number, repeat=repeat)) / number * 1e6


def _best_cpu_us(function: Any, number: int, repeat: int = 7) -> float:
    """Best CPU time (time.process_time) per call over `repeat` loops of `number` calls."""
    best = float("inf")
    for _ in range(repeat):
        cpu = time.process_time()
        for _ in range(number):
            function()
        best = min(best, time.process_time() - cpu)
    return best / number * 1e6


def _conditions() -> dict[str, Any]:
    cpu = next(
        (line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
         if line.startswith("model name")),
        platform.processor(),
    ) if Path("/proc/cpuinfo").exists() else platform.processor()  # fmt: skip
    return {
        "python": platform.python_version(),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "at_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def _verifier(lines: list[str], replay: bool, repeat: int = 3) -> dict[str, float]:
    """Rounds per CPU second and per wall second, the best of `repeat` passes (the checks
    across rounds included, as `python -m fairness.verify` runs them)."""
    check = load_engine_replay() if replay else None
    keys = KeyRing()
    best_cpu = best_wall = float("inf")
    for _ in range(repeat):
        cpu0, wall0 = time.process_time(), time.perf_counter()
        reports = list(verify_lines(lines, keys, check))
        cross = CrossRounds()
        for report in reports:
            cross.add(report)
        chains = cross.results()
        best_cpu = min(best_cpu, time.process_time() - cpu0)
        best_wall = min(best_wall, time.perf_counter() - wall0)
        assert all(r.ok for r in reports), "benchmark rounds must verify"
        assert chains and all(c.ok for c in chains), "and their chain must link"
    return {"cpu": round(len(lines) / best_cpu), "wall": round(len(lines) / best_wall)}


def _cli_wall_s(path: Path, jobs: int, repeat: int = 3) -> float:
    """Best wall time of `python -m fairness.verify FILE --quiet --jobs N` (a process of its
    own, start-up and worker spawn included), which must exit 0."""
    root = Path(__file__).resolve().parents[1]
    command = [sys.executable, "-m", "fairness.verify", str(path), "--quiet", "--jobs", str(jobs)]
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        done = subprocess.run(command, cwd=root, capture_output=True, text=True, check=False)
        best = min(best, time.perf_counter() - started)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return best


def run(quick: bool) -> dict[str, Any]:
    """Measure everything; returns the figures (and prints them with the conditions)."""
    figures: dict[str, Any] = {"bench": "fairness", **_conditions(), "quick": quick}
    n = 2_000 if quick else 20_000
    figures["first_20_cards_us"] = round(
        _best_us(lambda: FairShoe(SEED, "alice|bob", 7).cards(20), n), 2
    )
    figures["full_shoe_us"] = round(
        _best_us(lambda: FairShoe(SEED, "alice|bob", 7).cards(416), n // 10), 1
    )
    started = time.perf_counter()
    create_chain(10_000)
    figures["chain_10k_ms"] = round((time.perf_counter() - started) * 1e3, 1)
    big = 100_000 if quick else 1_000_000
    started = time.perf_counter()
    create_chain(big)
    figures[f"chain_{big // 1000}k_s"] = round(time.perf_counter() - started, 3)

    key = private_key_from_hex(hashlib.sha256(b"bench key").hexdigest())
    line = sample_bundle(
        round_id="r1", server_seed=SEED, client_seeds=["alice"], nonce=1, private_key=key
    )
    receipt = line["receipt"]
    signature = sign_receipt(receipt, key)
    public = key.public_key()
    figures["receipt_bytes"] = len(canonical_json(receipt))
    figures["receipt_sign_us"] = round(_best_us(lambda: sign_receipt(receipt, key), n // 10), 1)
    figures["receipt_verify_us"] = round(
        _best_us(lambda: verify_receipt(receipt, signature, public), n // 10), 1
    )
    message = canonical_json(receipt)
    raw_signature = bytes.fromhex(signature)
    figures["ed25519_verify_anchor_us"] = round(
        _best_cpu_us(lambda: public.verify(raw_signature, message), n // 10), 1
    )
    anchor = figures["ed25519_verify_anchor_us"]
    accepts = ed25519.accepts  # libsodium, through PyNaCl: what the verifier asks first
    raw_public = public_key_bytes(key)
    figures["ed25519_libsodium_anchor_us"] = anchor = round(
        _best_cpu_us(lambda: accepts(raw_signature, message, raw_public), n // 10), 1
    )
    figures["anchor_ceiling_rounds_per_cpu_s"] = round(1e6 / anchor)
    repeats = n // 10
    cpu0 = time.process_time()
    for _ in range(repeats):
        verify_receipt(receipt, signature, public)
    figures["receipt_verify_cpu_us"] = round((time.process_time() - cpu0) / repeats * 1e6, 1)

    rounds = 300 if quick else 2_000
    chain = create_chain(rounds)
    for players, label in ((["alice"], "1p"), (["alice", "bob", "carol"], "3p")):
        lines = [
            canonical_json(
                sample_bundle(
                    round_id=f"r{k}",
                    server_seed=chain.seed(k),
                    client_seeds=players,
                    nonce=k,
                    private_key=key,
                )
            ).decode()
            for k in range(1, rounds + 1)
        ]
        figures[f"verifier_{label}_events_per_round"] = round(
            sum(x.count('"recorded_at"') for x in lines) / rounds, 1
        )
        no_replay = _verifier(lines, replay=False)
        with_replay = _verifier(lines, replay=True)
        figures[f"verifier_{label}_rounds_per_cpu_s"] = no_replay["cpu"]
        figures[f"verifier_{label}_rounds_per_wall_s"] = no_replay["wall"]
        figures[f"verifier_{label}_replay_rounds_per_cpu_s"] = with_replay["cpu"]
        # Share of a round's CPU spent in the bare Ed25519 verification (the per-round floor),
        # by the backend the verifier uses.
        figures[f"verifier_{label}_ed25519_share"] = round(anchor * no_replay["cpu"] / 1e6, 2)
        figures[f"verifier_{label}_replay_ed25519_share"] = round(
            anchor * with_replay["cpu"] / 1e6, 2
        )
    # --jobs 2 against one job: the CLI on one file of 3-player rounds of one chain, big
    # enough to dwarf the processes' start-up.
    count = 3 * rounds if quick else 10 * rounds
    long_chain = create_chain(count)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bundle.jsonl"
        with path.open("wb") as out:
            for k in range(1, count + 1):
                line = sample_bundle(
                    round_id=f"r{k}",
                    server_seed=long_chain.seed(k),
                    client_seeds=["alice", "bob", "carol"],
                    nonce=k,
                    private_key=key,
                )
                out.write(canonical_json(line) + b"\n")
        one, two = _cli_wall_s(path, 1), _cli_wall_s(path, 2)
    figures["verifier_cli_3p_rounds"] = count
    figures["verifier_cli_3p_jobs1_rounds_per_wall_s"] = round(count / one)
    figures["verifier_cli_3p_jobs2_rounds_per_wall_s"] = round(count / two)
    figures["verifier_cli_jobs2_speedup"] = round(one / two, 2)
    figures["targets"] = (
        "first 20 <= 20 us; full shoe <= 250 us; verifier with the proof of play >= 3,000 "
        "3-player rounds/s/core; --jobs 2 >= 1.7x one job"
    )
    figures["conditions"] = (
        f"{os.cpu_count()} cores, load average {figures['load_average']}, 1 process, "
        f"{rounds} rounds per figure (classic for 1 player, duel_classic for 3), CPU time; "
        "replay = the proof of play: each round decided anew by the rule engine from its "
        "players' choices on the rebuilt shoe (the CLI's default)"
    )
    return figures


if __name__ == "__main__":
    result = run("--quick" in sys.argv[1:])
    for name, value in result.items():
        print(f"{name:<40} {value}")
