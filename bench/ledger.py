"""Ledger transfers/s against pgbench (TPC-B-like) on the same PostgreSQL, same client counts.

A transfer is one bet-sized journal entry exactly as the round service posts it:
`round_stake_post` in its own durable transaction (lock both balance rows in ascending id,
entry + 2 postings + balance updates with the idempotency check, the deferred balance
trigger at commit). Each client process has its own player and round, so accounts exist
already, as in TPC-B. Also measured: bets where every 5th opens a new round (creates its
escrow account), and the cheapest durable write Django can make (the "floor"). Client
counts: 1 and 16 processes.

Needs DATABASE_URL=postgres://... (the server to use); creates `<db>_ledgerbench` and
`<db>_pgbench` next to it. Run: `python -m bench ledger [--quick]` or
`python bench/ledger.py [--quick]`.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlparse, urlunparse

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

STAKE = 2_500_000  # 2.5 USDC
BETS_PER_ROUND = 5
CLIENT_COUNTS = (1, 16)


def _conn_args(url: str) -> list[str]:
    parsed = urlparse(url)
    args = ["-h", parsed.hostname or "127.0.0.1", "-p", str(parsed.port or 5432)]
    return [*args, "-U", parsed.username or "postgres"]


def _with_db(url: str, name: str) -> str:
    return urlunparse(urlparse(url)._replace(path=f"/{name}"))


def _pg_bin(name: str) -> str:
    local = Path("/usr/lib/postgresql/15/bin") / name
    return str(local) if local.exists() else name


def _recreate_db(url: str, name: str) -> None:
    conn = _conn_args(url)
    subprocess.run([_pg_bin("dropdb"), *conn, "--if-exists", name], check=True, capture_output=True)
    subprocess.run([_pg_bin("createdb"), *conn, name], check=True, capture_output=True)


def _django(url: str) -> None:
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "casino.settings")
    os.environ["DB_POOL_MIN"] = "1"
    os.environ["DB_POOL_MAX"] = "2"
    # Django is configured by this benchmark first; these need it
    import django

    django.setup()
    # Django is configured by this benchmark first; these need it
    from django.conf import settings

    # As in production: DEBUG on wraps every query in Django's query logger.
    settings.DEBUG = False


def _prepare(url: str, clients: int) -> list[int]:
    """Migrate the bench database and create one funded player per client."""
    env = {**os.environ, "DATABASE_URL": url}
    subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "migrate", "--no-input", "-v", "0"],
        check=True,
        env=env,
        cwd=str(ROOT),
    )
    _django(url)
    # Django is configured by this benchmark first; these need it
    from django.contrib.auth import get_user_model

    from ledger import services

    ids = []
    for i in range(clients):
        user = get_user_model().objects.create_user(username=f"bench-{i}", password=None)
        services.wallet_deposit(user=user, amount_micro=10**15, idempotency_key=f"bench-fund-{i}")
        ids.append(user.pk)
    return ids


def _client(
    url: str, user_id: int, tag: str, seconds: float, barrier: Any, out: Any, mode: str
) -> None:
    """One client process: one kind of write back to back for `seconds`; count and CPU time.

    Modes: "transfer" = a bet into the client's one round (accounts exist, like TPC-B's);
    "bet_rounds" = a new round (new escrow account) every 5 bets; "floor" = the cheapest
    durable write Django can do (one UPDATE by zero in `atomic(durable=True)`), the ceiling
    for any ledger written in Django on this machine.
    """
    _django(url)
    # Django is configured by this benchmark first; these need it
    from django.db import connection, transaction

    from ledger import services

    def transfer(n: int) -> None:
        services.round_stake(
            round_ref=f"{tag}-{user_id}-{n // per_round}",
            user=user_id,
            amount_micro=STAKE,
            idempotency_key=f"{tag}-{user_id}-{n}",
        )

    def floor_write(n: int) -> None:
        with transaction.atomic(durable=True), connection.cursor() as cursor:
            cursor.execute(
                "UPDATE ledger_accountbalance SET balance = balance + 0 WHERE account_id = "
                "(SELECT id FROM ledger_account WHERE key = %s)",
                [f"player_available:{user_id}"],
            )

    per_round = BETS_PER_ROUND if mode == "bet_rounds" else 10**12
    step = floor_write if mode == "floor" else transfer
    step(-1)  # warm the connection and the code paths
    barrier.wait()
    done = 0
    cpu0, start = time.process_time(), time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        step(done)
        done += 1
    elapsed = time.perf_counter() - start
    out.put((done, elapsed, time.process_time() - cpu0))
    connection.close()


def transfers_per_second(
    url: str, user_ids: list[int], clients: int, seconds: float, *, mode: str = "transfer"
) -> dict[str, float]:
    """Run `clients` processes at once; aggregate transfers/s and client CPU per transfer."""
    ctx = mp.get_context("spawn")
    barrier, out = ctx.Barrier(clients), ctx.Queue()
    tag = f"c{clients}-{time.time_ns()}"
    procs = [
        ctx.Process(target=_client, args=(url, user_ids[i], tag, seconds, barrier, out, mode))
        for i in range(clients)
    ]
    for proc in procs:
        proc.start()
    results = [out.get(timeout=seconds + 120) for _ in procs]
    for proc in procs:
        proc.join()
    total = sum(r[0] for r in results)
    wall = max(r[1] for r in results)
    cpu = sum(r[2] for r in results)
    return {
        "tps": total / wall,
        "transfers": total,
        "client_cpu_ms_per_transfer": 1000 * cpu / max(total, 1),
    }


def statements_per_transfer(url: str, user_id: int) -> int:
    """SQL statements one transfer sends (BEGIN/COMMIT excluded), from Django's query log."""
    _django(url)
    # Django is configured by this benchmark first; these need it
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from ledger import services

    services.round_stake(round_ref="probe", user=user_id, amount_micro=STAKE, idempotency_key="p0")
    with CaptureQueriesContext(connection) as queries:
        services.round_stake(
            round_ref="probe", user=user_id, amount_micro=STAKE, idempotency_key="p1"
        )
    return sum(1 for q in queries.captured_queries if q["sql"] not in ("BEGIN", "COMMIT"))


