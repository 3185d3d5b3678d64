"""Duel pots: returns plus fee equal the pot exactly, for 2-8 players, 0.5-500 USDC stakes.

The split (fee rate from the rule set, remainder rule) is the engine's; the ledger posts it
and refuses anything that does not empty the pot exactly.
"""

from __future__ import annotations

import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from casino.engine.rules import RULESETS
from casino.engine.settle import duel_payouts
from ledger import services
from tests.ledger.factories import available, balance, fund, make_user

pytestmark = pytest.mark.django_db

MIN_STAKE, MAX_STAKE = 500_000, 500_000_000
hands = st.tuples(st.integers(min_value=4, max_value=26), st.booleans()).map(
    lambda h: (h[0], h[1] and h[0] == 21)
)


def _settle_duel(players: list, stake: int, totals: list[tuple[int, bool]]) -> None:  # type: ignore[type-arg]
    ref = f"duel-{uuid.uuid4().hex}"
    bps = RULESETS["duel"].fee_bps_for(len(players))
    gross, fee = duel_payouts(totals, stake, bps)
    before = {p.pk: available(p) for p in players}
    fee_before = balance("house_fee_revenue")
    for i, player in enumerate(players):
        services.round_stake(
            round_ref=ref, user=player, amount_micro=stake, idempotency_key=f"{ref}:{i}"
        )
    assert balance(f"round_escrow:{ref}") == stake * len(players)
    services.round_settle(
        round_ref=ref,
        returns=list(zip(players, gross, strict=True)),
        fee_micro=fee,
        house_banked=False,
        idempotency_key=f"{ref}:settle",
    )
    assert balance(f"round_escrow:{ref}") == 0
    assert balance("house_fee_revenue") - fee_before == fee
    assert sum(gross) + fee == stake * len(players)
    for player, amount in zip(players, gross, strict=True):
        assert available(player) - before[player.pk] == amount - stake


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    count=st.integers(min_value=2, max_value=8),
    stake=st.integers(min_value=MIN_STAKE, max_value=MAX_STAKE),
)
def test_duel_pot_splits_exactly(data: st.DataObject, count: int, stake: int) -> None:
    players = [make_user() for _ in range(count)]
    for player in players:
        fund(player, stake)
    totals = data.draw(st.lists(hands, min_size=count, max_size=count))
    _settle_duel(players, stake, totals)


@pytest.mark.parametrize("count", range(2, 9))
@pytest.mark.parametrize("stake", [MIN_STAKE, MIN_STAKE + 1, 333_333_333, MAX_STAKE])
def test_duel_edges_every_seat_count(count: int, stake: int) -> None:
    players = [make_user() for _ in range(count)]
    for player in players:
        fund(player, stake)
    # Three-way tie when possible: the remainder micro-USDC go to winners in seat order.
    totals = [(20, False)] * min(3, count) + [(19, False)] * (count - min(3, count))
    _settle_duel(players, stake, totals)


def test_an_inexact_split_is_refused_and_posts_nothing() -> None:
    players = [make_user() for _ in range(3)]
    for player in players:
        fund(player, MIN_STAKE)
    ref = "duel-inexact"
    for i, player in enumerate(players):
        services.round_stake(
            round_ref=ref, user=player, amount_micro=MIN_STAKE, idempotency_key=f"x{i}"
        )
    gross, fee = duel_payouts([(20, False)] * 3, MIN_STAKE, 200)
    with pytest.raises(Exception) as caught:
        services.round_settle(
            round_ref=ref,
            returns=list(
                zip(players, [g + (1 if i == 0 else 0) for i, g in enumerate(gross)], strict=True)
            ),
            fee_micro=fee,
            house_banked=False,
            idempotency_key="x",
        )
    assert getattr(caught.value, "code", None) == "pot_mismatch"
    assert balance(f"round_escrow:{ref}") == 3 * MIN_STAKE
