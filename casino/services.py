"""The round service: the one path every round command takes (HTTP, WebSocket, Celery, CLI).

Inside one `transaction.atomic(durable=True)`, in order:
1. load the round's events and fold them (`replay`);
2. apply any expired deadline (`expire`);
3. `decide` the command;
4. when the round just ended, reveal its server seed (a `ServerSeedRevealed` event);
5. append the new events (optimistic concurrency on (stream, version));
6. post the ledger legs those events imply (`casino.roundmoney`);
7. update the read models (`casino.projections`) and, at the end, sign the receipt;
8. on commit: publish to the table's viewers and schedule the next timer nudge.

A caller may add its own work to that transaction with a `CommandHook` (the Idempotency-Key's
record: its first write, and the stored answer, commit or roll back with the command). DEAL
(`round_deal`) opens a round and places the bet in one transaction.

A domain error is the player's mistake: nothing is written except the events of a deadline
that had already expired. Any other exception is a malfunction: the transaction rolls back,
and the round is voided in a new transaction with the error as evidence, so it is never left
stuck (seed 000: "Malfunction voids all pays and plays").
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from casino import notify, projections, rawsql, roundmoney, seeds
from casino.engine.commands import Command, OpenRound, PlaceBet, RevealSeed, Timeout, VoidRound
from casino.engine.decider import step
from casino.engine.errors import DomainError
from casino.engine.events import Event, Participant, RoundOptions, event_from_dict, event_to_dict
from casino.engine.rules import RULESETS
from casino.engine.state import RoundState
from casino.errors import ApplicationError
from casino.eventstore.models import StoredEvent
from casino.eventstore.store import ConcurrencyError, NewEvent, append, load
from casino.models import PlayerPreferences, Round, Table, TableStatus

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 1
CONCURRENCY_RETRIES = 3

# Domain error code -> HTTP status (409: the state does not allow it now; 400: bad input).
CONFLICT_CODES = frozenset(
    {
        "not_your_turn",
        "round_finished",
        "deadline_passed",
        "already_bet",
        "already_voided",
        "round_already_open",
        "round_not_open",
        "round_not_finished",
        "seed_already_revealed",
        "action_not_allowed",
    }
)


@dataclass(frozen=True, slots=True)
class RoundResult:
    """What one command did: the round's projection, its folded state and the new events."""

    round: Round
    state: RoundState
    events: list[StoredEvent]


class HookExit(Exception):
    """Raised by a hook's `begin` to leave the transaction without running the command.

    The transaction rolls back (nothing was written) and the exception reaches the caller as
    it is: no retry, no malfunction void.
    """


class CommandHook(Protocol):
    """A caller's work inside the command's own transaction (e.g. its Idempotency-Key)."""

    def begin(self) -> None:
        """The first statement of the transaction (each attempt); may raise `HookExit`."""

    def commit(self, result: RoundResult) -> None:
        """The last work before the commit of a command that succeeded."""

    def refuse(self, error: ApplicationError) -> None:
        """The command is refused but the transaction commits (an expired deadline's events)."""


def now_ms() -> int:
    return int(time.time() * 1000)


def domain_error_to_application(error: DomainError) -> ApplicationError:
    status_code = 409 if error.code in CONFLICT_CODES else 400
    return ApplicationError(error.message, code=error.code, status_code=status_code)


def stored_to_event(stored: StoredEvent) -> Event:
    return event_from_dict({**stored.data, "type": stored.type})


def event_to_new(event: Event) -> NewEvent:
    data = event_to_dict(event)
    del data["type"]
    return NewEvent(type=event.type, data=data, schema_version=SCHEMA_VERSION)


def round_load(*, round_id: str) -> tuple[list[StoredEvent], RoundState | None]:
    """A round's stored events and the state folded from them (None: no such round)."""
    from casino.engine.decider import replay

    stored = load(round_id)
    if not stored:
        return stored, None
    return stored, replay(stored_to_event(e) for e in stored)


UserRef = AbstractBaseUser | int  # a user, or its primary key (a seat's user_id)


def _user_pk(user: UserRef) -> int:
    return user if isinstance(user, int) else int(user.pk)


def _preferences(user: UserRef) -> PlayerPreferences:
    found = rawsql.first(PlayerPreferences, "user_id = %s", [_user_pk(user)])
    if found is not None:
        return found
    prefs, _ = PlayerPreferences.objects.get_or_create(user_id=_user_pk(user))
    return prefs


