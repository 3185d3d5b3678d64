"""Instruction budgets: `python -m bench._budgets [--update]` (`make bench-check`).

Regressions are caught, not re-measured by hand. Every figure here is a count of instructions
under `valgrind --tool=callgrind`, which repeats exactly run after run on the same code (unlike
rates, which move with the machine's load), so a budget can sit just above it:

- `engine.<ruleset>_instructions_per_round`: rounds played through the simulator
  (`casino.engine.simulator.run_chunk`, real decide + evolve, basic strategy) with the fast
  shoe, driven by `bench.engine`'s own measurement, for each of `bench.engine.RULESETS`;
- `fairness.verifier_3p_replay_instructions_per_round`: 3-player rounds verified with the
  proof of play (each round decided anew from its players' choices) and the checks across
  rounds, driven by `bench.fairness`'s own verifier pass;
- `apicost.game_instructions_per_request` and `apicost.anchor_instructions_per_request`: the
  served process's instructions per game request and per bare-transaction request
  (`bench apicost --quick`, which needs DATABASE_URL on PostgreSQL and REDIS_URL).

The engine and verifier figures come from one Python process under callgrind (PYTHONHASHSEED
fixed, fixed seeds, a warm-up first): a call of `os.getppid()` marks the start and the end of
each measured part, and `--dump-before=getppid` makes callgrind dump (and zero) its counters
there, so a part's dump holds that part's instructions only, without start-up and imports.

Budgets live in `bench/budgets.json`, each the figure measured when it was set plus 5 %
(rounded up to 4 significant digits). The check prints each figure, its budget and the
margin, and exits 1 naming every figure over its budget, and also when a figure could not be
measured (valgrind, PostgreSQL or Redis missing: said plainly, never skipped). `--update`
rewrites the budgets at today's figures plus 5 % and prints old -> new; run it when a change
is meant to cost more (or has made things cheaper) and commit the file with the change.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from bench import apicost

ROOT = Path(__file__).resolve().parent.parent
BUDGETS = Path(__file__).resolve().with_name("budgets.json")
HEADROOM = 0.05  # a budget is the figure plus this share
DIGITS = 4  # significant digits a budget is rounded up to
ENGINE_ROUNDS = 300  # measured rounds per rule set (after a warm-up of WARM_UP_ROUNDS)
VERIFY_ROUNDS = 40  # measured verified rounds
WARM_UP_ROUNDS = 5
MARKER = "getppid"  # the C function whose calls cut the workload's dumps (os.getppid())
APICOST = {  # our figure -> bench apicost's (millions of instructions)
    "apicost.game_instructions_per_request": "game_instructions_per_request_m",
    "apicost.anchor_instructions_per_request": "anchor_instructions_per_request_m",
}

Figures = dict[str, float]


# ---- budgets: pure, tested without valgrind ----


def budget_for(measured: float) -> int:
    """The budget for a figure: measured plus HEADROOM, rounded up to DIGITS significant
    digits (so the file reads well and a figure exactly at today's count has its 5 %)."""
    raw = Decimal(str(measured)) * (1 + Decimal(str(HEADROOM)))  # exact: 1000 -> 1050
    if raw <= 0:
        return 0
    step = 10 ** max(0, raw.adjusted() + 1 - DIGITS)
    return int(math.ceil(raw / step) * step)


@dataclass(frozen=True)
class Row:
    """One figure against its budget (either may be missing)."""

    name: str
    measured: float | None
    budget: float | None

    @property
    def margin(self) -> float | None:
        """Share of the budget left (negative: over budget)."""
        if self.measured is None or not self.budget:
            return None
        return (self.budget - self.measured) / self.budget

    @property
    def over(self) -> bool:
        return self.measured is not None and self.budget is not None and self.measured > self.budget

    def line(self, width: int) -> str:
        measured = "not measured" if self.measured is None else f"{self.measured:,.0f}"
        budget = "no budget" if self.budget is None else f"{self.budget:,.0f}"
        margin = self.margin
        if margin is None:
            note = ""
        elif self.over:
            note = f"OVER by {-margin:.1%}"
        else:
            note = f"{margin:.1%} under"
        return f"  {self.name:<{width}}  {measured:>14}  {budget:>14}  {note}"


def compare(measured: Mapping[str, float], budgets: Mapping[str, float]) -> list[Row]:
    """Every figure measured or budgeted, in name order."""
    return [
        Row(name, measured.get(name), budgets.get(name))
        for name in sorted(set(measured) | set(budgets))
    ]


def failures(rows: Sequence[Row]) -> list[str]:
    """What fails the check, one sentence per figure: over budget, unmeasured, unbudgeted."""
    out = []
    for row in rows:
        if row.over:
            assert row.measured is not None and row.budget is not None
            out.append(f"{row.name} is over its budget: {row.measured:,.0f} > {row.budget:,.0f}")
        elif row.measured is None:
            out.append(f"{row.name} was not measured")
        elif row.budget is None:
            out.append(f"{row.name} has no budget (set one with --update)")
    return out


def updated(measured: Mapping[str, float], budgets: Mapping[str, float]) -> dict[str, int]:
    """The new budgets: each measured figure's budget_for; an unmeasured one keeps its old."""
    new = {name: int(value) for name, value in budgets.items()}
    new.update({name: budget_for(value) for name, value in measured.items()})
    return dict(sorted(new.items()))


def load(path: Path) -> dict[str, float]:
    if not path.exists():
        return {}
    data = json.loads(path.read_text())
    budgets: dict[str, float] = data["budgets"]
    return budgets


def save(path: Path, budgets: Mapping[str, int]) -> None:
    data = {
        "about": "Instruction budgets checked by `make bench-check` (bench/_budgets.py): each is "
        f"the figure when set plus {HEADROOM:.0%}. Refresh with "
        "`.venv/bin/python -m bench._budgets --update`.",
        "budgets": dict(sorted(budgets.items())),
    }
    path.write_text(json.dumps(data, indent=2) + "\n")


# ---- measuring ----


def _workload_parts() -> list[tuple[str, int, Callable[[], object]]]:
    """(figure, units, the measured call) for every in-process figure, each preceded by its
    warm-up; built from the benches' own workloads."""
    # only the process measured under callgrind loads the workloads
    from bench import engine, fairness
    from fairness.canonical import canonical_json
    from fairness.chain import create_chain
    from fairness.receipt import private_key_from_hex
    from fairness.sample import sample_bundle

    parts: list[tuple[str, int, Callable[[], object]]] = []
    for ruleset in engine.RULESETS:
        engine._measure("fast", WARM_UP_ROUNDS, ruleset)

        def play(ruleset: str = ruleset) -> object:
            return engine._measure("fast", ENGINE_ROUNDS, ruleset)

        parts.append((f"engine.{ruleset}_instructions_per_round", ENGINE_ROUNDS, play))
    # bench.fairness's 3-player bundle lines, on a fixed chain head (create_chain draws one).
    key = private_key_from_hex(hashlib.sha256(b"bench key").hexdigest())
    count = WARM_UP_ROUNDS + VERIFY_ROUNDS
    chain = create_chain(count, head=fairness.SEED)
    lines = [
        canonical_json(
            sample_bundle(
                round_id=f"r{k}",
                server_seed=chain.seed(k),
                client_seeds=["alice", "bob", "carol"],
                nonce=k,
                private_key=key,
            )
        ).decode()
        for k in range(1, count + 1)
    ]
    fairness._verifier(lines[:WARM_UP_ROUNDS], replay=True, repeat=1)
    parts.append(
        (
            "fairness.verifier_3p_replay_instructions_per_round",
            VERIFY_ROUNDS,
            lambda: fairness._verifier(lines[WARM_UP_ROUNDS:], replay=True, repeat=1),
        )
    )
    return parts


def _workload() -> None:
    """Run under callgrind: each measured part between two os.getppid() calls. Prints the
    (figure, units) list, in order, as one JSON line."""
    # Warm-ups happen while the parts are built, in the part before the first marker; the
    # parts then run back to back so that dump 2k holds part k (k = 1, 2, ...).
    parts = _workload_parts()
    done = []
    for name, units, call in parts:
        os.getppid()
        call()
        os.getppid()
        done.append((name, units))
    print(json.dumps(done))


def _dumps(out: Path) -> dict[int, int]:
    """{part number: instructions} of callgrind's dumps `<out>.<n>` (and `<out>`, the last)."""
    found: dict[int, int] = {}
    for path in out.parent.glob(f"{out.name}*"):
        part = total = None
        for line in path.read_text().splitlines():
            if line.startswith("part:"):
                part = int(line.split()[1])
            elif line.startswith("summary:"):
                total = int(line.split()[1])
        if part is not None and total is not None:
            found[part] = total
    return found


def measure_in_process() -> Figures:
    """The engine and verifier figures: one Python process under callgrind."""
    with tempfile.TemporaryDirectory(prefix="budgets-") as folder:
        out = Path(folder) / "callgrind.out"
        command = [
            "valgrind",
            "--tool=callgrind",
            f"--dump-before={MARKER}",
            f"--callgrind-out-file={out}",
            sys.executable,
            "-m",
            "bench._budgets",
            "--workload",
        ]
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"the callgrind workload failed: {done.stderr.strip()[-2000:]}")
        parts: list[tuple[str, int]] = json.loads(done.stdout.strip().splitlines()[-1])
        dumps = _dumps(out)
    if len(dumps) != 2 * len(parts) + 1:  # something else called getppid(): the cuts are off
        raise RuntimeError(
            f"expected {2 * len(parts) + 1} callgrind dumps, found {len(dumps)} "
            f"(is {MARKER}() called by the workload itself?)"
        )
    return {name: round(dumps[2 * k + 2] / units) for k, (name, units) in enumerate(parts)}


