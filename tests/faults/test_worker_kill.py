"""Kill the Celery worker (SIGKILL) while a duel waits on its 30 s decision timer.

Processes: our own redis-server (broker), Celery beat, and a worker on the PostgreSQL test
database; the round is opened by a separate `manage.py shell` process on the same settings,
so its after-commit timer nudge goes to that broker like the server's would.

Controllable clock: `services.round_open` takes `at_ms`. The duel is opened 25 s in the past,
so its 30 s decision timer ends about 5 s after the test starts waiting instead of 30 s.

Why the round completes after the restart (checked below, not assumed):
- the nudge (`casino.round_nudge`, countdown = the timer) was received by the killed worker
  and held unacknowledged until its ETA. Celery acks it late (`task_acks_late`), so it is not
  lost, but the Redis transport redelivers an unacknowledged message only after its
  visibility timeout (1 h): it sits in the broker's `unacked` hash throughout this test;
- beat keeps sending `casino.sweep_deadlines` every 5 s while the worker is dead; the new
  worker runs those sweeps, the first finds the round past its deadline and applies the
  `Timeout` through the round service (the duel hand stands, the round settles). The other
  sweeps find nothing due, and the late nudge, whenever it comes back, is refused (a timer is
  data, a nudge only applies it), so the timeout fires once.
So the product needs beat running (docker-compose runs it; README says so).
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from typing import Any

import redis
from celery import Celery

from casino.engine.decider import evolve
from casino.engine.events import event_from_dict
from casino.engine.evolve import OPEN
from casino.eventstore.models import StoredEvent
from casino.models import Round, RoundStatus
from casino.tables.services import table_create
from tests.api.conftest import make_player
from tests.e2e.conftest import ROOT
from tests.faults.conftest import REAL_SERVICES, Services, assert_consistent, wait_until

pytestmark = REAL_SERVICES

DECISION_MS = 30_000
LEFT_MS = 5_000  # the timer ends this long after the round is opened

OPEN_DUEL = """
import time
from django.contrib.auth import get_user_model
from casino.rounds import services
from casino.models import Table
users = get_user_model().objects.in_bulk([{a}, {b}])
result = services.round_open(
    table=Table.objects.get(pk={table}),
    players=[users[{a}], users[{b}]],
    at_ms=int(time.time() * 1000) - {ago},
)
print(result.round.id, result.state.phase, result.state.deadline_ms)
"""


def open_duel_elsewhere(services: Services, table: int, a: Any, b: Any) -> tuple[str, int]:
    """Open a duel whose timer is running. The fair shoe is random here: a duel the deal
    already ended (both players dealt 21, about 1 in 450) has no timer, so open another."""
    code = OPEN_DUEL.format(table=table, a=a.pk, b=b.pk, ago=DECISION_MS - LEFT_MS)
    for _ in range(5):
        done = subprocess.run(
            [sys.executable, "manage.py", "shell", "-c", code],
            cwd=ROOT,
            env=services.env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        round_id, phase, deadline = done.stdout.split()[-3:]
        if phase == "dueling":
            return round_id, int(deadline)
    raise AssertionError("five duels in a row ended at the deal")


def status(round_id: str) -> str:
    return str(Round.objects.filter(id=round_id).values_list("status", flat=True).get())


def test_a_duel_completes_once_after_its_worker_is_killed_mid_timer(
    services: Services, own_redis: Any
) -> None:
    broker = redis.Redis.from_url(own_redis.url)
    a, b = make_player(), make_player()
    table = table_create(name="faults duel", ruleset="duel", min_bet=1_000_000, max_bet=1_000_000)
    services.beat()
    worker = services.worker()
    # Not the current app: the suite's own tasks keep going to the suite's broker.
    probe = Celery(broker=own_redis.url, set_as_current=False)
    try:
        wait_until(lambda: probe.control.ping(timeout=0.5), 60, "the worker answers", worker)
    finally:
        probe.close()

    round_id, deadline_ms = open_duel_elsewhere(services, table.pk, a, b)
    # The worker took the nudge and holds it (unacknowledged) until the timer ends.
    wait_until(lambda: broker.hlen("unacked") >= 1, 20, "the worker holds the nudge", worker)
    assert time.time() * 1000 < deadline_ms, "the timer ended before the kill: machine too slow"
    worker.send_signal(signal.SIGKILL)
    worker.wait(timeout=10)

    # Past the deadline with no worker: nothing applies it, the round is still waiting.
    wait_until(lambda: time.time() * 1000 > deadline_ms + 1_000, 30, "the timer ended")
    assert status(round_id) == RoundStatus.OPEN
    held = broker.hlen("unacked")
    assert held >= 1  # the killed worker's nudge: not redelivered before the visibility timeout

    services.worker()
    wait_until(lambda: status(round_id) != RoundStatus.OPEN, 60, "the round completes")

    events = list(StoredEvent.objects.filter(stream_id=round_id).order_by("version"))
    types = [e.type for e in events]
    assert status(round_id) == RoundStatus.SETTLED
    assert types[-3:] == ["CardsRevealed", "RoundSettled", "ServerSeedRevealed"], types
    stood = [e.data for e in events if e.type == "PlayerStood"]
    # The timer stood every hand still open when it fired, once each (a hand the fair shoe
    # dealt 21 was already done and is not stood).
    before = None
    for e in events[: types.index("PlayerStood")]:
        before = evolve(before, event_from_dict({**e.data, "type": e.type}))
    assert before is not None
    still_open = sorted(b.player_id for b in before.boxes if b.hands[0].status == OPEN)
    assert still_open, "no hand was open when the timer fired"
    assert sorted(s["player_id"] for s in stood) == still_open
    assert all(s["auto"] is True for s in stood)
    assert types.count("RoundSettled") == 1
    assert_consistent([round_id])  # ledger balanced, receipt verifies, replay == projection
