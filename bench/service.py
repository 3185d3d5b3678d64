"""Full rounds through the round service (`audit` over played rounds is `bench/audit.py`).

`python -m bench service [--quick]` (or `python bench/service.py`). With DATABASE_URL set to
PostgreSQL it uses a scratch database `<db>_servicebench`; otherwise a temporary SQLite file.
Each rule set is played by `manage.py play` (events, ledger, projections, receipt, fair shoe)
in a fresh process; the figures are rounds/s, SQL queries per round and per command
(with what the command's on-commit work adds, e.g. the dashboard's stats), where the time goes
(cProfile on a separate, untimed batch, grouped by package).
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
RULESETS = (("classic", 1), ("atlantic_city", 1), ("duel_classic", 3), ("duel", 3))

# Runs inside a fresh interpreter with DATABASE_URL pointing at the scratch database.
WORKER = r"""
import cProfile, json, os, pstats, sys, time
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "casino.settings")
import django
django.setup()
from django.db import connection
from django.test.utils import CaptureQueriesContext
from casino.tables.play import play

ruleset, players, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
play(ruleset=ruleset, rounds=2, players=players)  # warm-up: chain creation, caches
report = play(ruleset=ruleset, rounds=rounds, players=players)  # timed, nothing attached
from collections import deque
from casino.rounds import services
per_command = {}
connection.queries_log = deque()  # unbounded: Django keeps only the last 9,000 otherwise

def counting(name, real):
    def wrapped(**kwargs):
        before = len(connection.queries_log)
        result = real(**kwargs)
        kind = name if name == "open" else type(kwargs["command"]).__name__
        if result.state.finished and name != "open":
            kind += " (settles)"
        per_command.setdefault(kind, []).append(len(connection.queries_log) - before)
        return result
    return wrapped

real_open, real_command = services.round_open, services.round_command
services.round_open = counting("open", real_open)
services.round_command = counting("command", real_command)
with CaptureQueriesContext(connection) as queries:
    counted = play(ruleset=ruleset, rounds=max(rounds // 4, 2), players=players)
services.round_open, services.round_command = real_open, real_command
profile = cProfile.Profile()
profile.enable()
play(ruleset=ruleset, rounds=max(rounds // 4, 2), players=players)
profile.disable()
groups = {}
for (filename, _, _), (_, _, tottime, _, _) in pstats.Stats(profile).stats.items():
    for name in ("casino/engine", "casino/eventstore", "casino", "fairness", "ledger", "django",
                 "psycopg", "sqlite3", "json", "hashlib", "cryptography"):
        if f"/{name}/" in filename or filename.endswith(f"{name}.py") or name in filename:
            groups[name] = groups.get(name, 0.0) + tottime
            break
    else:
        groups["other"] = groups.get("other", 0.0) + tottime
total = sum(groups.values()) or 1.0
print(json.dumps({
    "rounds": report.rounds,
    "rounds_per_s": report.rounds / report.seconds,
    "queries_per_round": len(queries.captured_queries) / counted.rounds,
    "queries_per_command": {
        k: round(sum(v) / len(v), 1) for k, v in sorted(per_command.items())
    },
    "time_share": {k: round(v / total, 3) for k, v in sorted(groups.items(), key=lambda g: -g[1])},
}))
"""


def run(quick: bool) -> dict[str, Any]:
    env, database = migrated_scratch("servicebench")
    python = sys.executable
    rounds = 20 if quick else 200
    figures: dict[str, Any] = {
        "conditions": f"{os.cpu_count()} cores, {database}, 1 process, fair shoe, "
        f"{rounds} rounds per rule set after 2 warm-up rounds"
    }
    for ruleset, players in RULESETS:
        out = subprocess.run(
            [python, "-c", WORKER, ruleset, str(players), str(rounds)],
            cwd=ROOT,
            env=env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        result = json.loads(out.strip().splitlines()[-1])
        figures[f"{ruleset}_rounds_per_s"] = round(result["rounds_per_s"], 1)
        figures[f"{ruleset}_queries_per_round"] = round(result["queries_per_round"], 1)
        figures[f"{ruleset}_queries_per_command"] = result["queries_per_command"]
        figures[f"{ruleset}_time_share"] = result["time_share"]
    return figures


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    for key, value in run(quick="--quick" in sys.argv).items():
        print(f"{key:<32} {value}")
