"""Run one or more benchmarks: ``python -m bench engine fairness ... [--quick] [--json]``.

Each benchmark is a module ``bench/<name>.py`` with ``run(quick: bool) -> dict``; the runner
imports it, runs it and prints its figures (one JSON line per benchmark with ``--json``).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import pkgutil
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast

import bench


def available() -> list[str]:
    """Names of the benchmark modules in this package."""
    return sorted(
        info.name
        for info in pkgutil.iter_modules([str(Path(bench.__file__).parent)])
        if not info.name.startswith("_")
    )


def run_one(name: str, *, quick: bool) -> dict[str, Any]:
    """Import ``bench.<name>`` and return what its ``run(quick)`` reports."""
    module = importlib.import_module(f"bench.{name}")
    run = cast(Callable[[bool], dict[str, Any]], module.run)
    started = time.perf_counter()
    figures = run(quick)
    figures.setdefault("bench", name)
    figures.setdefault("elapsed_s", round(time.perf_counter() - started, 3))
    return figures


def _print_readable(figures: dict[str, Any]) -> None:
    print(f"== {figures['bench']}")
    width = max(len(key) for key in figures)
    for key, value in figures.items():
        if key != "bench":
            print(f"  {key:<{width}}  {value}")


def main(argv: Sequence[str] | None = None) -> int:
    """Parse arguments, run the named benchmarks in order, print their figures.

    `all` runs every benchmark. With --json the output is one JSON object mapping each
    figure's name (`<bench>.<figure>`) to its value. `--minutes M` is the soak's budget
    (`python -m bench soak --minutes M`); in `all --quick` the soak runs one short seed.
    """
    names = available()
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument(
        "names", nargs="+", metavar="name", help=f"all, or any of: {', '.join(names)}"
    )
    parser.add_argument("--quick", action="store_true", help="a short run (smoke test)")
    parser.add_argument("--json", action="store_true", help="one JSON object of every figure")
    parser.add_argument(
        "--minutes",
        type=float,
        default=None,
        help="soak: run simulation seeds for this many minutes (default 2; 1 short seed with "
        "--quick)",
    )
    args = parser.parse_args(argv)
    if args.minutes is not None:
        # only --minutes needs the soak module
        from bench import soak

        soak.configure(minutes=args.minutes)
    # Benchmarks that touch Django find the project's settings without extra setup.
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "casino.settings")
    chosen = names if "all" in args.names else args.names
    unknown = [name for name in chosen if name not in names]
    if unknown:
        parser.error(f"unknown benchmark(s): {', '.join(unknown)} (have: {', '.join(names)})")
    collected: dict[str, Any] = {}
    failed = 0
    json_out = sys.stdout
    if args.json:  # stdout carries the one JSON object only: what benches print goes to stderr
        sys.stdout = sys.stderr
    try:
        for name in chosen:
            try:
                figures = run_one(name, quick=args.quick)
            except Exception as exc:  # one broken bench must not hide the others' figures
                failed += 1
                figures = {"bench": name, "error": f"{type(exc).__name__}: {exc}"}
            else:
                if figures.get("failed_seeds"):  # the soak found a seed that breaks an invariant
                    failed += 1
            if args.json:
                collected.update({f"{name}.{key}": value for key, value in figures.items()})
            else:
                _print_readable(figures)
    finally:
        sys.stdout = json_out
    if args.json:
        print(json.dumps(collected, sort_keys=True), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
