"""The transparency log on PostgreSQL: sequencing throughput, proofs served at 1,000,000
leaves, and storage per leaf.

- Sequencing: leaves of a realistic size (a journal_entry leaf's canonical JSON, about 200
  bytes) are queued as the game queues them (`LogPending` rows), then `transparency.sequence`
  runs pass after pass (20,000 leaves each: hashing, tiles, leaf rows, the queue's delete and
  a signed checkpoint) until the queue is empty; leaves/s over the whole run.
- Proofs: at 1,000,000 leaves (`--quick`: 100,000), random inclusion proofs and consistency
  proofs requested through Django's whole request path (URL routing, DRF, the tile query,
  JSON); p50 and p99 per kind. Each proof is checked once against the signed root.
- Storage: the leaves' and tiles' tables (with their indexes) divided by the log's size.
- The verifier: real rounds (bots through the round service: classic, and duel_classic with
  3 seats) exported and verified with the proof of play, without and with the log check
  against a saved copy of the log's leaves; rounds/s for each.

Needs DATABASE_URL=postgres://... (the server to use); creates `<db>_logbench` next to it.
Run: `python -m bench log [--quick]`. Targets (issue "transparency log"): sequencing at least
20,000 leaves/s; a proof at 1,000,000 leaves p99 at most 5 ms.
"""

from __future__ import annotations

import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from bench.ledger import _conditions, _django, _recreate_db, _with_db

ROOT = Path(__file__).resolve().parent.parent
QUEUE_CHUNK = 50_000


def _migrate(url: str) -> None:
    env = {**os.environ, "DATABASE_URL": url}
    subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "migrate", "--no-input", "-v", "0"],
        check=True,
        env=env,
        cwd=str(ROOT),
    )


def _queue(start: int, count: int) -> None:
    """Queue `count` journal_entry-shaped leaves (ids from `start`), as the game queues them."""
    # Django is configured by this benchmark first; these need it
    from django.utils import timezone

    from casino.platform import rawsql
    from fairness.canonical import canonical_text

    now = timezone.now()
    for first in range(start, start + count, QUEUE_CHUNK):
        rows = []
        for entry_id in range(first, min(first + QUEUE_CHUNK, start + count)):
            leaf = {
                "kind": "journal_entry",
                "entry_id": entry_id,
                "entry_kind": "payout",
                "created_at": "2026-12-02T03:00:00.000000Z",
                "sha256": f"{entry_id:064x}",
            }
            rows.append(("journal_entry", str(entry_id), canonical_text(leaf), now))
        rawsql.copy_rows("fairness_logpending", ["kind", "ref", "data", "queued_at"], rows)


def _sequence_all() -> tuple[int, float, int]:
    """Sequence until the queue is empty: (leaves, seconds, passes)."""
    # Django is configured by this benchmark first; these need it
    from fairness import transparency

    added, passes = 0, 0
    started = time.perf_counter()
    while True:
        done = transparency.sequence()
        if done.added == 0:
            return added, time.perf_counter() - started, passes
        added += done.added
        passes += 1


def _latencies(paths: list[str]) -> list[float]:
    # Django is configured by this benchmark first; these need it
    from django.test import Client

    client = Client()
    for path in paths[:50]:  # warm the code paths and the connection
        client.get(path)
    out = []
    for path in paths:
        started = time.perf_counter()
        answer = client.get(path)
        out.append((time.perf_counter() - started) * 1000)
        assert answer.status_code == 200, answer.content
    return out


def _check_one_of_each(size: int) -> None:
    """One inclusion and one consistency proof as served, verified against signed roots."""
    # Django is configured by this benchmark first; these need it
    import base64
    import json

    from django.test import Client

    from fairness import note, tlog, transparency
    from fairness.models import LogCheckpoint, LogLeaf

    client = Client()
    checkpoint = LogCheckpoint.objects.get(size=size)
    body, _ = note.open_note(checkpoint.note, transparency.verifiers())
    _, _, root = note.parse_checkpoint(body)
    index = size // 3
    proof = json.loads(client.get(f"/api/log/proof/inclusion?index={index}&size={size}").content)
    leaf = tlog.leaf_hash(LogLeaf.objects.get(index=index).data.encode("utf-8"))
    hashes = [base64.b64decode(h) for h in proof["proof"]]
    tlog.verify_inclusion(index, size, leaf, hashes, root)
    older = LogCheckpoint.objects.filter(size__lt=size).order_by("-size").first()
    if older is not None:
        _, _, old_root = note.parse_checkpoint(older.note.split("\n\n")[0] + "\n")
        answer = client.get(f"/api/log/proof/consistency?from={older.size}&to={size}").content
        hashes = [base64.b64decode(h) for h in json.loads(answer)["proof"]]
        tlog.verify_consistency(older.size, size, hashes, old_root, root)


