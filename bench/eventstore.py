"""Event store vs the `eventsourcing` library, like with like, on the same PostgreSQL.

A round of 7 events saved in one transaction: appends with 1 and 8 writer processes, replay of
one round, reading the whole log in order; pgbench (1 and 16 clients) as the machine's anchor.
Needs DATABASE_URL (PostgreSQL). Run: `python -m bench eventstore [--quick]` or
`python bench/eventstore.py [--quick]`.
"""

from __future__ import annotations

import functools
import multiprocessing as mp
import os
import re
import resource
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from eventsourcing.application import Application  # noqa: E402
from eventsourcing.domain import Aggregate, event  # noqa: E402

EVENTS_PER_ROUND = 7


class Round(Aggregate):
    """The peer's Round aggregate: the same 7 events with the same data as ours."""

    @event("Opened")
    def __init__(self, table_id: str, ruleset: str, commitment: str, nonce: int) -> None:
        self.table_id, self.ruleset, self.commitment, self.nonce = (
            table_id, ruleset, commitment, nonce,
        )  # fmt: skip
        self.stakes: dict[str, int] = {}
        self.cards: list[str] = []
        self.status = "betting"

    @event("BetPlaced")
    def place_bet(self, player: str, amount: int) -> None:
        self.stakes[player] = amount

    @event("BettingClosed")
    def close_betting(self, client_material: str) -> None:
        self.status = "dealing"

    @event("CardsDealt")
    def deal(self, cards: list[str], positions: list[int]) -> None:
        self.cards += cards

    @event("PlayerStood")
    def stand(self, player: str, hand: int) -> None:
        self.status = "dealer"

    @event("DealerPlayed")
    def dealer_play(self, cards: list[str], total: int) -> None:
        self.cards += cards

    @event("Settled")
    def settle(self, outcomes: list[dict[str, Any]]) -> None:
        self.status = "settled"


def round_events(n: int) -> list[tuple[str, dict[str, Any]]]:
    """The 7 (type, data) of one round, shared by both sides."""
    return [
        ("Opened", {"table_id": "t1", "ruleset": "classic", "commitment": "ab" * 32, "nonce": n}),
        ("BetPlaced", {"player": "17", "amount": 25_000_000}),
        ("BettingClosed", {"client_material": "seed-of-player-17"}),
        ("CardsDealt", {"cards": ["AS", "7D", "TC"], "positions": [0, 1, 2]}),
        ("PlayerStood", {"player": "17", "hand": 0}),
        ("DealerPlayed", {"cards": ["9H", "8S"], "total": 17}),
        ("Settled", {"outcomes": [{"player": "17", "hand": 0, "gross_return": 50_000_000}]}),
    ]


def _evolve(state: dict[str, Any], type_: str, data: dict[str, Any]) -> dict[str, Any]:
    """Our fold for the replay measure (the same work the peer's aggregate methods do)."""
    if type_ == "Opened":
        return {**data, "stakes": {}, "cards": [], "status": "betting"}
    if type_ == "BetPlaced":
        state["stakes"][data["player"]] = data["amount"]
    elif type_ in ("CardsDealt", "DealerPlayed"):
        state["cards"] += data["cards"]
    elif type_ == "BettingClosed":
        state["status"] = "dealing"
    elif type_ == "PlayerStood":
        state["status"] = "dealer"
    elif type_ == "Settled":
        state["status"] = "settled"
    return state


# --- setup --------------------------------------------------------------------------------


def _django() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "casino.settings")
    # Django is configured by this benchmark first; these need it
    import django
    from django.apps import apps

    if not apps.ready:
        django.setup()


def _peer_env() -> dict[str, str]:
    url = urlparse(os.environ["DATABASE_URL"])
    return {
        "PERSISTENCE_MODULE": "eventsourcing.postgres",
        "POSTGRES_DBNAME": url.path.lstrip("/"),
        "POSTGRES_HOST": url.hostname or "127.0.0.1",
        "POSTGRES_PORT": str(url.port or 5432),
        "POSTGRES_USER": url.username or "postgres",
        "POSTGRES_PASSWORD": url.password or "",
        "POSTGRES_POOL_SIZE": "1",
        "POSTGRES_MAX_OVERFLOW": "0",
    }


class BenchRounds(Application[Any]):
    """The peer application (its table: benchrounds_events)."""


@functools.cache
def _peer_app(create_table: bool = True) -> Application[Any]:
    # One per process: a dropped Application closes its connection pool. Only the parent
    # creates the table (concurrent CREATE OR REPLACE FUNCTION fails in PostgreSQL).
    return BenchRounds(env={**_peer_env(), "CREATE_TABLE": "y" if create_table else "n"})


