"""What the simulation replaces while it runs: the clock, the randomness, timers and faults.

Everything is installed by `installed(world)` and restored on exit, by plain attribute
patches (no product file is edited):

- the virtual clock: `casino.rounds.services.now_ms` and the `time` module seen by
  `casino.rounds.tasks`
  (the deadline sweep) and `casino.tables.services` (the duel lobby), so nothing ever sleeps;
- determinism: round ids (`casino.rounds.services.uuid`), seed-chain heads
  (`fairness.chain.new_head`)
  and client seeds (`fairness.services.client_seed_default`) come from generators seeded by
  the simulation seed, so the fair shoe deals the same cards on a replay;
- timers: `casino.rounds.publish.schedule_nudge` and `casino.tables.services.schedule_lobby` put
  the nudge
  in the simulation's own timer queue (a virtual Celery), which delivers it on time, twice,
  late, or never, as the seed decides;
- faults: one-shot wrappers around inner steps of the round service (projections, ledger
  posting, receipt) that raise, and a wrapper around the service's transaction whose COMMIT
  raises `OperationalError`.
"""

from __future__ import annotations

import heapq
import importlib
import random
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from django.db import DEFAULT_DB_ALIAS, OperationalError, connections

START_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z: every seed starts its clock here


class Clock:
    """Virtual epoch milliseconds; `time()` mimics the `time` module for patched modules."""

    def __init__(self, start_ms: int = START_MS) -> None:
        self.ms = start_ms

    def now_ms(self) -> int:
        return self.ms

    def advance(self, ms: int) -> None:
        self.ms += max(1, int(ms))

    # The `time` module interface the patched modules use.
    def time(self) -> float:
        return self.ms / 1000

    def time_ns(self) -> int:
        return self.ms * 1_000_000

    def perf_counter(self) -> float:
        return self.ms / 1000

    def monotonic(self) -> float:
        return self.ms / 1000

    def sleep(self, seconds: float) -> None:
        self.advance(int(seconds * 1000))


class SimulatedMalfunction(RuntimeError):
    """Raised by an armed fault hook in the middle of the round service."""


@dataclass(order=True)
class Nudge:
    due_ms: int
    seq: int
    kind: str = field(compare=False)  # "round" or "lobby"
    target: str = field(compare=False)
    deadline_ms: int = field(compare=False, default=0)


class TimerQueue:
    """A virtual Celery: nudges scheduled by the product, delivered by the simulation."""

    def __init__(self, rng: random.Random, faults: dict[str, int]) -> None:
        self.rng = rng
        self.faults = faults
        self.queue: list[Nudge] = []
        self.seq = 0
        self.enabled = True  # off while draining at the end of a seed

    def _push(self, due: int, kind: str, target: str, deadline_ms: int) -> None:
        self.seq += 1
        heapq.heappush(self.queue, Nudge(due, self.seq, kind, target, deadline_ms))

    def schedule(self, kind: str, target: str, deadline_ms: int) -> None:
        """Decide the nudge's fate from the seed: on time, duplicated, late, or lost."""
        roll = self.rng.random()
        if roll < 0.06:
            self.faults["nudge_lost"] += 1
            return
        if roll < 0.13:
            self.faults["nudge_duplicated"] += 1
            self._push(deadline_ms, kind, target, deadline_ms)
            self._push(deadline_ms + self.rng.randint(0, 3_000), kind, target, deadline_ms)
            return
        if roll < 0.20:
            self.faults["nudge_late"] += 1
            self._push(deadline_ms + self.rng.randint(5_000, 90_000), kind, target, deadline_ms)
            return
        # A real worker runs a nudge a little after its countdown (never before).
        self._push(deadline_ms + self.rng.randint(0, 400), kind, target, deadline_ms)

    def due(self, now_ms: int) -> list[Nudge]:
        out = []
        while self.queue and self.queue[0].due_ms <= now_ms:
            out.append(heapq.heappop(self.queue))
        return out


