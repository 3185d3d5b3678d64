"""Properties of random games through the service: replay equals the projections, money is
conserved (the ledger reconciles, voids included) and every finished round passes audit."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from casino.engine.commands import (
    Command,
    DeclineInsurance,
    Double,
    Hit,
    PlaceBet,
    Split,
    Stand,
    TakeEvenMoney,
    TakeInsurance,
)
from casino.engine.evolve import RoundState
from casino.engine.rules import RULESETS, USDC
from casino.models import Table
from casino.platform.errors import ApplicationError
from casino.rounds import services
from casino.rounds.audit import audit
from casino.rounds.projections import rebuild_round
from ledger.reconcile import ledger_reconcile
from tests.casino.conftest import make_player, make_table

SEATS = {"classic": 1, "atlantic_city": 1, "duel_classic": 2, "duel": 3}


def candidates(state: RoundState, player_id: str) -> list[Command]:
    """Every command a player might send now: legal or not, the service must cope."""
    rules = state.rules
    bets = tuple(USDC * (1 + i) for i in range(rules.max_boxes))
    return [
        PlaceBet(player_id, bets[:1]),
        PlaceBet(player_id, bets),
        Hit(player_id),
        Hit(player_id, confirm=True),
        Stand(player_id),
        Double(player_id),
        Split(player_id),
        TakeInsurance(player_id, 0, None),
        DeclineInsurance(player_id, 0),
        TakeEvenMoney(player_id, 0),
    ]


@pytest.mark.django_db
@pytest.mark.slow
@settings(
    max_examples=10,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    ruleset=st.sampled_from(sorted(RULESETS)),
    choices=st.lists(st.integers(min_value=0, max_value=10_000), min_size=40, max_size=80),
    void_at=st.one_of(st.none(), st.integers(min_value=0, max_value=30)),
)
def test_random_games_keep_every_invariant(
    ruleset: str, choices: list[int], void_at: int | None
) -> None:
    tag = uuid.uuid4().hex[:12]  # examples share the test's database: fresh names each time
    players = [make_player(f"p{seat}-{tag}") for seat in range(SEATS[ruleset])]
    table = Table.objects.filter(name=f"{ruleset} props").first() or make_table(
        ruleset, name=f"{ruleset} props", min_bet=USDC, max_bet=50 * USDC
    )  # one table (and seed chain) per rule set across examples
    result = services.round_open(table=table, players=players)
    round_id = result.round.id
    ids = [str(p.pk) for p in players]
    for step, choice in enumerate(choices):
        if result.state.finished:
            break
        if void_at is not None and step == void_at:
            result = services.round_void(round_id=round_id, reason="staff test void")
            break
        options = candidates(result.state, ids[choice % len(ids)])
        command = options[(choice // len(ids)) % len(options)]
        try:
            result = services.round_command(round_id=round_id, command=command)
        except ApplicationError as error:
            assert error.status_code in (400, 409), error.code
    if not result.state.finished:
        result = services.round_void(round_id=round_id, reason="unfinished at the end of the test")
    report = ledger_reconcile()
    assert report.ok, report.as_dict()
    assert rebuild_round(round_id, write=False) == []
    assert [r.problems for r in audit([round_id])] == [[]]
