"""Shared tables on the local beacon: the wait from lock to deal, and the verifier on beacon
rounds next to rounds without one.

`python -m bench beacon [--quick]`. A scratch database (PostgreSQL with DATABASE_URL, else a
temporary SQLite file); one process plays 2-seat duel rounds through the round service while
the in-process timer (`casino.tables.timers.tick`, every TICK_S) records each round's beacon
round once the local beacon publishes it, as the embedded default serves them. Each round
opens at a random point of the beacon's 3 s period (so the locks fall anywhere in it) and
both seats stand once the cards come.

- Lock to deal: BeaconRecorded.recorded_at_ms - BettingClosed.closed_at_ms per round; p50,
  p99 and max. The round waits for the first beacon round after lock + BEACON_MARGIN_S, so
  the wait lies between the margin and margin + period, plus up to one timer tick.
- The verifier (proof of play, signatures, the checks across rounds, and for beacon rounds
  the BLS check of the beacon round): rounds per CPU second on duel rounds of 2 to 4 seats on
  one seed chain, with the beacon (`fairness.sample.beacon_round_line`, the demo local
  beacon) and without (`fairness.sample.sample_bundle`), best of three passes
  (`bench.fairness._verifier`, as `python -m bench fairness` measures the verifier).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench._scratch import migrated_scratch

ROOT = Path(__file__).resolve().parent.parent

WORKER = r"""
import json, os, random, statistics, sys, threading, time
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "casino.settings")
import django
django.setup()
from django.conf import settings
from django.test.utils import override_settings

from casino.engine.commands import Stand
from casino.eventstore.models import StoredEvent
from casino.rounds import services
from casino.rounds.stream import round_load
from casino.tables import timers
from casino.tables.play import bot_players, top_up
from casino.tables.services import demo_table

rounds = int(sys.argv[1])
players = bot_players(2)
table = demo_table("duel")
stop = threading.Event()

def timer():
    while not stop.is_set():
        timers.tick()
        time.sleep(timers.TICK_S)

def play_one(rng):
    for user in players:
        top_up(user, 20 * table.stake)
    result = services.round_open(table=table, players=players)
    round_id = result.round.id
    while result.state.phase == "beacon":
        time.sleep(0.02)
        _, state = round_load(round_id=round_id)
        result = services.RoundResult(result.round, state, [])
    for user in players:
        if not result.state.finished:
            try:
                result = services.round_command(round_id=round_id, command=Stand(str(user.pk)))
            except Exception:  # the hand stood itself (21)
                pass
    return round_id

def field(round_id, type_, name):
    return StoredEvent.objects.get(stream_id=round_id, type=type_).data[name]

rng = random.Random(7)
thread = threading.Thread(target=timer, daemon=True)
thread.start()
spec_margin, period = settings.BEACON_MARGIN_S, 3
waits, beacon_ids = [], []
try:
    with override_settings(BEACON="local"):
        play_one(rng)  # warm-up: the chain, the caches, the local beacon's key
        for _ in range(rounds):
            time.sleep(rng.uniform(0, period))
            round_id = play_one(rng)
            beacon_ids.append(round_id)
            locked = field(round_id, "BettingClosed", "closed_at_ms")
            dealt = field(round_id, "BeaconRecorded", "recorded_at_ms")
            waits.append(dealt - locked)
finally:
    stop.set()
    thread.join()
waits.sort()
p99 = waits[min(len(waits) - 1, round(0.99 * (len(waits) - 1)))]
print(json.dumps({
    "rounds": rounds,
    "margin_s": spec_margin,
    "period_s": period,
    "timer_tick_s": timers.TICK_S,
    "bound_ms": (spec_margin + period) * 1000 + int(timers.TICK_S * 1000),
    "lock_to_deal_min_ms": waits[0],
    "lock_to_deal_p50_ms": round(statistics.median(waits)),
    "lock_to_deal_p99_ms": p99,
    "lock_to_deal_max_ms": waits[-1],
}))
"""


def _verifier(rounds: int) -> dict[str, Any]:
    # The bench's own helpers, imported when measured (bench.fairness loads the verifier).
    from bench.fairness import _verifier as rate
    from fairness.canonical import canonical_json
    from fairness.receipt import private_key_from_hex
    from fairness.sample import _beacon_chain, beacon_round_line, sample_bundle

    key = private_key_from_hex(hashlib.sha256(b"bench key").hexdigest())
    chain = _beacon_chain()
    beacon = [canonical_json(beacon_round_line("duel", seed=k)).decode() for k in range(rounds)]
    plain = [
        canonical_json(
            sample_bundle(
                round_id=f"plain-{k}",
                server_seed=chain.seed(k + 1),
                client_seeds=[f"seat{i + 1}-{k}" for i in range(2 + k % 3)],
                nonce=k + 1,
                private_key=key,
                ruleset="duel",
            )
        ).decode()
        for k in range(rounds)
    ]
    with_beacon, without = rate(beacon, replay=True), rate(plain, replay=True)
    return {
        "verifier_rounds": rounds,
        "verifier_beacon_rounds_per_cpu_s": with_beacon["cpu"],
        "verifier_plain_rounds_per_cpu_s": without["cpu"],
    }


def run(quick: bool) -> dict[str, Any]:
    env, database = migrated_scratch("beaconbench")
    env = {**env, "BEACON": "local"}
    rounds = 8 if quick else 40
    out = subprocess.run(
        [sys.executable, "-c", WORKER, str(rounds)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    if out.returncode != 0:
        raise RuntimeError(f"the beacon bench's worker failed:\n{out.stderr[-3000:]}")
    figures: dict[str, Any] = {
        "conditions": f"{os.cpu_count()} cores, {database}, 1 process, in-process timer, "
        f"local beacon, 2-seat duel rounds"
    }
    figures.update(json.loads(out.stdout.strip().splitlines()[-1]))
    figures.update(_verifier(100 if quick else 400))
    return figures