class FaultHooks:
    """One-shot faults armed by the driver right before an action, disarmed right after."""

    TARGETS = (
        ("casino.rounds.projections", "project"),
        ("casino.rounds.money", "post_legs"),
        ("casino.rounds.seeds", "receipt_store"),
        ("casino.rounds.services", "observers_in_transaction"),
    )

    def __init__(self) -> None:
        self.malfunction_at: str | None = None  # "module.function" that raises next
        self.commit_error = False
        self.fired: list[str] = []

    def disarm(self) -> None:
        self.malfunction_at = None
        self.commit_error = False

    def wrap(self, module: str, name: str, original: Callable[..., Any]) -> Callable[..., Any]:
        where = f"{module}.{name}"

        def hooked(*args: Any, **kwargs: Any) -> Any:
            if self.malfunction_at == where:
                self.malfunction_at = None
                self.fired.append(f"malfunction:{where}")
                raise SimulatedMalfunction(f"vopr: simulated malfunction in {where}")
            return original(*args, **kwargs)

        return hooked

    def wrap_execute(self, original: Callable[..., Any]) -> Callable[..., Any]:
        """The round service's transaction, whose COMMIT fails once when armed."""

        def hooked(*args: Any, **kwargs: Any) -> Any:
            if not self.commit_error:
                return original(*args, **kwargs)
            self.commit_error = False
            wrapper: Any = connections[DEFAULT_DB_ALIAS]  # this thread's, not the proxy
            real_commit = wrapper._commit

            def failing_commit() -> None:
                wrapper._commit = real_commit
                self.fired.append("commit_error")
                raise OperationalError("vopr: simulated failure at COMMIT")

            wrapper._commit = failing_commit
            try:
                return original(*args, **kwargs)
            finally:
                if wrapper.__dict__.get("_commit") is failing_commit:
                    wrapper._commit = real_commit
                if wrapper.__dict__.get("_commit") is real_commit:
                    del wrapper._commit  # back to the class's own method

        return hooked


class SeededIds:
    """uuid4-shaped ids from a seeded generator (round ids)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def uuid4(self) -> uuid.UUID:
        return uuid.UUID(int=self.rng.getrandbits(128), version=4)


class _Patcher:
    def __init__(self) -> None:
        self.saved: list[tuple[Any, str, Any]] = []

    def set(self, target: Any, name: str, value: Any) -> None:
        self.saved.append((target, name, getattr(target, name)))
        setattr(target, name, value)

    def restore(self) -> None:
        while self.saved:
            target, name, value = self.saved.pop()
            setattr(target, name, value)


@contextmanager
def installed(
    *, clock: Clock, timers: TimerQueue, faults: FaultHooks, heads_seed: str, ids_seed: str
) -> Iterator[None]:
    """Install every hook for one seed's run; restore the product's own on exit."""

    # the product's modules, patched only while a seed runs
    import fairness.chain
    import fairness.services
    from casino.rounds import publish, services, tasks
    from casino.tables import services as tables
    from fairness import beaconsource

    heads = random.Random(f"heads:{heads_seed}")
    client_seeds = random.Random(f"client-seeds:{heads_seed}")
    ids = SeededIds(random.Random(f"round-ids:{ids_seed}"))
    patch = _Patcher()
    try:
        patch.set(services, "now_ms", clock.now_ms)
        patch.set(services, "uuid", ids)
        patch.set(tasks, "time", clock)
        patch.set(beaconsource, "_now", clock.time)
        beaconsource.clear_caches()  # the signatures of another seed's (or no) beacon
        patch.set(tables, "time", clock)
        patch.set(fairness.chain, "new_head", lambda: f"{heads.getrandbits(256):064x}")
        patch.set(
            fairness.services,
            "client_seed_default",
            lambda: f"v{client_seeds.getrandbits(60):015x}",
        )
        patch.set(
            publish,
            "schedule_nudge",
            lambda round_id, deadline_ms: timers.schedule("round", round_id, deadline_ms),
        )
        patch.set(
            tables,
            "schedule_lobby",
            lambda *, table_id, deadline_ms: timers.schedule("lobby", str(table_id), deadline_ms),
        )
        for module_name, name in FaultHooks.TARGETS:
            module = importlib.import_module(module_name)
            patch.set(module, name, faults.wrap(module_name, name, getattr(module, name)))
        patch.set(services, "_execute", faults.wrap_execute(services._execute))
        yield
    finally:
        patch.restore()
        beaconsource.clear_caches()