def _options(table: Table) -> RoundOptions:
    return RoundOptions(
        min_bet=table.min_bet, max_bet=table.max_bet, chip_unit=table.chip_unit, stake=table.stake
    )


def _open_checks(table: Table) -> None:
    if table.status != TableStatus.OPEN:
        raise ApplicationError(
            "This table is closed to new rounds.", code="table_closed", status_code=409
        )
    if table.ruleset not in RULESETS:
        raise ApplicationError(f"Unknown rule set {table.ruleset!r}.", code="invalid_table")


def _opening(
    table: Table, round_id: str, players: Callable[[], Sequence[UserRef]]
) -> Callable[[RoundState | None], Command]:
    def build(state: RoundState | None) -> Command:
        issued = seeds.seed_issue(table_id=str(table.pk))
        participants = []
        for user in players():
            prefs = _preferences(user)
            participants.append(
                Participant(
                    player_id=str(_user_pk(user)),
                    client_seed=seeds.client_seed_of(_user_pk(user)),
                    offer_insurance=prefs.offer_insurance,
                    safety_net=prefs.safety_net,
                )
            )
        return OpenRound(
            round_id=round_id,
            table_id=str(table.pk),
            ruleset=table.ruleset,
            chain_id=issued.chain_id,
            nonce=issued.nonce,
            commitment=issued.commitment,
            participants=tuple(participants),
            options=_options(table),
        )

    return build


def round_open(
    *, table: Table, players: Sequence[AbstractBaseUser], at_ms: int | None = None
) -> RoundResult:
    """Open a round at `table` for `players` (seat order), committing to its server seed."""
    _open_checks(table)
    round_id = str(uuid.uuid4())
    return _run(round_id, _opening(table, round_id, lambda: players), at_ms, table=table)


def round_deal(
    *,
    table: Table,
    round_id: str | None,
    bet: Callable[[], PlaceBet],
    players: Callable[[], Sequence[UserRef]],
    hook: CommandHook | None = None,
    at_ms: int | None = None,
) -> RoundResult:
    """DEAL in one transaction: the bet on the open round `round_id`, or (None) on a new one.

    `bet()` runs inside the transaction, after the hook's `begin` and before anything else,
    so its checks see what the transaction sees and a refusal changes nothing. Without an
    open round, a round is opened for `players()` and the bet placed in it, in the same
    transaction: a refused bet (or a malfunction) leaves no round behind. A malfunction of a
    bet on an already open round voids that round, as any command's does.
    """
    if round_id is not None:
        return _run(round_id, lambda state: bet(), at_ms, hook=hook)
    _open_checks(table)
    new_id = str(uuid.uuid4())
    opening = _opening(table, new_id, players)
    placed: list[PlaceBet] = []

    def build(state: RoundState | None) -> Command:
        placed[:] = [bet()]  # the checks first: a refused DEAL opens nothing
        return opening(state)

    return _run(new_id, build, at_ms, table=table, then=lambda: placed[0], hook=hook)


def round_command(
    *,
    round_id: str,
    command: Command,
    at_ms: int | None = None,
    hook: CommandHook | None = None,
) -> RoundResult:
    """Apply one player or clock command to a round through the service path."""
    return _run(round_id, lambda state: command, at_ms, hook=hook)


def round_timeout(*, round_id: str, at_ms: int | None = None) -> RoundResult:
    """The timer nudge: apply whatever an expired deadline implies (nothing if none)."""
    return _run(round_id, lambda state: Timeout(), at_ms)


def round_void(
    *, round_id: str, reason: str, evidence: str = "", at_ms: int | None = None
) -> RoundResult:
    """Void a round (staff or malfunction): refunds every stake, reverses every payout."""
    if not reason.strip():
        raise ApplicationError("A void needs a written reason.", code="reason_required")
    return _run(
        round_id, lambda state: VoidRound(reason=reason, evidence=evidence), at_ms, is_void=True
    )


def _run(
    round_id: str,
    build: Callable[[RoundState | None], Command],
    at_ms: int | None,
    *,
    table: Table | None = None,
    is_void: bool = False,
    then: Callable[[], Command] | None = None,
    hook: CommandHook | None = None,
) -> RoundResult:
    """Retry on a concurrent writer; void the round on a malfunction."""
    for attempt in range(CONCURRENCY_RETRIES):
        try:
            at = at_ms if at_ms is not None else now_ms()
            return _execute(round_id, build, at, table, hook=hook, then=then)
        except ConcurrencyError:  # rolled back, the hook's writes too: the next attempt redoes all
            if attempt == CONCURRENCY_RETRIES - 1:
                raise
        except DomainError as error:
            raise domain_error_to_application(error) from error
        except (ApplicationError, HookExit):
            raise
        except Exception as exc:
            if is_void or table is not None:
                raise  # a failing void or open has nothing to void: surface it
            logger.exception("malfunction in round %s: voiding it", round_id)
            _void_after_malfunction(round_id, exc)
            raise ApplicationError(
                "The round hit a malfunction and was voided; every stake is refunded.",
                code="round_voided_malfunction",
                status_code=500,
                extra={"round": round_id},
            ) from exc
    raise AssertionError("unreachable")  # pragma: no cover