# --- appends (worker processes) -------------------------------------------------------------


def _ours_one_round(n: int) -> str:
    # Django is configured by this benchmark first; these need it
    from django.db import transaction

    from casino.eventstore.store import NewEvent, append

    stream = str(uuid.uuid4())
    with transaction.atomic(durable=True):
        append(
            stream_id=stream,
            expected_version=0,
            events=[NewEvent(t, d) for t, d in round_events(n)],
        )
    return stream


def _peer_round(app: Application[Any], n: int) -> str:
    (_, opened), (_, bet), (_, closed), (_, dealt), (_, stood), (_, dealer), (_, settled) = (
        round_events(n)
    )
    r = Round(**opened)
    r.place_bet(**bet)
    r.close_betting(**closed)
    r.deal(**dealt)
    r.stand(**stood)
    r.dealer_play(**dealer)
    r.settle(**settled)
    app.save(r)
    return str(r.id)


def _backend_pid(side: str) -> int:
    """The PostgreSQL backend process serving this writer's one connection."""
    if side == "ours":
        # Django is configured by this benchmark first; these need it
        from django.db import connection

        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            return int(cursor.fetchone()[0])
    recorder: Any = _peer_app(create_table=False).recorder
    with recorder.datastore.get_connection() as conn:
        row = conn.execute("SELECT pg_backend_pid() AS pid").fetchone()
        return int(row["pid"] if isinstance(row, dict) else row[0])


def _cpu_seconds(pid: int | None = None) -> float | None:
    """CPU time (user + system) of this process, or of a local process by pid (None if unseen)."""
    if pid is None:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime
    try:  # the server's backend: only when PostgreSQL runs on this machine
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _writer(side: str, commands: Any, barrier: Any, results: Any) -> None:
    """A writer process: warm up once, then one timed run per command until None.

    Each run reports its rounds, some stream ids, and the CPU seconds the writer process and
    its server backend spent (outside the timed loop: the rate is not affected).
    """
    try:
        if side == "ours":
            # One connection per writer on both sides (the server is shared: max_connections).
            os.environ["DB_POOL_MIN"], os.environ["DB_POOL_MAX"] = "1", "1"
            _django()
            one_round: Callable[[int], str] = _ours_one_round
        else:
            app = _peer_app(create_table=False)
            one_round = lambda n: _peer_round(app, n)  # noqa: E731
        one_round(-1)  # warm up: connection, prepared paths
        backend = _backend_pid(side)
    except Exception as exc:
        barrier.abort()
        results.put((0, [], repr(exc), None, None))
        raise
    while (seconds := commands.get()) is not None:
        ids: list[str] = []
        barrier.wait(timeout=600)
        client, server = _cpu_seconds(), _cpu_seconds(backend)
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            ids.append(one_round(len(ids)))
        client_after, server_after = _cpu_seconds(), _cpu_seconds(backend)
        results.put(
            (
                len(ids),
                ids[:100],
                None,
                client_after - client if client is not None and client_after is not None else None,
                server_after - server if server is not None and server_after is not None else None,
            )
        )


class Writers:
    """`count` writer processes of one side, kept alive across repeated timed runs."""

    def __init__(self, side: str, count: int) -> None:
        ctx = mp.get_context("spawn")
        self.side, self.count = side, count
        self.commands, self.results = ctx.Queue(), ctx.Queue()
        self.barrier = ctx.Barrier(count + 1)
        self.procs = [
            ctx.Process(target=_writer, args=(side, self.commands, self.barrier, self.results))
            for _ in range(count)
        ]
        for proc in self.procs:
            proc.start()

    def run(self, seconds: float) -> tuple[float, list[str], dict[str, float | None]]:
        """Rounds/s of all writers appending 7-event rounds for `seconds`, some ids, CPU/round.

        CPU per round: microseconds of writer-process and server-backend CPU time per round
        (None where not measurable): far less sensitive than the rate to how busy the machine is.
        """
        for _ in self.procs:
            self.commands.put(seconds)
        try:
            self.barrier.wait(timeout=600)
        except Exception:
            outcome = self.results.get(timeout=10)
            raise RuntimeError(f"{self.side} writer failed to start: {outcome[2]}") from None
        outcomes = [self.results.get(timeout=seconds + 120) for _ in self.procs]
        rounds = sum(outcome[0] for outcome in outcomes)
        cpu: dict[str, float | None] = {}
        for key, index in (("client", 3), ("server", 4)):
            spent = [outcome[index] for outcome in outcomes]
            ok = rounds and all(s is not None for s in spent)
            cpu[key] = 1e6 * sum(spent) / rounds if ok else None
        return rounds / seconds, [i for o in outcomes for i in o[1]], cpu

    def close(self) -> None:
        """Stop the writer processes."""
        for _ in self.procs:
            self.commands.put(None)
        for proc in self.procs:
            proc.join(60)


