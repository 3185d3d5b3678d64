"""`manage.py audit` with every check on: rounds per CPU-second, per rule set and overall.

`python -m bench audit [--quick]` (or `python bench/audit.py`). On the embedded default it uses
a temporary SQLite file; with DATABASE_URL set to PostgreSQL, a scratch database
`<db>_auditbench` (recreated). Rounds are played first by `casino.tables.play` (the real service
path: events, ledger, projections, signed receipts, fair shoe), untimed; then
`casino.rounds.audit.audit`
runs over each rule set's rounds, best of several repeats, timed in CPU seconds
(`time.process_time`: the per-core figure) and wall seconds. Every audited round must pass.

The anchor, measured in the same process: one bare `cryptography` Ed25519 verification in a
tight loop (the key loaded once), the floor of any round's audit. Where the time goes comes
from a separate, untimed cProfile run, grouped by check. Target (issue 6): >= 2,000 rounds/s
per core.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench._scratch import migrated_scratch

ROOT = Path(__file__).resolve().parent.parent
# (rule set, seats); the first is the headline figure's like-for-like with earlier runs.
RULESETS = (("classic", 1), ("atlantic_city", 1), ("duel_classic", 3), ("duel", 3))

# Runs inside a fresh interpreter with DATABASE_URL pointing at the scratch database.
WORKER = r"""
import cProfile, json, os, pstats, sys, time
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "casino.settings")
import django
django.setup()
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from casino.rounds.audit import audit
from casino.eventstore.models import StoredEvent
from casino.tables.play import play

rounds, repeats, rulesets = int(sys.argv[1]), int(sys.argv[2]), json.loads(sys.argv[3])

def ed25519_anchor_us(n=2000):
    key = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
    public, message = key.public_key(), b"x" * 900  # about a receipt's size
    signature = key.sign(message)
    best = float("inf")
    for _ in range(3):
        cpu = time.process_time()
        for _ in range(n):
            public.verify(signature, message)
        best = min(best, (time.process_time() - cpu) / n * 1e6)
    return best

def libsodium_anchor_us(n=2000):
    from fairness import ed25519
    key = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
    public, message = key.public_key().public_bytes_raw(), b"x" * 900
    signature = key.sign(message)
    best = float("inf")
    for _ in range(3):
        cpu = time.process_time()
        for _ in range(n):
            ed25519.accepts(signature, message, public)
        best = min(best, (time.process_time() - cpu) / n * 1e6)
    return best

def timed(ids):
    best_cpu = best_wall = float("inf")
    for _ in range(repeats):
        cpu, wall = time.process_time(), time.perf_counter()
        reports = audit(ids)
        best_cpu = min(best_cpu, time.process_time() - cpu)
        best_wall = min(best_wall, time.perf_counter() - wall)
        failed = [r for r in reports if not r.ok]
        assert not failed, failed[0].problems
    return best_cpu, best_wall

GROUPS = {  # check -> (file suffix, function name); cumulative time, the groups do not nest
    "engine re-enactment": ("casino/engine/audit.py", "reenact_states"),
    "engine decode of stored events": ("casino/rounds/audit.py", "_decode"),
    "engine fold (a stream that does not re-enact)": ("casino/rounds/audit.py", "_fold"),
    # Runs only for a round that does not re-enact exactly
    # (casino.rounds.audit._settled_by_reenactment).
    "settlement replay": ("fairness/replay.py", "check"),
    "ed25519": ("~", "<method 'verify' of 'cryptography.hazmat.bindings._rust.openssl."
                "ed25519.Ed25519PublicKey' objects>"),
    "ed25519 (libsodium)": ("fairness/ed25519.py", "accepts"),
    "hash chain": ("fairness/checks.py", "check_event_chain"),
    "cards (shoe)": ("fairness/checks.py", "check_cards"),
    "ledger legs": ("casino/rounds/money.py", "round_legs_problems"),
    "database reads: events": ("casino/eventstore/store.py", "load_bundle_events"),
    "database reads: receipts": ("casino/rounds/audit.py", "_proofs_read"),
    "database reads: ledger": ("casino/rounds/money.py", "recorded_nets_many"),
}