def _verifier(rounds: int) -> dict[str, Any]:
    """`fairness.verify` on a bundle of real rounds (bots through the round service, classic
    and duel_classic), with and without the log check (`--checkpoint --vkey --log FILE`)."""
    # Django is configured by this benchmark first; these need it
    import base64
    import tempfile
    from io import StringIO

    from django.core.management import call_command

    from casino.tables.play import play
    from fairness import transparency
    from fairness.models import LogCheckpoint, LogLeaf
    from fairness.verify import main as verify_main

    play(ruleset="classic", rounds=rounds // 2, players=1, seed=1)
    play(ruleset="duel_classic", rounds=rounds - rounds // 2, players=3, seed=2)
    _sequence_all()
    with tempfile.TemporaryDirectory() as tmp:
        bundle, checkpoint, saved = Path(tmp, "b.jsonl"), Path(tmp, "cp.txt"), Path(tmp, "l.jsonl")
        call_command("export_rounds", "--out", str(bundle), stdout=StringIO(), stderr=StringIO())
        count = sum('"receipt"' in line for line in bundle.read_text().splitlines())
        checkpoint.write_text(LogCheckpoint.objects.order_by("-size")[0].note)
        saved.write_text(
            "".join(
                f'{{"index": {i}, "data": "{base64.b64encode(d.encode()).decode()}"}}\n'
                for i, d in LogLeaf.objects.order_by("index").values_list("index", "data")
            )
        )
        log = ["--checkpoint", str(checkpoint), "--vkey", transparency.signer().vkey]
        figures: dict[str, Any] = {"verifier_rounds": count}
        for name, extra in (("without_log", []), ("with_log", [*log, "--log", str(saved)])):
            out = StringIO()
            started = time.perf_counter()
            code = verify_main([str(bundle), "--quiet", *extra], out=out)
            elapsed = time.perf_counter() - started
            assert code == 0, out.getvalue()[-2000:]
            figures[f"verifier_{name}_rounds_per_s"] = round(count / elapsed)
    return figures


def _storage_bytes() -> int:
    # Django is configured by this benchmark first; these need it
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_total_relation_size('fairness_logleaf') "
            "+ pg_total_relation_size('fairness_logtile')"
        )
        return int(cursor.fetchone()[0])


def run(quick: bool) -> dict[str, Any]:
    """Measure, print and return the figures (see the module docstring)."""
    base = os.environ.get("DATABASE_URL", "")
    if not base.startswith("postgres"):
        print("log bench: needs DATABASE_URL=postgres://... (skipped)")
        return {"skipped": "needs DATABASE_URL (PostgreSQL)"}
    size = 100_000 if quick else 1_000_000
    first_run = 20_000 if quick else 200_000
    requests = 500 if quick else 2000
    url = _with_db(base, f"{urlparse(base).path.lstrip('/')}_logbench")
    figures: dict[str, Any] = {"bench": "log", **_conditions(base)}
    _recreate_db(base, url.rsplit("/", 1)[1])
    _migrate(url)
    # Shared tables deal at once here (their beacon rounds are `python -m bench beacon`'s).
    os.environ["BEACON"] = "off"
    _django(url)
    figures.update(_verifier(200 if quick else 1000))
    # Django is configured by this benchmark first; these need it
    from fairness.models import LogState

    played = LogState.objects.get(id=1).size
    _queue(played, first_run)
    added, seconds, passes = _sequence_all()
    figures["sequenced_leaves"] = added
    figures["sequencing_leaves_per_s"] = round(added / seconds)
    figures["sequencing_passes"] = passes
    _queue(played + first_run, size - first_run - played)
    _sequence_all()
    figures["log_size"] = size
    _check_one_of_each(size)
    rng = random.Random(1)
    inclusion = [
        f"/api/log/proof/inclusion?index={rng.randrange(size)}&size={size}" for _ in range(requests)
    ]
    consistency = [
        f"/api/log/proof/consistency?from={rng.randrange(1, size)}&to={size}"
        for _ in range(requests)
    ]
    for name, paths in (("inclusion", inclusion), ("consistency", consistency)):
        times = _latencies(paths)
        figures[f"{name}_proof_p50_ms"] = round(statistics.median(times), 3)
        figures[f"{name}_proof_p99_ms"] = round(statistics.quantiles(times, n=100)[98], 3)
    figures["storage_bytes_per_leaf"] = round(_storage_bytes() / size, 1)
    figures["target_sequencing_leaves_per_s"] = 20_000
    figures["target_proof_p99_ms"] = 5.0
    figures["meets_target"] = (
        figures["sequencing_leaves_per_s"] >= 20_000
        and max(figures["inclusion_proof_p99_ms"], figures["consistency_proof_p99_ms"]) <= 5.0
    )
    figures["loadavg_1m_after"] = round(os.getloadavg()[0], 2)
    for key, value in figures.items():
        print(f"  {key:<32} {value}")
    return figures


if __name__ == "__main__":
    run("--quick" in sys.argv)