def measure_appends(writers: int, seconds: float, reps: int) -> dict[str, Any]:
    """Both sides, alternating runs (the machine is shared): the median rounds/s of each."""
    pools = {side: Writers(side, writers) for side in ("ours", "eventsourcing")}
    runs: dict[str, list[float]] = {side: [] for side in pools}
    ids: dict[str, list[str]] = {side: [] for side in pools}
    cpu: dict[str, dict[str, list[float]]] = {s: {"client": [], "server": []} for s in pools}
    try:
        for _ in range(reps):
            for side, pool in pools.items():
                rate, some, per_round = pool.run(seconds)
                runs[side].append(rate)
                ids[side] += some
                for key, us in per_round.items():
                    if us is not None:
                        cpu[side][key].append(us)
    finally:
        for pool in pools.values():
            pool.close()
    cpu_median = {
        side: {k: statistics.median(v) if len(v) == reps else None for k, v in kinds.items()}
        for side, kinds in cpu.items()
    }
    return {
        "median": {k: statistics.median(v) for k, v in runs.items()},
        "runs": runs,
        "ids": ids,
        "cpu_us_per_round": cpu_median,
    }


# --- replay and log reading ----------------------------------------------------------------


def _timed(fn: Callable[[int], int], seconds: float) -> float:
    """Calls of fn per second (fn returns how many items it handled)."""
    done = 0
    started = time.perf_counter()
    while (elapsed := time.perf_counter() - started) < seconds:
        done += fn(done)
    return done / elapsed


def measure_replay(ours: list[str], peers: list[str], seconds: float) -> dict[str, float]:
    """Rounds/s: our load + fold of one round vs the peer's repository.get (no cache)."""
    # Django is configured by this benchmark first; these need it
    from casino.eventstore.store import load

    app = _peer_app()

    def ours_one(i: int) -> int:
        state: dict[str, Any] = {}
        for e in load(ours[i % len(ours)]):
            state = _evolve(state, e.type, e.data)
        assert state["status"] == "settled"
        return 1

    def peer_one(i: int) -> int:
        assert app.repository.get(uuid.UUID(peers[i % len(peers)])).status == "settled"
        return 1

    return {"ours": _timed(ours_one, seconds), "eventsourcing": _timed(peer_one, seconds)}


def measure_log_read(ours_from: int, peer_from: int, count: int) -> dict[str, float]:
    """Events/s reading `count` events in log order, pages of 1,000."""
    # Django is configured by this benchmark first; these need it
    from casino.eventstore.store import read_after

    app = _peer_app()
    results = {}

    started = time.perf_counter()
    cursor, n = ours_from, 0
    while n < count and (page := read_after(cursor, 1000)):
        cursor, n = page[-1].position, n + len(page)
    results["ours"] = n / (time.perf_counter() - started)

    for decode in (False, True):
        started = time.perf_counter()
        start, n = peer_from + 1, 0
        while n < count:
            notes = app.recorder.select_notifications(start, 1000)
            if not notes:
                break
            if decode:
                for note in notes:
                    app.mapper.to_domain_event(note)
            start, n = notes[-1].id + 1, n + len(notes)
        key = "eventsourcing_decoded" if decode else "eventsourcing_raw"
        results[key] = n / (time.perf_counter() - started)
    return results


def _peer_max_id() -> int:
    return _peer_app().recorder.max_notification_id() or 0


# --- pgbench --------------------------------------------------------------------------------