anchor = ed25519_anchor_us()
played = {}
for ruleset, seats in rulesets:
    play(ruleset=ruleset, rounds=2, players=seats)  # warm-up: chain creation, caches
    played[ruleset] = play(ruleset=ruleset, rounds=rounds, players=seats).round_ids
everything = [i for ids in played.values() for i in ids]
audit(everything)  # warm-up: imports, key ring, caches
result = {"ed25519_verify_us": anchor, "libsodium_verify_us": libsodium_anchor_us(),
          "rulesets": {}}
for ruleset, ids in played.items():
    cpu, wall = timed(ids)
    events = StoredEvent.objects.filter(stream_id__in=ids).count()
    result["rulesets"][ruleset] = {
        "rounds": len(ids), "events_per_round": events / len(ids),
        "rounds_per_cpu_s": len(ids) / cpu, "rounds_per_wall_s": len(ids) / wall,
    }
cpu, wall = timed(everything)
result["all"] = {"rounds": len(everything), "rounds_per_cpu_s": len(everything) / cpu,
                 "rounds_per_wall_s": len(everything) / wall}
profile = cProfile.Profile()
profile.enable()
audit(everything)
profile.disable()
stats = pstats.Stats(profile).stats
total = sum(tt for (_, _, tt, _, _) in stats.values())
shares = {}
for group, (suffix, name) in GROUPS.items():
    shares[group] = sum(ct for (f, _, n), (_, _, _, ct, _) in stats.items()
                        if n == name and f.endswith(suffix))
shares["other (queries, bundle lines, seed chain, checks 1-2)"] = total - sum(shares.values())
result["time_share"] = {k: round(v / total, 3) for k, v in shares.items()}
result["profiled_us_per_round"] = total / len(everything) * 1e6
print(json.dumps(result))
"""


def run(quick: bool) -> dict[str, Any]:
    env, database = migrated_scratch("auditbench")
    python = sys.executable
    rounds, repeats = (12, 3) if quick else (100, 5)
    rulesets = RULESETS
    out = subprocess.run(
        [python, "-c", WORKER, str(rounds), str(repeats), json.dumps(rulesets)],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    result = json.loads(out.strip().splitlines()[-1])
    figures: dict[str, Any] = {
        "conditions": f"{os.cpu_count()} cores, load average "
        f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}, {database}, 1 process, "
        f"{rounds} rounds per rule set played by casino.tables.play, every check on, "
        f"best of {repeats} audits, CPU time of the auditing process"
        + (" (PostgreSQL's own CPU not included)" if database.startswith("PostgreSQL") else ""),
        "ed25519_verify_anchor_us": round(result["ed25519_verify_us"], 1),
        "anchor_ceiling_rounds_per_cpu_s": round(1e6 / result["ed25519_verify_us"]),
    }
    # libsodium (fairness.ed25519, through PyNaCl) is what the verifier asks first
    figures["libsodium_verify_anchor_us"] = round(result["libsodium_verify_us"], 1)
    for ruleset, seats in rulesets:
        measured = result["rulesets"][ruleset]
        label = f"{ruleset}_{seats}p"
        figures[f"{label}_events_per_round"] = round(measured["events_per_round"], 1)
        figures[f"{label}_rounds_per_cpu_s"] = round(measured["rounds_per_cpu_s"])
        figures[f"{label}_rounds_per_wall_s"] = round(measured["rounds_per_wall_s"])
    figures["all_rounds"] = result["all"]["rounds"]
    figures["all_rounds_per_cpu_s"] = round(result["all"]["rounds_per_cpu_s"])
    figures["all_rounds_per_wall_s"] = round(result["all"]["rounds_per_wall_s"])
    figures["profiled_us_per_round"] = round(result["profiled_us_per_round"])
    figures["time_share"] = result["time_share"]
    figures["target"] = "audit, every check on: >= 2,000 rounds/s per core"
    return figures


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    for key, value in run(quick="--quick" in sys.argv).items():
        print(f"{key:<36} {value}")
