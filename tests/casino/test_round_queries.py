"""SQL queries per round command: pinned so that a regression fails here, not in a benchmark.

A classic round through the service path, one player, dealt from a stacked shoe so every
command is known: open, the bet that closes betting and deals, a hit, and the stand that
plays the dealer out, settles, reveals the seed and signs the receipt. Each budget is what
the command costs now (docs/performance.md, "Service-path figures"). The dashboard's stats
rows are written inside the settling command's transaction, in a savepoint of their own (2
statements: a failing stats write must not void the round), and are counted; the on-commit
work (publishing, the stats ping, automatic flags) runs after it and is not counted.

The same round through the REST API is pinned too, per request: its statements, and that
every write of a request (its Idempotency-Key, the DEAL's open and bet, the answer) is in
one transaction, committed once.
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
from casino.rounds import services
from casino.tables.play import play
from tests.api.conftest import Api
from tests.casino.conftest import available, make_player, make_table

pytestmark = pytest.mark.django_db

Stack = Callable[[Sequence[str]], None]

# Queries inside each command's transaction (its BEGIN/COMMIT, or savepoints under a test).
# SQLite sends the house accounts' deferred balance change (ledger.posting.HOT_TYPES) and the
# transparency log's queued leaves (fairness.transparency.queue_leaf) as statements of their
# own; PostgreSQL sends both with the command's last queued write (a bare open has none: its
# round_opened leaf is a statement of its own there).
BUDGET = {
    "sqlite": {"open": 10, "deal": 13, "hit": 7, "settling_stand": 20},
    "postgresql": {"open": 8, "deal": 8, "hit": 6, "settling_stand": 14},
}


def test_each_classic_command_stays_within_its_query_budget(stack_shoe: Stack) -> None:
    # Player 9H 7D against the dealer's TS up, hole 5C; the hit brings 2C (18), the dealer
    # draws 4D to 19 and the player loses 10 USDC.
    stack_shoe(["9H", "5C", "7D", "TS", "2C", "4D"])
    alice = make_player("alice")
    table = make_table("classic", min_bet=USDC, max_bet=100 * USDC)
    player = str(alice.pk)
    steps = [
        ("deal", PlaceBet(player, (10 * USDC,)), "playing"),
        ("hit", Hit(player), "playing"),
        ("settling_stand", Stand(player), "settled"),
    ]
    # A first round creates the table's seed chain and records the signing key: not counted.
    warm_up = services.round_open(table=table, players=[alice])
    for _, command, _ in steps:
        services.round_command(round_id=warm_up.round.id, command=command)

    budget = BUDGET[connection.vendor]
    counted: dict[str, int] = {}
    with CaptureQueriesContext(connection) as queries:
        opened = services.round_open(table=table, players=[alice])
    counted["open"] = len(queries)
    round_id = opened.round.id
    for name, command, phase in steps:
        with CaptureQueriesContext(connection) as queries:
            result = services.round_command(round_id=round_id, command=command)
        counted[name] = len(queries)
        assert result.state.phase == phase

    settlement = result.state.settlement
    assert settlement is not None
    assert [(h.outcome, h.total, h.gross_return) for h in settlement.hands] == [("lose", 18, 0)]
    assert available(alice) == 80 * USDC
    stored = StoredEvent.objects.filter(stream_id=round_id).count()
    assert (result.round.status, result.round.version) == ("settled", stored)
    assert Round.objects.get(id=round_id).version == stored
    assert (result.round.stake_total, result.round.return_total) == (10 * USDC, 0)
    over = {name: (n, budget[name]) for name, n in counted.items() if n > budget[name]}
    assert not over, f"queries per command above budget (counted, budget): {over}"


def test_a_fair_round_reads_its_seed_chain_only_to_issue_and_to_reveal() -> None:
    # The real shoe: the seed handed out at the open deals every card; the chain row is
    # touched once when the seed is issued and once when it is revealed, each time by one
    # UPDATE ... RETURNING (the lock, the check and the write in one statement).
    play(ruleset="classic", rounds=1)  # creates the table's chain
    with CaptureQueriesContext(connection) as queries:
        report = play(ruleset="classic", rounds=3)
    chain = [q["sql"] for q in queries if "fairness_seedchain" in q["sql"]]
    assert report.rounds == 3
    assert len(chain) == 2 * 3, chain
    assert all(sql.lstrip().startswith("UPDATE") and "RETURNING" in sql for sql in chain), chain


# Statements of each REST request (authentication aside: the client is authenticated in
# process), in a real transaction (no test savepoints): the key's record is the first write
# of the command's transaction and its answer the last; the reads before it run in autocommit.
# The counts include the one BEGIN and COMMIT. On PostgreSQL the seat check runs in the
# round's lock and the opening DEAL's last bet and the log's queued leaves go out with the
# answer; SQLite sends the house accounts' deferred balance change and the transparency
# log's queued leaves as statements of their own (see BUDGET).
REQUEST_BUDGET = {
    "sqlite": {"deal": 20, "hit": 8, "settling_stand": 20},
    "postgresql": {"deal": 13, "hit": 6, "settling_stand": 13},
}


@pytest.mark.django_db(transaction=True)
def test_each_classic_request_is_one_transaction_within_its_statement_budget(
    stack_shoe: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    stack_shoe(["9H", "5C", "7D", "TS", "2C", "4D"] * 2)
    alice = make_player("alice")
    api = Api(alice)
    table = api.post("/api/tables/personal/", {"ruleset": "classic"}).json()["id"]
    warm_up = api.post(f"/api/tables/{table}/deal/", {"bets": ["10"]}).json()["round_id"]
    api.post(f"/api/rounds/{warm_up}/hit/")
    api.post(f"/api/rounds/{warm_up}/stand/")

    commits: list[int] = []
    real_commit = connection.commit

    def commit() -> None:
        commits.append(1)
        real_commit()

    monkeypatch.setattr(connection, "commit", commit)
    counted: dict[str, tuple[int, int]] = {}

    def request(name: str, url: str, body: dict[str, object] | None = None) -> dict[str, object]:
        commits.clear()
        with CaptureQueriesContext(connection) as queries:
            response = api.post(url, body)
        assert response.status_code == 200, response.content
        sql = [q["sql"].lstrip().upper() for q in queries.captured_queries]
        first_write = next(i for i, q in enumerate(sql) if not q.startswith("SELECT"))
        if sql[first_write].startswith("BEGIN"):
            first_write += 1
        assert "LEDGER_IDEMPOTENCYRECORD" in sql[first_write], sql[first_write]
        last_write = [q for q in sql if not q.startswith(("SELECT", "COMMIT", "RELEASE"))][-1]
        assert "LEDGER_IDEMPOTENCYRECORD" in last_write, last_write
        counted[name] = (len(queries), len(commits))
        return dict(response.json())

    dealt = request("deal", f"/api/tables/{table}/deal/", {"bets": ["10"]})
    round_id = str(dealt["round_id"])
    request("hit", f"/api/rounds/{round_id}/hit/")
    done = request("settling_stand", f"/api/rounds/{round_id}/stand/")
    assert done["status"] == "settled"
    assert StoredEvent.objects.filter(stream_id=round_id, type="RoundOpened").count() == 1
    assert available(alice) == 80 * USDC  # two rounds lost, 10 USDC each: staked once each

    budget = REQUEST_BUDGET[connection.vendor]
    assert {name: c[1] for name, c in counted.items()} == dict.fromkeys(budget, 1), counted
    over = {name: (c[0], budget[name]) for name, c in counted.items() if c[0] > budget[name]}
    assert not over, f"statements per request above budget (counted, budget): {over}"


@pytest.mark.postgres
def test_a_tables_open_round_is_found_through_the_open_rounds_index() -> None:
    # DEAL reads the table's open round on every request: through the partial index of open
    # rounds, not by filtering the table's whole history (a personal table keeps every round).
    from casino.tables.services import _TABLE_AND_OPEN_ROUND, table_and_open_round

    alice = make_player("alice")
    table = make_table("classic")
    assert table_and_open_round(table.pk) == (table, None)
    opened = services.round_open(table=table, players=[alice])
    found = table_and_open_round(table.pk)
    assert found is not None and found[1] == opened.round.id
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")  # an empty test table: no seq scan
        cursor.execute("EXPLAIN " + _TABLE_AND_OPEN_ROUND[0], [table.pk])
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "casino_round_open_by_table" in plan, plan