def pgbench(url: str, clients: int, seconds: int) -> float:
    """TPS of pgbench's built-in TPC-B-like script on its own scale-16 database."""
    db = f"{urlparse(url).path.lstrip('/')}_pgbench"
    conn = _conn_args(url)
    exists = subprocess.run(
        ["psql", *conn, "-d", db, "-tAc", "SELECT count(*) FROM pgbench_branches"],
        capture_output=True,
        text=True,
    )
    if exists.returncode != 0 or exists.stdout.strip() != "16":
        _recreate_db(url, db)
        subprocess.run(
            [_pg_bin("pgbench"), *conn, "-i", "-q", "-s", "16", db], check=True, capture_output=True
        )
    result = subprocess.run(
        [_pg_bin("pgbench"), *conn, "-n", "-c", str(clients), "-j", str(min(clients, 2)),
         "-T", str(seconds), db],
        check=True,
        capture_output=True,
        text=True,
    )  # fmt: skip
    match = re.search(r"tps = ([0-9.]+)", result.stdout)
    assert match, result.stdout
    return float(match.group(1))


def _conditions(url: str) -> dict[str, Any]:
    conn = _conn_args(url)
    settings = {}
    for name in ("fsync", "synchronous_commit", "shared_buffers", "max_connections"):
        got = subprocess.run(
            ["psql", *conn, "-d", "postgres", "-tAc", f"SHOW {name}"],
            capture_output=True,
            text=True,
        )
        settings[f"pg_{name}"] = got.stdout.strip()
    return {
        "cpus": os.cpu_count(),
        "loadavg_1m_before": round(os.getloadavg()[0], 2),
        **settings,
    }


def _isolated(fn: Any, *args: Any) -> Any:
    """Run fn(*args) in a fresh process, so this one's Django settings (if any) don't matter."""
    with mp.get_context("spawn").Pool(1) as pool:
        return pool.apply(fn, args)


def run(quick: bool) -> dict[str, Any]:
    """Measure, print and return the figures (see the module docstring)."""
    base = os.environ.get("DATABASE_URL", "")
    if not base.startswith("postgres"):
        print("ledger bench: needs DATABASE_URL=postgres://... (skipped)")
        return {"skipped": "needs DATABASE_URL (PostgreSQL)"}
    seconds = 5 if quick else 15
    bench_db = f"{urlparse(base).path.lstrip('/')}_ledgerbench"
    url = _with_db(base, bench_db)
    figures: dict[str, Any] = {"bench": "ledger", "seconds_per_measure": seconds}
    figures.update(_conditions(base))
    _recreate_db(base, bench_db)
    user_ids = _isolated(_prepare, url, max(CLIENT_COUNTS))
    figures["statements_per_transfer"] = _isolated(statements_per_transfer, url, user_ids[0])
    for clients in CLIENT_COUNTS:
        ours = transfers_per_second(url, user_ids, clients, seconds)
        with_rounds = transfers_per_second(url, user_ids, clients, seconds, mode="bet_rounds")
        cheapest = transfers_per_second(url, user_ids, clients, seconds, mode="floor")
        theirs = pgbench(base, clients, seconds)
        figures[f"ledger_{clients}c_tps"] = round(ours["tps"])
        figures[f"ledger_{clients}c_client_cpu_ms"] = round(ours["client_cpu_ms_per_transfer"], 3)
        figures[f"pgbench_{clients}c_tps"] = round(theirs)
        figures[f"ratio_{clients}c"] = round(ours["tps"] / theirs, 3)
        figures[f"bets_new_round_every_5_{clients}c_tps"] = round(with_rounds["tps"])
        figures[f"django_floor_{clients}c_tps"] = round(cheapest["tps"])
        figures[f"django_floor_{clients}c_client_cpu_ms"] = round(
            cheapest["client_cpu_ms_per_transfer"], 3
        )
        figures[f"ledger_vs_floor_{clients}c"] = round(ours["tps"] / cheapest["tps"], 3)
    figures["target_ratio_16c"] = 0.35
    figures["meets_target"] = figures["ratio_16c"] >= 0.35
    figures["loadavg_1m_after"] = round(os.getloadavg()[0], 2)
    for key, value in figures.items():
        print(f"  {key:<28} {value}")
    return figures


if __name__ == "__main__":
    run("--quick" in sys.argv)
