"""Bots playing real rounds through the round service: the engine of `manage.py play`.

Each round opens at a table of the rule set, every seat sends the command its basic-strategy
bot chooses (`casino.engine.bots`) until the round settles, and the money moves through the
ledger. Players short of funds are topped up by a staff deposit first (demo and benches).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser

from casino.engine.bots import bot_command
from casino.engine.events import beacon_round_time
from casino.engine.evolve import BEACON
from casino.engine.rules import DUEL, RULESETS, USDC
from casino.models import Table
from casino.platform.errors import ApplicationError
from casino.rounds import services
from casino.tables.services import demo_table
from fairness import beaconsource
from ledger.selectors import wallet_balances
from ledger.services import wallet_deposit

TOP_UP = 1_000 * USDC
MAX_STEPS = 200  # commands per round; a round needing more is a bug, not a long hand


@dataclass
class PlayReport:
    ruleset: str
    rounds: int = 0
    staked: int = 0
    returned: int = 0
    fees: int = 0
    seconds: float = 0.0
    round_ids: list[str] = field(default_factory=list)

    @property
    def rounds_per_s(self) -> float:
        return self.rounds / self.seconds if self.seconds else 0.0

    @property
    def rtp(self) -> float:
        return self.returned / self.staked if self.staked else 0.0


def top_up(user: AbstractBaseUser, needed: int) -> None:
    """Deposit TOP_UP when the player's available balance is below `needed`."""
    balance = wallet_balances(user_id=int(user.pk))["player_available"]
    if balance < needed:
        wallet_deposit(
            user=user,
            amount_micro=TOP_UP,
            idempotency_key=f"play-top-up:{user.pk}:{time.time_ns()}",
            source="staff",
        )


def play_round(
    table: Table, players: Sequence[AbstractBaseUser], rng: random.Random
) -> services.RoundResult:
    """One round, start to finish, through the service path."""
    rules = RULESETS[table.ruleset]
    for user in players:
        top_up(user, 20 * (table.stake if rules.kind == DUEL else table.max_bet))
    result = services.round_open(table=table, players=players)
    ids = [str(u.pk) for u in players]
    for _ in range(MAX_STEPS):
        if result.state.finished:
            return result
        if result.state.phase == BEACON:
            result = await_beacon(result)
            continue
        acted = False
        for player_id in ids:
            bets = None
            if rules.max_boxes > 1:
                boxes = rng.randint(1, rules.max_boxes)
                bets = tuple(table.min_bet * rng.randint(1, 5) for _ in range(boxes))
            command = bot_command(result.state, player_id, bets)
            if command is not None:
                result = services.round_command(round_id=result.round.id, command=command)
                acted = True
                break
        if not acted:
            raise RuntimeError(f"round {result.round.id} is stuck in phase {result.state.phase}")
    raise RuntimeError(f"round {result.round.id} did not finish in {MAX_STEPS} commands")


BEACON_POLL_S = 0.25  # how often a round whose beacon round is due asks for it again


def await_beacon(result: services.RoundResult) -> services.RoundResult:
    """Wait, as the table does, until the beacon round the round locked on is published, and
    record it (the cards follow); no beacon by the deadline: the timeout voids the round. A
    timer that recorded it first (a served process's sweep) leaves nothing to do."""
    round_id, state = result.round.id, result.state
    spec, deadline = state.opened.beacon, state.deadline_ms
    assert spec is not None and deadline is not None
    due = float(beacon_round_time(spec, state.beacon_round))
    while True:
        time.sleep(max(0.0, due - time.time()))
        signature = beaconsource.signature_for(state.beacon_round)
        if signature is not None:
            try:
                return services.round_record_beacon(
                    round_id=round_id, beacon_round=state.beacon_round, signature=signature
                )
            except ApplicationError:  # another process recorded it first: the round as it is
                return services.round_timeout(round_id=round_id)
        if time.time() * 1000 >= deadline:
            return services.round_timeout(round_id=round_id)  # the void
        due = time.time() + BEACON_POLL_S


def play(
    *,
    ruleset: str,
    rounds: int,
    players: int = 1,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> PlayReport:
    """Play `rounds` rounds of `ruleset` with `players` demo players."""
    if ruleset not in RULESETS:
        raise ValueError(f"unknown rule set {ruleset!r}; choose from {', '.join(RULESETS)}")
    rules = RULESETS[ruleset]
    players = max(players, rules.min_seats)
    if players > rules.max_seats:
        raise ValueError(f"{ruleset} seats at most {rules.max_seats} players")
    users = bot_players(players)
    table = demo_table(ruleset)
    rng = random.Random(seed)
    report = PlayReport(ruleset=ruleset)
    started = time.perf_counter()
    for i in range(rounds):
        result = play_round(table, users, rng)
        report.rounds += 1
        report.staked += result.round.stake_total
        report.returned += result.round.return_total
        report.fees += result.round.fee
        report.round_ids.append(result.round.id)
        if progress is not None:
            progress(i + 1, rounds)
    report.seconds = time.perf_counter() - started
    return report


DEMO_PLAYERS = ("alice", "bob", "carol")


def bot_players(count: int) -> list[AbstractBaseUser]:
    """The demo players first, then bot1, bot2, ... created as needed (unusable passwords)."""
    User = get_user_model()
    names = list(DEMO_PLAYERS[:count]) + [
        f"bot{i}" for i in range(1, count - len(DEMO_PLAYERS) + 1)
    ]
    users: list[AbstractBaseUser] = []
    for name in names:
        user, created = User.objects.get_or_create(username=name)
        if created:
            user.set_unusable_password()
            user.save(update_fields=["password"])
        users.append(user)
    return users