def pgbench(clients: int, seconds: int) -> float:
    """TPS of pgbench's TPC-B-like script on a scale-16 database next to ours."""
    url = urlparse(os.environ["DATABASE_URL"])
    db = f"{url.path.lstrip('/')}_pgbench"
    conn = ["-h", url.hostname or "127.0.0.1", "-p", str(url.port or 5432)]
    conn += ["-U", url.username or "postgres"]
    exists = subprocess.run(
        ["psql", *conn, "-d", db, "-tAc", "SELECT count(*) FROM pgbench_branches"],
        capture_output=True,
        text=True,
    )
    if exists.returncode != 0 or exists.stdout.strip() != "16":
        subprocess.run(["createdb", *conn, db], capture_output=True)
        subprocess.run(
            ["pgbench", *conn, "-i", "-q", "-s", "16", db], check=True, capture_output=True
        )
    out = subprocess.run(
        ["pgbench", *conn, "-c", str(clients), "-j", str(min(clients, 2)), "-T", str(seconds), db],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    match = re.search(r"tps = ([\d.]+)", out)
    return float(match.group(1)) if match else 0.0


# --- the run --------------------------------------------------------------------------------


def _conditions() -> dict[str, Any]:
    # Django is configured by this benchmark first; these need it
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version")
        pg = cursor.fetchone()[0]
        cursor.execute("SHOW synchronous_commit")
        sync = cursor.fetchone()[0]
    # the peer library, installed for this benchmark only
    import eventsourcing

    return {
        "cpus": os.cpu_count(),
        "load_avg_1m_at_start": round(os.getloadavg()[0], 2),
        "postgres": pg,
        "synchronous_commit": sync,
        "eventsourcing": getattr(eventsourcing, "__version__", "9.5.6"),
        "hash_chain": "on (sha256 per event, computed in Python)",
    }


def run(quick: bool) -> dict[str, Any]:
    """Run every measure, print the figures with their conditions, return them."""
    if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        print("eventstore bench: needs DATABASE_URL=postgres://... (skipped)")
        return {"skipped": "needs DATABASE_URL (PostgreSQL)"}
    _django()
    # Django is configured by this benchmark first; these need it
    from django.core.management import call_command

    from casino.eventstore.store import last_position

    call_command("migrate", "eventstore", verbosity=0)
    seconds, reps = (3.0, 2) if quick else (8.0, 3)
    figures: dict[str, Any] = {
        "conditions": _conditions(),
        "method": (
            f"{reps} alternating runs of {seconds:g} s per side and measure; medians; "
            "*_cpu_us_round: user+system CPU per round of the writer processes (client) and of "
            "their PostgreSQL backends (server, when local)"
        ),
    }
    ours_from, peer_from = last_position(), _peer_max_id()
    ids: dict[str, list[str]] = {"ours": [], "eventsourcing": []}
    for writers in (1, 8):
        appends = measure_appends(writers, seconds, reps)
        for side, rate in appends["median"].items():
            ids[side] += appends["ids"][side]
            figures[f"append_{writers}w_{side}_rounds_s"] = round(rate)
            figures[f"append_{writers}w_{side}_events_s"] = round(rate * EVENTS_PER_ROUND)
            figures[f"append_{writers}w_{side}_runs"] = [round(r) for r in appends["runs"][side]]
            for kind, us in appends["cpu_us_per_round"][side].items():
                if us is not None:
                    figures[f"append_{writers}w_{side}_{kind}_cpu_us_round"] = round(us)
    replays = [measure_replay(ids["ours"], ids["eventsourcing"], seconds / 2) for _ in range(reps)]
    figures["replay_ours_rounds_s"] = round(statistics.median(r["ours"] for r in replays))
    figures["replay_eventsourcing_get_rounds_s"] = round(
        statistics.median(r["eventsourcing"] for r in replays)
    )
    appended = min(_count_after(ours_from), _peer_max_id() - peer_from)
    logs = [measure_log_read(ours_from, peer_from, appended) for _ in range(reps)]
    figures["log_read_events"] = appended
    for key in ("ours", "eventsourcing_raw", "eventsourcing_decoded"):
        figures[f"log_read_{key}_events_s"] = round(statistics.median(r[key] for r in logs))
    pg_seconds = 5 if quick else 10
    figures["pgbench_1c_tps"] = round(pgbench(1, pg_seconds))
    figures["pgbench_16c_tps"] = round(pgbench(16, pg_seconds))
    figures["load_avg_1m_at_end"] = round(os.getloadavg()[0], 2)
    _print(figures)
    return figures


def _count_after(position: int) -> int:
    # Django is configured by this benchmark first; these need it
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM eventstore_storedevent WHERE position > %s", [position]
        )
        return int(cursor.fetchone()[0])


def _print(figures: dict[str, Any]) -> None:
    print("event store vs eventsourcing (rounds of 7 events, one transaction each)")
    for key, value in figures.items():
        print(f"  {key:<42} {value}")


def main() -> None:
    """Standalone entry point."""
    run(quick="--quick" in sys.argv[1:])


if __name__ == "__main__":
    # Re-import under the package name so the peer's event topics are "bench.eventstore:...".
    from bench.eventstore import main as package_main

    package_main()
