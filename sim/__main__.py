"""`python -m sim --seed S [--steps N]`, `python -m sim --seeds A..B`, `python -m sim --minutes M`.

Runs on a scratch database (see `sim.scratch`): a temporary SQLite file, or with
DATABASE_URL set to PostgreSQL a scratch database `<name>_sim` recreated for the run.
With --minutes, seeds run one after another (from --seed, default 1) until the time is up.
Exit status 1 when a seed fails; each failure names the seed and the step, and
`python -m sim --seed S --steps N` replays it.
"""

from __future__ import annotations

import argparse
import itertools
import json
import logging
import sys
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from sim.scratch import scratch_database


def parse_seeds(text: str) -> list[int]:
    """`7` or `3..9` (inclusive)."""
    if ".." in text:
        first, last = (int(part) for part in text.split("..", 1))
        if last < first:
            raise argparse.ArgumentTypeError(f"empty range {text}")
        return list(range(first, last + 1))
    return [int(text)]


def fresh_database() -> None:
    """Empty every table between seeds: each seed runs as `--seed S` alone would."""
    # after django.setup(): these load the product
    from django.core.management import call_command

    call_command("flush", verbosity=0, interactive=False)  # the cache is left alone


def run_seeds(
    seeds: Iterable[int],
    *,
    steps: int,
    minutes: float | None = None,
    trace: bool = False,
    out: Any = None,
    as_json: bool = False,
) -> dict[str, Any]:
    """Run seeds in order (until `minutes` pass, if given); a summary of all of them."""
    # after django.setup(): these load the product
    from sim.driver import SimFailure, run_seed

    started = time.monotonic()
    summary: dict[str, Any] = {
        "seeds": 0,
        "steps": 0,
        "rounds": 0,
        "http_requests": 0,
        "ws_messages": 0,
        "faults": Counter(),
        "anomalies": Counter(),
        "failures": [],
    }
    for seed in seeds:
        if minutes is not None and summary["seeds"] and time.monotonic() - started > minutes * 60:
            break
        if summary["seeds"]:
            fresh_database()
        summary["seeds"] += 1
        try:
            report = run_seed(seed, steps, trace=trace)
        except SimFailure as failure:
            summary["steps"] += failure.step
            summary["failures"].append(
                {"seed": seed, "step": failure.step, "problems": failure.problems[:5]}
            )
            if out is not None:
                if trace:
                    print("\n".join(failure.trace), file=out, flush=True)
                print(str(failure), file=out, flush=True)
            continue
        summary["steps"] += report.steps
        summary["rounds"] += report.rounds
        summary["http_requests"] += report.http_requests
        summary["ws_messages"] += report.ws_messages
        summary["faults"].update(report.faults)
        summary["anomalies"].update(report.anomalies)
        if out is None:
            continue
        if as_json:
            line = {
                "seed": seed,
                "steps": report.steps,
                "rounds": report.rounds,
                "rulesets": dict(sorted(report.rulesets.items())),
                "http": report.http_requests,
                "ws_messages": report.ws_messages,
                "faults": dict(sorted(report.faults.items())),
                "anomalies": dict(sorted(report.anomalies.items())),
                "cpu_s": report.cpu_s,
            }
            print(json.dumps(line), file=out, flush=True)
        else:
            faults = ", ".join(f"{k} {v}" for k, v in sorted(report.faults.items()))
            print(
                f"seed {seed}: ok, {report.rounds} rounds "
                f"({', '.join(f'{k} {v}' for k, v in sorted(report.rulesets.items()))}), "
                f"{report.http_requests} HTTP, {report.ws_messages} WS messages, "
                f"faults: {faults or 'none'}"
                + "".join(f", {k} {v}" for k, v in sorted(report.anomalies.items()))
                + f" [{report.cpu_s:.1f} CPU s]",
                file=out,
                flush=True,
            )
    summary["faults"] = dict(sorted(summary["faults"].items()))
    summary["anomalies"] = dict(sorted(summary["anomalies"].items()))
    summary["seconds"] = round(time.monotonic() - started, 1)
    return summary


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sim", description=__doc__)
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--seed", type=int, help="one seed (with --minutes: the first seed)")
    group.add_argument("--seeds", type=parse_seeds, help="a range A..B (inclusive)")
    parser.add_argument("--steps", type=int, default=None, help="steps per seed (default 300)")
    parser.add_argument("--minutes", type=float, default=None, help="run seeds until M minutes")
    parser.add_argument("--trace", action="store_true", help="print every step of a failed seed")
    parser.add_argument("--json", action="store_true", help="one JSON line per seed")
    parser.add_argument("--log", action="store_true", help="keep the product's log output")
    args = parser.parse_args(argv)
    if args.minutes is None and args.seed is None and args.seeds is None:
        parser.error("give --seed, --seeds or --minutes")
    seeds: Iterable[int]
    if args.minutes is not None:
        seeds = args.seeds or itertools.count(args.seed if args.seed is not None else 1)
    else:
        seeds = [args.seed] if args.seed is not None else args.seeds

    if not args.log:  # injected faults log tracebacks by design; the verdict is what counts
        logging.disable(logging.CRITICAL)
    description = scratch_database()
    # after django.setup(): these load the product
    from sim.driver import DEFAULT_STEPS

    steps = args.steps or DEFAULT_STEPS
    budget = f" for {args.minutes} minute(s)" if args.minutes is not None else ""
    print(f"vopr: {steps} steps per seed{budget}, on {description}", flush=True)
    summary = run_seeds(
        seeds,
        steps=steps,
        minutes=args.minutes,
        trace=args.trace,
        out=sys.stdout,
        as_json=args.json,
    )
    print(json.dumps({"summary": summary}) if args.json else _summary_text(summary), flush=True)
    return 1 if summary["failures"] else 0


def _summary_text(summary: dict[str, Any]) -> str:
    faults = ", ".join(f"{k} {v}" for k, v in summary["faults"].items()) or "none"
    lines = [
        f"{summary['seeds']} seed(s), {summary['steps']} steps, {summary['rounds']} rounds, "
        f"{summary['http_requests']} HTTP requests, {summary['ws_messages']} WS messages in "
        f"{summary['seconds']} s",
        f"faults injected: {faults}",
        "recovered by a resume: "
        + (", ".join(f"{k} {v}" for k, v in summary["anomalies"].items()) or "nothing"),
    ]
    if summary["failures"]:
        seeds = " ".join(str(f["seed"]) for f in summary["failures"])
        lines.append(f"FAILED seeds: {seeds}")
    else:
        lines.append("every invariant held")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
