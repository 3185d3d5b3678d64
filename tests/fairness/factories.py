"""Test data for the fairness app: users and whole rounds played through the services."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from typing import Any

from django.contrib.auth import get_user_model
from django.db import close_old_connections, connection, transaction

from casino.eventstore.store import NewEvent, append
from fairness import services
from fairness.models import RoundProof, SeedChain
from fairness.sample import sample_events

_counter = itertools.count(1)


def user_create(name: str | None = None) -> Any:
    username = name or f"player{next(_counter)}"
    return get_user_model().objects.create_user(username=username)  # no password: hashing is slow


def table_chain(table_id: str) -> None:
    """The table ids of these tests are plain strings, made on first use: each gets its first
    chain then, through the service that gives a real table its chain at creation."""
    if not SeedChain.objects.filter(table_id=table_id).exists():
        services.chain_create(table_id=table_id)


def round_open(*, table_id: str, round_id: str, client_seeds: list[str]) -> dict[str, Any]:
    """Issue a seed and append a RoundOpened (the round is then in play, seed still secret)."""
    table_chain(table_id)
    with transaction.atomic():
        issued = services.seed_issue(table_id=table_id)
        events = sample_events(
            round_id=round_id, server_seed=issued.server_seed, client_seeds=client_seeds,
            nonce=issued.nonce, table_id=table_id, chain_id=issued.chain_id,
        )  # fmt: skip
        append(stream_id=round_id, expected_version=0, events=[NewEvent(*events[0])])
    return {"issued": issued, "events": events}


def round_finish(*, round_id: str, opened: dict[str, Any]) -> RoundProof:
    """Append the rest of the round, reveal its seed and write its proof."""
    issued = opened["issued"]
    with transaction.atomic():
        rest = [NewEvent(t, d) for t, d in opened["events"][1:]]
        append(stream_id=round_id, expected_version=1, events=rest)
        services.seed_reveal(chain_id=issued.chain_id, nonce=issued.nonce)
        from casino.eventstore.store import load

        stored = [
            {**e.stored_body(), "prev_hash": e.prev_hash, "hash": e.hash} for e in load(round_id)
        ]
        return services.round_proof_create(round_id=round_id, events=stored)


def round_play(*, table_id: str, round_id: str, client_seeds: list[str]) -> RoundProof:
    """A whole round, from seed issue to proof."""
    return round_finish(
        round_id=round_id,
        opened=round_open(table_id=table_id, round_id=round_id, client_seeds=client_seeds),
    )


def race(work: Callable[[], Any], workers: int) -> list[Any]:
    """`work` run by `workers` threads released at once (PostgreSQL: each its own connection,
    closed after); what each returned, or the repr of what it raised."""
    barrier = threading.Barrier(workers)
    results: list[Any] = []
    lock = threading.Lock()

    def run() -> None:
        try:
            barrier.wait()
            outcome: Any = work()
        except Exception as exc:  # recorded: the test fails on anything unexpected
            outcome = repr(exc)
        finally:
            close_old_connections()
            connection.close()
        with lock:
            results.append(outcome)

    threads = [threading.Thread(target=run) for _ in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results