def _proof_changes(appended: Sequence[StoredEvent]) -> bool:
    """The round's proof is (re)written: at the seed reveal, and by a void after settlement."""
    return any(e.type in ("ServerSeedRevealed", "RoundVoided") for e in appended)


def _void_after_malfunction(round_id: str, exc: Exception) -> None:
    evidence = f"{type(exc).__name__}: {exc}"[:2000]
    try:
        _execute(
            round_id,
            lambda state: VoidRound(reason="malfunction", evidence=evidence),
            now_ms(),
            None,
        )
    except DomainError as error:  # already finished or voided: nothing left to void
        logger.warning("round %s not voided after malfunction: %s", round_id, error.code)


def _execute(
    round_id: str,
    build: Callable[[RoundState | None], Command],
    at: int,
    table: Table | None,
    *,
    hook: CommandHook | None = None,
    then: Callable[[], Command] | None = None,
) -> RoundResult:
    pending_error: DomainError | None = None
    with transaction.atomic(durable=True):
        if hook is not None:
            hook.begin()  # the caller's first write (it may end the transaction here)
        row: Round | None = None
        if table is None:
            # Commands on one round queue on its row instead of racing to a version conflict;
            # the unique (stream, version) still guards any writer that skips this lock. The
            # locked row is also the projection `project` updates (it is not read again).
            row = rawsql.first(Round, "id = %s", [round_id], lock=True)
            stored, state = round_load(round_id=round_id)
            if state is None:
                raise ApplicationError(f"No round {round_id}.", code="not_found", status_code=404)
        else:
            stored, state = [], None  # a new round: its id is a fresh uuid, nothing to load
        previous = state
        shoe = seeds.shoe_for(state) if state is not None else None
        new: list[Event] = []
        if state is not None:
            expired, state = step(state, Timeout(), at, shoe)
            new.extend(expired)
        deadline_passed = bool(new)
        command = build(state)
        if not isinstance(command, Timeout):
            if isinstance(command, OpenRound):
                shoe = seeds.shoe_for_open(command)
            try:
                events, state = step(state, command, at, shoe)
                new.extend(events)
                if then is not None:  # DEAL: the bet, in the round the open just made
                    events, state = step(state, then(), at, shoe)
                    new.extend(events)
            except DomainError as error:
                if not deadline_passed:
                    raise
                pending_error = error  # keep the expired deadline's events, then refuse
        assert state is not None
        if state.finished and state.server_seed is None:
            seed = seeds.seed_reveal(chain_id=state.opened.chain_id, nonce=state.opened.nonce)
            revealed, state = step(state, RevealSeed(server_seed=seed), at, None)
            new.extend(revealed)
        appended = append(
            stream_id=round_id,
            expected_version=len(stored),
            events=[event_to_new(e) for e in new],
        )
        roundmoney.post_legs(round_id=round_id, state=state, events=new, stored=appended)
        projection = projections.project(
            round_id=round_id,
            state=state,
            version=len(stored) + len(appended),
            table=table,
            row=row,
            previous=previous,
        )
        if appended and state.finished and _proof_changes(appended):
            seeds.receipt_store(round_id=round_id, stored=[*stored, *appended])
        if appended:
            notify.in_transaction(round_id=round_id, state=state, events=appended)
            notify.on_commit(round_id=round_id, state=state, events=appended)
        result = RoundResult(round=projection, state=state, events=appended)
        refused = None if pending_error is None else domain_error_to_application(pending_error)
        if hook is not None:  # last: the hook's answer commits with the command
            if refused is not None:
                hook.refuse(refused)
            else:
                hook.commit(result)
    if refused is not None:
        raise refused from pending_error
    return result


def round_state_for(*, round_id: str) -> RoundState:
    """The folded state of a round (404 if none)."""
    _, state = round_load(round_id=round_id)
    if state is None:
        raise ApplicationError(f"No round {round_id}.", code="not_found", status_code=404)
    return state