def measure_apicost() -> Figures:
    """`bench apicost --quick`'s two per-request figures, in instructions."""
    figures = apicost.run(True)
    if "skipped" in figures:
        raise RuntimeError(f"bench apicost skipped: {figures['skipped']}")
    return {ours: round(figures[theirs] * 1e6) for ours, theirs in APICOST.items()}


def missing() -> dict[str, list[str]]:
    """{what is missing: the figures it stops} for valgrind, PostgreSQL and Redis."""
    gaps: dict[str, list[str]] = {}
    if not (shutil.which("valgrind") and shutil.which("callgrind_control")):
        gaps["valgrind (with callgrind_control)"] = ["engine.*", "fairness.*", "apicost.*"]
    if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        gaps["DATABASE_URL on PostgreSQL"] = ["apicost.*"]
    if not os.environ.get("REDIS_URL"):
        gaps["REDIS_URL"] = ["apicost.*"]
    return gaps


def measure() -> tuple[Figures, list[str]]:
    """(every figure that could be measured, one sentence per problem)."""
    figures: Figures = {}
    gaps = missing()
    problems = [f"needs {need}: {', '.join(stops)} not measured" for need, stops in gaps.items()]
    stages: list[tuple[str, Callable[[], Figures]]] = []
    if not any("engine.*" in stops for stops in gaps.values()):
        stages.append(("engine and verifier under callgrind", measure_in_process))
    if not any("apicost.*" in stops for stops in gaps.values()):
        stages.append(("bench apicost --quick", measure_apicost))
    for label, stage in stages:
        print(f"measuring: {label} ...", file=sys.stderr, flush=True)
        try:
            figures.update(stage())
        except Exception as exc:  # one broken stage must not hide the other's figures
            problems.append(f"{label} failed: {type(exc).__name__}: {exc}")
    return figures, problems


