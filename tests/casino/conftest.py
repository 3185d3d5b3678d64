"""Factories for round-service tests: funded players and tables, and stacked shoes."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser

from casino.engine.commands import Stand
from casino.engine.evolve import RoundState
from casino.engine.rules import DUEL, RULESETS, USDC
from casino.engine.shoe import StackedShoe
from casino.models import Table
from casino.rounds import seeds
from casino.rounds.services import round_command
from casino.rounds.stream import round_load
from casino.tables.services import table_add
from ledger.selectors import wallet_balances
from ledger.services import wallet_deposit

FUNDS = 100 * USDC


def make_player(name: str, funds: int = FUNDS) -> AbstractBaseUser:
    user = get_user_model().objects.create_user(username=name, password="pw")
    if funds:
        wallet_deposit(user=user, amount_micro=funds, idempotency_key=f"fund:{name}")
    return user


def make_table(ruleset: str, **overrides: Any) -> Table:
    rules = RULESETS[ruleset]
    fields: dict[str, Any] = {
        "name": f"{ruleset} test",
        "ruleset": ruleset,
        "min_bet": rules.default_min_bet,
        "max_bet": rules.default_max_bet,
        "stake": USDC if rules.kind == DUEL else 0,
        "seats": rules.max_seats,
    }
    fields.update(overrides)
    return table_add(Table(**fields))  # with its first seed chain, as every table


def stand_open_hands(round_id: str) -> RoundState:
    """Stand every seat whose hand is still open, and return the state after the last stand.
    A duel's cards are live once dealt (a beacon's among them), so a seat dealt 21 has stood
    already and a stand for it is refused."""
    _, state = round_load(round_id=round_id)
    assert state is not None
    for box in state.boxes:
        if box.hands[0].status == "open":
            state = round_command(round_id=round_id, command=Stand(box.player_id)).state
    return state


def available(user: AbstractBaseUser) -> int:
    return wallet_balances(user_id=int(user.pk))["player_available"]


@pytest.fixture
def stack_shoe(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[Sequence[str]], None]]:
    """Deal the next rounds from these cards instead of the fair shoe (known-answer tests)."""

    def stack(cards: Sequence[str]) -> None:
        shoe = StackedShoe(list(cards))
        monkeypatch.setattr(seeds, "shoe_for_open", lambda command: shoe)
        monkeypatch.setattr(seeds, "shoe_for", lambda state: None if state.finished else shoe)

    yield stack
