"""Dashboard test setup: funded players, tables, stacked shoes, and one user per staff role."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, Group
from django.test import Client

from casino.engine.commands import PlaceBet, Stand
from casino.engine.rules import DUEL, RULESETS, USDC
from casino.engine.shoe import StackedShoe
from casino.models import Table
from casino.rounds import seeds, services
from casino.tables.services import table_add
from ledger.selectors import wallet_balances
from ledger.services import wallet_deposit

FUNDS = 100 * USDC
ROLES = ("reviewer", "manager", "auditor")
# Classic deal order: player, dealer hole, player, dealer up. Player 9H 7D = 16 against TS,
# hole card 5C; standing, the dealer draws 4S to 19.
OPEN_HAND = ("9H", "5C", "7D", "TS", "4S", "2H", "3D", "8C")
HOLE_CARD = "5C"


def make_player(name: str, funds: int = FUNDS) -> AbstractBaseUser:
    user = get_user_model().objects.create_user(username=name, password="pw")
    if funds:
        wallet_deposit(user=user, amount_micro=funds, idempotency_key=f"fund:{name}")
    return user


def make_staff(role: str, password: str = "pw") -> AbstractBaseUser:
    user = get_user_model().objects.create_user(username=role, password=password, is_staff=True)
    user.groups.add(Group.objects.get(name=role))
    return user


def make_table(ruleset: str = "classic", **overrides: Any) -> Table:
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


def available(user: AbstractBaseUser) -> int:
    return wallet_balances(user_id=int(user.pk))["player_available"]


def login(user: AbstractBaseUser) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture(autouse=True)
def fast_password_hashing(settings: Any) -> None:
    """PBKDF2 costs ~0.1-0.3 s per user here; these tests create several users each."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def stack_shoe(monkeypatch: pytest.MonkeyPatch) -> Callable[[Sequence[str]], None]:
    """Deal the next rounds from these cards instead of the fair shoe."""

    def stack(cards: Sequence[str]) -> None:
        shoe = StackedShoe(list(cards))
        monkeypatch.setattr(seeds, "shoe_for_open", lambda command: shoe)
        monkeypatch.setattr(seeds, "shoe_for", lambda state: None if state.finished else shoe)

    return stack


@pytest.fixture
def staff() -> dict[str, AbstractBaseUser]:
    """One user per role, plus a superuser and a plain (non-staff) player."""
    users = {role: make_staff(role) for role in ROLES}
    users["superuser"] = get_user_model().objects.create_superuser(username="root", password="pw")
    users["player"] = get_user_model().objects.create_user(username="someone", password="pw")
    return users


@pytest.fixture
def open_round(
    stack_shoe: Callable[[Sequence[str]], None],
) -> Iterator[tuple[str, AbstractBaseUser]]:
    """A classic round where the player has 16 to act, the dealer's hole card face down."""
    stack_shoe(OPEN_HAND)
    player = make_player("alice")
    round_id = services.round_open(table=make_table(), players=[player]).round.id
    services.round_command(round_id=round_id, command=PlaceBet(str(player.pk), (10 * USDC,)))
    yield round_id, player


def finish(round_id: str, player: AbstractBaseUser) -> None:
    services.round_command(round_id=round_id, command=Stand(str(player.pk)))


@pytest.fixture
def fair_round(django_capture_on_commit_callbacks: Any) -> str:
    """A classic round played to the end from the real fair shoe by a basic-strategy bot.

    The round service's after-commit hooks (flags, stats) run as they would in production.
    """
    import random

    from casino.tables.play import play_round

    player = make_player("fairplayer")
    with django_capture_on_commit_callbacks(execute=True):
        return play_round(make_table(), [player], random.Random(7)).round.id
