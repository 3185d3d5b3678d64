"""The seeded simulation as a soak: `python -m bench soak [--minutes M] [--quick]`.

Runs `python -m sim --minutes M` (seeds 1, 2, 3, ... until M minutes pass) in a fresh
process on its own scratch database (SQLite, or `<db>_sim` with DATABASE_URL), and reports
seeds run, steps, faults injected by kind, rounds, and every failure with the seed that
reproduces it (`python -m sim --seed S --steps N`). `--quick` (and `all --quick`) runs one
short seed; the default is 2 minutes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_MINUTES = 2.0
QUICK_STEPS = 80
STEPS = 300

_minutes: float | None = None


def configure(*, minutes: float | None) -> None:
    """`python -m bench soak --minutes M` sets the time budget here."""
    global _minutes
    _minutes = minutes


def run(quick: bool) -> dict[str, Any]:
    if quick and _minutes is None:
        command = ["--seed", "1", "--steps", str(QUICK_STEPS)]
        budget = f"one seed of {QUICK_STEPS} steps"
    else:
        minutes = _minutes if _minutes is not None else DEFAULT_MINUTES
        command = ["--minutes", str(minutes), "--steps", str(STEPS)]
        budget = f"{minutes} minute(s), {STEPS} steps per seed"
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "casino.settings"}
    done = subprocess.run(
        [sys.executable, "-m", "sim", *command, "--json"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith('{"summary"')]
    if not lines:
        raise RuntimeError(f"python -m sim printed no summary: {done.stderr[-2000:]}")
    summary = json.loads(lines[-1])["summary"]
    database = "PostgreSQL" if env.get("DATABASE_URL", "").startswith("postgres") else "SQLite"
    figures: dict[str, Any] = {
        "conditions": f"{os.cpu_count()} cores, {database}"
        f"{' + Redis' if env.get('REDIS_URL') else ''}, 1 process, {budget}",
        "seeds": summary["seeds"],
        "steps": summary["steps"],
        "rounds": summary["rounds"],
        "http_requests": summary["http_requests"],
        "ws_messages": summary["ws_messages"],
        "faults": summary["faults"],
        "faults_total": sum(summary["faults"].values()),
        "recovered_by_resume": summary.get("anomalies", {}),
        "failures": len(summary["failures"]),
        "failed_seeds": [
            f"python -m sim --seed {f['seed']} --steps {STEPS if not quick else QUICK_STEPS}"
            f" (step {f['step']}: {f['problems'][0] if f['problems'] else '?'})"
            for f in summary["failures"]
        ],
        "seconds": summary["seconds"],
    }
    return figures  # the runner fails the run when failed_seeds is not empty


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    for key, value in run(quick="--quick" in sys.argv).items():
        print(f"{key:<16} {value}")
