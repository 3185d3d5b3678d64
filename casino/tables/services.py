"""Table services: demo tables, staff creation, personal tables, seating and the duel lobby.

Writes live here (HackSoft style); reads are in `casino.rounds.selectors`. Rounds themselves are
opened and played only through `casino.rounds.services`: `table_deal` and `lobby_start` call it.

- `classic` and `atlantic_city`: each player gets a personal table on demand (one seat).
- `duel_classic`: shared seats; the first DEAL opens a round for every seated player, whose
  betting window and turn timers are deadlines in the round's state.
- `duel`: players sit and say READY; the round starts as soon as every seat is ready, or
  when the lobby timer (`LOBBY_MS`) ends with at least 2 ready players.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Literal, cast

from celery import current_app
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.cache import cache
from django.db import IntegrityError, connection, transaction

from casino.engine.commands import PlaceBet
from casino.engine.rules import BANKED, DUEL, RULESETS
from casino.models import PlayerPreferences, Round, RoundStatus, Seat, Table, TableStatus
from casino.platform import rawsql
from casino.platform.errors import ApplicationError, ConflictError
from casino.rounds import services
from fairness import services as fairness_services
from ledger.money import usdc
from ledger.selectors import wallet_balances

PERSONAL_RULESETS = ("classic", "atlantic_city")
LOBBY_MS: int = getattr(settings, "DUEL_LOBBY_MS", 15_000)


def table_add(table: Table) -> Table:
    """Save a new table and create its first seed chain, in one transaction (a savepoint
    inside a caller's). Every table is created through here: its first round's commitment
    (the chain's terminal, published as `SeedChainCreated`) is public from the moment the
    table exists, before anyone can bet (fairness-v1 section 1)."""
    if table.pk is not None:
        raise ValueError("table_add saves a new table only")
    with transaction.atomic():
        table.save(force_insert=True)
        fairness_services.chain_create(table_id=str(table.pk))
    return table


def demo_table(ruleset: str) -> Table:
    """The open shared table of a rule set, created with the rule set's defaults if missing."""
    rules = RULESETS[ruleset]
    name = f"{ruleset.replace('_', ' ').title()} demo"
    table = Table.objects.filter(ruleset=ruleset, owner=None, status=TableStatus.OPEN).first()
    if table is not None:
        return table
    table = Table.objects.filter(name=name, ruleset=ruleset, owner=None).first()
    if table is not None:
        return table
    return table_add(
        Table(
            name=name,
            ruleset=ruleset,
            owner=None,
            min_bet=rules.default_min_bet,
            max_bet=rules.default_max_bet,
            stake=rules.default_min_bet if rules.kind == DUEL else 0,
            seats=rules.max_seats,
        )
    )


def table_problems(
    ruleset: str, *, min_bet: int, max_bet: int, chip_unit: int, seats: int
) -> list[str]:
    """What keeps these parameters from making a table of `ruleset` whose rounds can open
    (the rule set's bounds); empty when they can. A duel's limits are its fixed stake."""
    rules = RULESETS[ruleset]
    problems = []
    if not rules.min_seats <= seats <= rules.max_seats:
        problems.append(f"seats must be {rules.min_seats}..{rules.max_seats}")
    if not rules.min_table_bet <= min_bet <= max_bet <= rules.max_table_bet:
        problems.append(
            f"limits must satisfy {usdc(rules.min_table_bet)} <= min <= max <= "
            f"{usdc(rules.max_table_bet)}"
        )
    if chip_unit <= 0:
        problems.append("the chip unit must be positive")
    elif min_bet % chip_unit or max_bet % chip_unit:
        problems.append("limits must be whole multiples of the chip unit")
    return problems


def table_create(
    *,
    name: str,
    ruleset: str,
    min_bet: int,
    max_bet: int,
    stake: int = 0,
    seats: int | None = None,
    chip_unit: int | None = None,
    owner: AbstractBaseUser | None = None,
) -> Table:
    """Create a table (staff), checked against the rule set's bounds."""
    rules = RULESETS.get(ruleset)
    if rules is None:
        raise ApplicationError(
            f"Unknown rule set {ruleset!r}; choose from {', '.join(RULESETS)}.",
            code="invalid_ruleset",
        )
    unit = chip_unit or 10_000
    if rules.kind == DUEL:
        stake = stake or min_bet
        min_bet = max_bet = stake
    seats = seats or rules.max_seats
    problems = table_problems(
        ruleset, min_bet=min_bet, max_bet=max_bet, chip_unit=unit, seats=seats
    )
    if problems:
        raise ApplicationError(
            "The table's parameters are not valid.",
            code="invalid_table",
            extra={"problems": problems},
        )
    # A savepoint inside a caller's transaction (its idempotency key): the table, its first
    # seed chain and the key's answer commit together.
    return table_add(
        Table(
            name=name,
            ruleset=ruleset,
            min_bet=min_bet,
            max_bet=max_bet,
            stake=stake if rules.kind == DUEL else 0,
            seats=seats,
            chip_unit=unit,
            owner=cast(Any, owner),
        )
    )


def table_personal(*, user: AbstractBaseUser, ruleset: str) -> Table:
    """The player's personal table of `ruleset` (classic, atlantic_city), seated, on demand."""
    if ruleset not in PERSONAL_RULESETS:
        raise ApplicationError(
            f"Personal tables exist for {', '.join(PERSONAL_RULESETS)} only.",
            code="invalid_ruleset",
        )
    table = Table.objects.filter(owner_id=user.pk, ruleset=ruleset, status=TableStatus.OPEN).first()
    if table is None:
        rules = RULESETS[ruleset]
        table = table_create(
            name=f"{ruleset.replace('_', ' ').title()} of {user.get_username()}",
            ruleset=ruleset,
            min_bet=rules.default_min_bet,
            max_bet=rules.default_max_bet,
            seats=1,
            owner=user,
        )
    seat_take(table=table, user=user)
    return table


def seat_take(*, table: Table, user: AbstractBaseUser) -> Seat:
    """Sit at the lowest free seat (idempotent: an already seated player keeps their seat)."""
    if table.status != TableStatus.OPEN:
        raise ConflictError("This table is closed.", code="table_closed")
    if table.owner_id is not None and table.owner_id != user.pk:
        raise ApplicationError(
            "This is another player's personal table.", code="permission_denied", status_code=403
        )
    for _ in range(3):  # two players racing for one position: the loser takes the next one
        existing = Seat.objects.filter(table=table, user_id=user.pk).first()
        if existing is not None:
            return existing
        taken = set(Seat.objects.filter(table=table).values_list("position", flat=True))
        free = [p for p in range(table.seats) if p not in taken]
        if not free:
            raise ConflictError("Every seat at this table is taken.", code="table_full")
        try:
            with transaction.atomic():  # a savepoint inside a caller's transaction, if any
                return Seat.objects.create(table=table, user_id=user.pk, position=free[0])
        except IntegrityError:
            continue
    raise ConflictError("The seats changed while sitting down; retry.", code="seat_conflict")


def seat_leave(*, table: Table, user: AbstractBaseUser) -> None:
    """Stand up. A hand still in play is finished by its timers (the abandoned-hand policy)."""
    with transaction.atomic():
        Seat.objects.filter(table=table, user_id=user.pk).delete()


def _seated(table: Table, user: AbstractBaseUser) -> Seat:
    if table.owner_id is not None and table.owner_id != user.pk:
        raise ApplicationError(
            "This is another player's personal table.", code="permission_denied", status_code=403
        )
    seat = Seat.objects.filter(table=table, user_id=user.pk).first()
    if seat is None:
        raise ConflictError("Sit at the table first.", code="not_seated")
    return seat


def _last_bet_update(user_id: int, last_bet: list[int]) -> tuple[str, list[Any]]:
    """The UPDATE of the player's last bet (REBET's amounts) and its parameters."""
    field = PlayerPreferences._meta.get_field("last_bet")
    return (
        f"UPDATE {PlayerPreferences._meta.db_table} SET last_bet = %s WHERE user_id = %s",
        [field.get_db_prep_save(last_bet, connection), user_id],
    )


def _last_bet_set(user_id: int, last_bet: list[int]) -> int:
    """The player's last bet: one raw UPDATE now; the rows it changed."""
    return rawsql.execute(*_last_bet_update(user_id, last_bet))


def _seated_ids(table_id: int) -> list[int]:
    """The user ids seated at the table, in seat order (one raw statement)."""
    return rawsql.query(
        f"SELECT user_id FROM {Seat._meta.db_table} WHERE table_id = %s ORDER BY position",
        [table_id],
        lambda cursor: [int(row[0]) for row in cursor.fetchall()],
    )


_TABLE_AND_OPEN_ROUND: list[str] = []


def table_and_open_round(table_id: int) -> tuple[Table, str | None] | None:
    """The table and the id of its open round (None: none is open), in one statement (DEAL
    reads both before its transaction); None when there is no such table."""
    if not _TABLE_AND_OPEN_ROUND:
        qn = connection.ops.quote_name
        columns = ", ".join(f"t.{qn(f.column)}" for f in Table._meta.concrete_fields)
        _TABLE_AND_OPEN_ROUND.append(
            f"SELECT {columns}, (SELECT r.id FROM {Round._meta.db_table} r "
            f"WHERE r.table_id = t.id AND r.status = '{RoundStatus.OPEN}' "
            "ORDER BY r.opened_at DESC LIMIT 1) "
            f"FROM {Table._meta.db_table} t WHERE t.id = %s"
        )
    row = rawsql.fetch_one(_TABLE_AND_OPEN_ROUND[0], [table_id])
    if row is None:
        return None
    table = rawsql.instance(Table, row)
    assert table is not None
    return table, row[-1]


def open_round_at(table: Table) -> Round | None:
    return rawsql.first(
        Round,
        f"table_id = %s AND status = '{RoundStatus.OPEN}'",
        [table.pk],
        order_by="opened_at DESC",
    )


def bets_resolve(*, user: AbstractBaseUser, mode: str, bets: Sequence[int]) -> tuple[int, ...]:
    """Seed 000 betting options: DEAL (the bets given), REBET & DEAL, DOUBLE BET & DEAL."""
    if mode == "bet":
        return tuple(bets)
    prefs = PlayerPreferences.objects.filter(user_id=user.pk).first()
    last = tuple(int(b) for b in (prefs.last_bet if prefs else []))
    if not last:
        raise ConflictError("There is no previous bet to repeat.", code="no_previous_bet")
    return last if mode == "rebet" else tuple(2 * b for b in last)


class _DealHook:
    """DEAL's own work in the round's transaction (the last bet), around the caller's hook."""

    def __init__(
        self,
        user: AbstractBaseUser,
        amounts: tuple[int, ...],
        hook: services.CommandHook | None,
        opens: bool = False,
    ) -> None:
        self.user, self.amounts, self.hook = user, amounts, hook
        # This DEAL opens the round: the open read (or made) the player's preferences row in
        # this transaction, so the last bet's UPDATE finds it and can go out with the
        # command's last write (rawsql.later) instead of in a round trip of its own.
        self.opens = opens

    def begin(self) -> None:
        if self.hook is not None:
            self.hook.begin()

    def commit(self, result: services.RoundResult) -> None:
        last_bet = list(self.amounts)  # the open made the row; a first bet elsewhere may not
        if self.opens:
            rawsql.later(*_last_bet_update(int(self.user.pk), last_bet))
        elif not _last_bet_set(int(self.user.pk), last_bet):
            PlayerPreferences.objects.update_or_create(
                user_id=self.user.pk, defaults={"last_bet": last_bet}
            )
        if self.hook is not None:
            self.hook.commit(result)

    def refuse(self, error: ApplicationError) -> None:
        if self.hook is not None:
            self.hook.refuse(error)


def table_deal(
    *,
    table: Table,
    user: AbstractBaseUser,
    mode: str,
    bets: Sequence[int],
    hook: services.CommandHook | None = None,
    open_round_id: str | Literal[False] | None = False,
) -> services.RoundResult:
    """Place the player's bet, opening the table's next round first when none is open.

    One transaction (`services.round_deal`): the checks, the open, the bet and the player's
    last bet (REBET) commit together, or nothing does. `open_round_id`: the table's open
    round as the caller just read it (`table_and_open_round`; None: none), else it is read.
    """
    rules = RULESETS[table.ruleset]
    if rules.kind != BANKED:
        raise ConflictError(
            "A duel has a fixed stake: say READY instead of betting.", code="action_not_allowed"
        )
    deal_hook = _DealHook(user, (), hook)
    seated: list[int] = []  # the seated players' ids, in seat order

    def bet() -> PlaceBet:  # inside the transaction, after the caller's hook began it
        if table.owner_id is not None and table.owner_id != user.pk:
            raise ApplicationError(
                "This is another player's personal table.",
                code="permission_denied",
                status_code=403,
            )
        seated[:] = _seated_ids(table.pk)  # one read: the check, and the players to open for
        if user.pk not in seated:
            raise ConflictError("Sit at the table first.", code="not_seated")
        amounts = bets_resolve(user=user, mode=mode, bets=bets)
        if len(amounts) > rules.max_boxes:
            raise ApplicationError(
                f"{table.ruleset} has at most {rules.max_boxes} betting boxes.",
                code="too_many_boxes",
            )
        needed = sum(amounts)
        available = wallet_balances(user_id=int(user.pk))["player_available"]
        if needed > available:
            raise ConflictError(
                "Insufficient funds for this bet.",
                code="insufficient_funds",
                extra={"needed": needed, "available": available},
            )
        deal_hook.amounts = amounts
        return PlaceBet(player_id=str(user.pk), amounts=amounts)

    def players() -> list[int]:  # after bet(), in the same transaction
        return list(seated)

    if open_round_id is False:
        current = open_round_at(table)
        open_round_id = current.id if current is not None else None
    deal_hook.opens = open_round_id is None
    return services.round_deal(
        table=table,
        round_id=open_round_id,
        bet=bet,
        players=players,
        hook=deal_hook,
    )


def _lobby_key(table_id: int) -> str:
    return f"casino:lobby:{table_id}"


def lobby_deadline(table: Table) -> int | None:
    """When the duel lobby timer of `table` ends (epoch ms), or None when none runs."""
    value = cache.get(_lobby_key(table.pk))
    return int(value) if value is not None else None


def seat_ready(*, table: Table, user: AbstractBaseUser, ready: bool = True) -> Round | None:
    """Duel: say READY (or not). Returns the round if this started one."""
    if RULESETS[table.ruleset].kind != DUEL:
        raise ConflictError("READY is for duel tables.", code="action_not_allowed")
    seat = _seated(table, user)
    with transaction.atomic(durable=True):
        Seat.objects.filter(pk=seat.pk).update(ready=ready)
    return lobby_check(table=table)


def schedule_lobby(*, table_id: int, deadline_ms: int) -> None:
    """Nudge the lobby when its timer ends (the sweeps catch it if this is lost)."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return  # no broker: the in-process timers sweep the lobby
    delay = max(0.0, deadline_ms / 1000 - time.time())
    # By name: the task's module (casino.tables.timers) calls this one's lobby_check.
    current_app.send_task("casino.lobby_nudge", kwargs={"table_id": table_id}, countdown=delay)


def lobby_check(*, table: Table, at_ms: int | None = None) -> Round | None:
    """Start the duel when every seat is ready, or when the lobby timer ended with >= 2 ready.

    Idempotent: a late or repeated check after the round started changes nothing.
    """
    now = at_ms if at_ms is not None else int(time.time() * 1000)
    if open_round_at(table) is not None:
        return None
    ready = list(
        Seat.objects.filter(table=table, ready=True).select_related("user").order_by("position")
    )
    if len(ready) < RULESETS[table.ruleset].min_seats:
        cache.delete(_lobby_key(table.pk))
        return None
    deadline = lobby_deadline(table)
    if len(ready) < table.seats:
        if deadline is None:
            deadline = now + LOBBY_MS
            if cache.add(_lobby_key(table.pk), deadline, timeout=LOBBY_MS // 1000 + 60):
                schedule_lobby(table_id=table.pk, deadline_ms=deadline)
            return None
        if now < deadline:
            return None
    return lobby_start(table=table, players=[s.user for s in ready])


def lobby_start(*, table: Table, players: Sequence[AbstractBaseUser]) -> Round | None:
    """Open the duel for `players`; their READY is spent (they say it again next round)."""
    cache.delete(_lobby_key(table.pk))
    with transaction.atomic(durable=True):
        # Only the writer that clears the ready flags opens the round: a duplicate nudge is a no-op.
        cleared = Seat.objects.filter(
            table=table, user_id__in=[p.pk for p in players], ready=True
        ).update(ready=False)
    if cleared < len(players):
        return None
    result = services.round_open(table=table, players=players)
    return result.round
