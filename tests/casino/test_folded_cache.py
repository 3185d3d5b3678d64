"""The round service's per-process folded states and its participant check.

A command on a round this process committed last uses the state it kept (no events read, no
fold) only when the round's locked row is at that state's version; anything else reads the
stream. The participant check locks the row only for a player of the round: 403 / 404
otherwise, raised inside the transaction (nothing written).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from casino.engine.commands import Hit, PlaceBet, Stand
from casino.engine.rules import USDC
from casino.eventstore.models import StoredEvent
from casino.models import Round
from casino.platform.errors import ApplicationError, NotYours
from casino.rounds import services, stream
from tests.casino.conftest import available, make_player, make_table

pytestmark = pytest.mark.django_db(transaction=True)

Stack = Callable[[Sequence[str]], None]
EVENTS = "eventstore_storedevent"


def _reads_events(queries: CaptureQueriesContext) -> bool:
    """The stream's load (not the append's check of its head)."""
    return any(
        EVENTS in q["sql"] and "ORDER BY version" in q["sql"] for q in queries.captured_queries
    )


@pytest.fixture(autouse=True)
def _empty_cache() -> None:
    services._folded.clear()


def _dealt(stack_shoe: Stack, cards: Sequence[str]) -> tuple[str, str]:
    stack_shoe(cards)
    alice = make_player("alice")
    table = make_table("classic", min_bet=USDC, max_bet=100 * USDC)
    opened = services.round_open(table=table, players=[alice])
    player = str(alice.pk)
    services.round_command(round_id=opened.round.id, command=PlaceBet(player, (10 * USDC,)))
    return opened.round.id, player


def test_the_next_command_uses_the_committed_state_and_plays_the_same(stack_shoe: Stack) -> None:
    # 9H 7D against TS up (hole 5C); hit 2C (18); the dealer draws 4D to 19: a 10 USDC loss.
    round_id, player = _dealt(stack_shoe, ["9H", "5C", "7D", "TS", "2C", "4D"])
    kept = services._folded[round_id]
    assert kept.version == Round.objects.get(id=round_id).version
    assert [e.version for e in kept.stored] == list(range(1, kept.version + 1))
    with CaptureQueriesContext(connection) as queries:
        hit = services.round_command(round_id=round_id, command=Hit(player))
    assert not _reads_events(queries)  # the kept state, not the stream
    assert hit.state == stream.round_state_for(round_id=round_id)  # what a fold gives
    assert services._folded[round_id].version == hit.round.version
    done = services.round_command(round_id=round_id, command=Stand(player))
    settlement = done.state.settlement
    assert settlement is not None
    assert [(h.outcome, h.total, h.gross_return) for h in settlement.hands] == [("lose", 18, 0)]
    assert round_id not in services._folded  # a finished round is forgotten
    stored = StoredEvent.objects.filter(stream_id=round_id).count()
    assert Round.objects.get(id=round_id).version == stored == done.round.version


def test_a_row_at_another_version_reads_the_stream(stack_shoe: Stack) -> None:
    round_id, player = _dealt(stack_shoe, ["9H", "5C", "7D", "TS", "2C", "4D"])
    kept = services._folded[round_id]
    # As if another process had committed a command since: this process's state is stale.
    services._folded[round_id] = services._Folded(kept.version - 1, kept.stored[:-1], kept.state)
    with CaptureQueriesContext(connection) as queries:
        hit = services.round_command(round_id=round_id, command=Hit(player))
    assert _reads_events(queries)
    assert hit.state == stream.round_state_for(round_id=round_id)
    assert services._folded[round_id].version == hit.round.version


def test_a_rolled_back_command_keeps_nothing(stack_shoe: Stack) -> None:
    round_id, player = _dealt(stack_shoe, ["9H", "5C", "7D", "TS", "2C", "4D"])
    before = services._folded[round_id]

    class FailsLast:  # the command runs, then its transaction rolls back
        def begin(self) -> None:
            pass

        def commit(self, result: services.RoundResult) -> None:
            assert result.events  # the hit was decided and appended
            raise services.HookExit("roll back")

        def refuse(self, error: ApplicationError) -> None:  # pragma: no cover
            raise AssertionError(error)

    with pytest.raises(services.HookExit):
        services.round_command(round_id=round_id, command=Hit(player), hook=FailsLast())
    assert services._folded[round_id] is before
    assert Round.objects.get(id=round_id).version == before.version
    hit = services.round_command(round_id=round_id, command=Hit(player))  # the kept state
    assert hit.state == stream.round_state_for(round_id=round_id)


def test_the_cache_keeps_at_most_its_size(
    stack_shoe: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(services, "FOLDED_MAX", 1)
    first, _ = _dealt(stack_shoe, ["9H", "5C", "7D", "TS", "2C", "4D"])
    bob = make_player("bob")
    table = make_table("classic", name="second", min_bet=USDC, max_bet=100 * USDC)
    second = services.round_open(table=table, players=[bob]).round.id
    assert list(services._folded) == [second] and first != second


def test_only_a_player_of_the_round_commands_it(stack_shoe: Stack) -> None:
    round_id, player = _dealt(stack_shoe, ["9H", "5C", "7D", "TS", "2C", "4D"])
    bob = make_player("bob")
    version = Round.objects.get(id=round_id).version
    with pytest.raises(NotYours) as refused:
        services.round_command(round_id=round_id, command=Hit(str(bob.pk)), participant=bob.pk)
    assert (refused.value.status_code, refused.value.code) == (403, "not_a_participant")
    missing = "00000000-0000-4000-8000-000000000000"
    with pytest.raises(NotYours) as unknown:
        services.round_command(round_id=missing, command=Hit(player), participant=int(player))
    assert (unknown.value.status_code, unknown.value.code) == (404, "not_found")
    assert Round.objects.get(id=round_id).version == version  # nothing written
    hit = services.round_command(round_id=round_id, command=Hit(player), participant=int(player))
    assert hit.round.version == version + len(hit.events)
    assert available(bob) == 100 * USDC