def report(rows: Sequence[Row]) -> None:
    width = max((len(row.name) for row in rows), default=10)
    print(f"  {'figure':<{width}}  {'measured':>14}  {'budget':>14}  margin")
    for row in rows:
        print(row.line(width))


def main(
    argv: Sequence[str] | None = None,
    measure: Callable[[], tuple[Figures, list[str]]] = measure,
) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench._budgets", description=__doc__)
    parser.add_argument(
        "--update", action="store_true", help="rewrite the budgets at the figures measured + 5%%"
    )
    parser.add_argument("--budgets", type=Path, default=BUDGETS, help=argparse.SUPPRESS)
    parser.add_argument("--workload", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.workload:
        _workload()
        return 0
    budgets = load(args.budgets)
    figures, problems = measure()
    rows = compare(figures, budgets)
    report(rows)
    if args.update:
        new = updated(figures, budgets)
        for name, value in new.items():
            old = budgets.get(name)
            if old != value:
                print(f"budget {name}: {'none' if old is None else f'{old:,.0f}'} -> {value:,}")
        save(args.budgets, new)
        print(f"wrote {args.budgets}")
        failed = problems
    else:
        failed = problems + failures(rows)
    for sentence in failed:
        print(f"FAIL: {sentence}")
    if not failed:
        print("bench-check: every figure within its budget")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
