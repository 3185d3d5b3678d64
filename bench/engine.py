"""Engine throughput: rounds/s per core through the simulator (real decide + evolve), for every
rule set with the fast and the fair shoe, plus a cProfile breakdown of where the time goes.

Rounds/s per core is measured in one process on CPU time (`time.process_time`), which stays
meaningful on a shared, noisy machine; the wall-clock figure is reported next to it.
Targets (issue 3): 30,000 rounds/s per core with the fast shoe, 15,000 with the fair shoe.
"""

from __future__ import annotations

import cProfile
import os
import platform
import pstats
import sys
import time
from collections import defaultdict
from typing import Any

from casino.engine.simulator import SimulationConfig, run_chunk

TARGETS = {"fast": 30_000, "fair": 15_000}
RULESET = "atlantic_city"  # the profiled rule set
RULESETS = ("classic", "atlantic_city", "duel_classic", "duel")  # duel: 2 players


def _measure(shoe: str, rounds: int, ruleset: str = RULESET) -> dict[str, float]:
    config = SimulationConfig(ruleset, rounds, seed=1, shoe=shoe, chunk_rounds=rounds)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    run_chunk(config, 0)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    return {"cpu_rounds_per_s": rounds / cpu, "wall_rounds_per_s": rounds / wall}


def loop_ns(iterations: int = 2_000_000) -> float:
    """CPU ns per empty `for` iteration: how fast this Python is right now (about 10 ns on an
    idle modern core), to compare figures taken on different or busy machines."""
    started = time.process_time()
    for _ in range(iterations):
        pass
    return (time.process_time() - started) * 1e9 / iterations


def _profile(shoe: str, rounds: int, top: int = 8) -> dict[str, Any]:
    """Share of own time per module, and the heaviest functions."""
    config = SimulationConfig(RULESET, rounds, seed=2, shoe=shoe, chunk_rounds=rounds)
    profiler = cProfile.Profile()
    profiler.runcall(run_chunk, config, 0)
    stats = pstats.Stats(profiler)
    raw: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    by_module: dict[str, float] = defaultdict(float)
    functions: list[tuple[float, str]] = []
    total = 0.0
    for (filename, line, name), (_, _, tottime, _, _) in raw.items():
        module = _short(filename)
        by_module[module] += tottime
        functions.append((tottime, f"{module}:{line}({name})"))
        total += tottime
    modules = sorted(by_module.items(), key=lambda item: -item[1])[:top]
    functions.sort(reverse=True)
    return {
        "modules_pct": {m: round(100 * t / total, 1) for m, t in modules},
        "functions_pct": {f: round(100 * t / total, 1) for t, f in functions[:top]},
    }


def _short(filename: str) -> str:
    for marker in ("casino/engine/", "fairness/"):
        if marker in filename:
            module = filename.split(marker)[1].removesuffix(".py")
            return marker.replace("/", ".") + module
    return "builtins" if filename == "~" else os.path.basename(filename)


def run(quick: bool) -> dict[str, Any]:
    """Rounds/s per core for every rule set and both shoes, against the targets (the slowest
    rule set decides), with a profile of atlantic_city for each shoe."""
    rounds = 2_000 if quick else 20_000
    figures: dict[str, Any] = {
        "rounds_per_measure": rounds,
        "cpus": os.cpu_count(),
        "load_avg_1m": round(os.getloadavg()[0], 2),
        # the interpreter and its installation: builds of one version differ in speed (a
        # distribution's optimised build against one compiled without PGO and LTO)
        "python": f"{platform.python_version()} ({sys.base_prefix})",
        "python_loop_ns": round(loop_ns(), 1),
    }
    for shoe, target in TARGETS.items():
        slowest = None
        for ruleset in RULESETS:
            measured = _measure(shoe, rounds, ruleset)
            rate = measured["cpu_rounds_per_s"]
            figures[f"{ruleset}_{shoe}_rounds_per_s_per_core"] = round(rate)
            figures[f"{ruleset}_{shoe}_wall_rounds_per_s"] = round(measured["wall_rounds_per_s"])
            slowest = rate if slowest is None else min(slowest, rate)
        assert slowest is not None
        figures[f"{shoe}_rounds_per_s_per_core"] = round(slowest)  # the slowest rule set
        figures[f"{shoe}_target"] = target
        figures[f"{shoe}_meets_target"] = slowest >= target
        figures[f"{shoe}_profile"] = _profile(shoe, max(rounds // 4, 500))
    figures["python_loop_ns_after"] = round(loop_ns(), 1)
    return figures
