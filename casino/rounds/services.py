"""The round service: the one path every round command takes (HTTP, WebSocket, Celery, CLI).

Inside one `transaction.atomic(durable=True)`, in order:
1. load the round's events and fold them (`replay`);
2. apply any expired deadline (`expire`);
3. `decide` the command;
4. when the round just ended, reveal its server seed (a `ServerSeedRevealed` event);
5. append the new events (optimistic concurrency on (stream, version));
6. post the ledger legs those events imply (`casino.rounds.money`);
7. update the read models (`casino.rounds.projections`) and, at the end, sign the receipt;
8. after commit (`_after_commit`): push every viewer's view (`casino.rounds.publish`), run the
   observers of other apps (below: the dashboard's), nudge the next deadline
   (`casino.rounds.publish`).

A caller may add its own work to that transaction with a `CommandHook` (the Idempotency-Key's
record: its first write, and the stored answer, commit or roll back with the command). DEAL
(`round_deal`) opens a round and places the bet in one transaction.

An app above this one that must follow every command of some kind (the dashboard's stats rows
and flags) registers an observer from its `AppConfig.ready`, naming the event types it follows:
`add_in_transaction` (called inside the command's transaction with its new events; a failure
fails the command), `add_after_commit` (called once it committed; a failure is logged). A
command that appended none of those types does not call it.

A domain error is the player's mistake: nothing is written except the events of a deadline
that had already expired. Any other exception is a malfunction: the transaction rolls back,
and the round is voided in a new transaction with the error as evidence, so it is never left
stuck (seed 000: "Malfunction voids all pays and plays").
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Protocol

from django.contrib.auth.models import AbstractBaseUser
from django.db import connection, transaction

from casino.engine.commands import (
    Command,
    OpenRound,
    PlaceBet,
    RecordBeacon,
    RevealSeed,
    Timeout,
    VoidRound,
)
from casino.engine.decider import command_time, step
from casino.engine.errors import DomainError
from casino.engine.events import Event, Participant, RoundOptions, event_to_dict
from casino.engine.evolve import BEACON, RoundState
from casino.engine.rules import RULESETS
from casino.eventstore.models import StoredEvent
from casino.eventstore.store import ConcurrencyError, NewEvent, append
from casino.models import PlayerPreferences, Round, Table, TableStatus
from casino.platform import layersend, rawsql
from casino.platform.errors import ApplicationError, NotYours
from casino.rounds import money as roundmoney
from casino.rounds import projections, publish, seeds
from casino.rounds.stream import round_load
from fairness import beaconsource
from fairness.models import ClientSeed

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 1  # of the stored event data (fairness.bundle.EVENT_SCHEMA_VERSION)
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


Observer = Callable[[str, RoundState, Sequence[StoredEvent]], None]
_in_transaction: list[tuple[Observer, frozenset[str]]] = []
_after_commit_observers: list[tuple[Observer, frozenset[str]]] = []


def add_in_transaction(observer: Observer, *, types: Iterable[str]) -> None:
    """Call `observer(round_id, state, events)` inside each command's transaction that
    appends an event of one of `types` (a failure fails the command: nothing commits)."""
    if all(found is not observer for found, _ in _in_transaction):
        _in_transaction.append((observer, frozenset(types)))


def add_after_commit(observer: Observer, *, types: Iterable[str]) -> None:
    """Call `observer(round_id, state, events)` once a command that appended an event of one
    of `types` committed (a failure is logged; the round stays committed)."""
    if all(found is not observer for found, _ in _after_commit_observers):
        _after_commit_observers.append((observer, frozenset(types)))


def _following(
    registered: Sequence[tuple[Observer, frozenset[str]]], events: Sequence[StoredEvent]
) -> list[Observer]:
    """The observers, in registration order, that follow a type among `events`."""
    if not registered:
        return []
    appended = {e.type for e in events}
    return [observer for observer, types in registered if not types.isdisjoint(appended)]


def observers_in_transaction(
    *, round_id: str, state: RoundState, events: Sequence[StoredEvent]
) -> None:
    """Inside the command's transaction: the observers that follow one of its new events."""
    for observer in _following(_in_transaction, events):
        observer(round_id, state, events)


def now_ms() -> int:
    return int(time.time() * 1000)


def event_to_new(event: Event) -> NewEvent:
    data = event_to_dict(event)
    del data["type"]
    return NewEvent(type=event.type, data=data, schema_version=SCHEMA_VERSION)


def domain_error_to_application(error: DomainError) -> ApplicationError:
    status_code = 409 if error.code in CONFLICT_CODES else 400
    return ApplicationError(error.message, code=error.code, status_code=status_code)


UserRef = AbstractBaseUser | int  # a user, or its primary key (a seat's user_id)


def _user_pk(user: UserRef) -> int:
    return user if isinstance(user, int) else int(user.pk)


def _preferences(user: UserRef) -> PlayerPreferences:
    found = rawsql.first(PlayerPreferences, "user_id = %s", [_user_pk(user)])
    if found is not None:
        return found
    prefs, _ = PlayerPreferences.objects.get_or_create(user_id=_user_pk(user))
    return prefs


_PREFERENCES_AND_SEED: list[str] = []


def _preferences_and_seed(user_pk: int) -> tuple[PlayerPreferences, str]:
    """The player's preferences and client seed, read in one statement (each is created on
    first use, as `_preferences` and `seeds.client_seed_of` do)."""
    if not _PREFERENCES_AND_SEED:
        qn = connection.ops.quote_name
        meta = PlayerPreferences._meta
        columns = ", ".join(f"p.{qn(f.column)}" for f in meta.concrete_fields)
        _PREFERENCES_AND_SEED.append(
            f"SELECT {columns}, (SELECT c.seed FROM {ClientSeed._meta.db_table} c "
            f"WHERE c.user_id = p.user_id) FROM {meta.db_table} p WHERE p.user_id = %s"
        )
    row = rawsql.fetch_one(_PREFERENCES_AND_SEED[0], [user_pk])
    prefs = rawsql.instance(PlayerPreferences, row) or _preferences(user_pk)
    seed = row[-1] if row is not None else None
    return prefs, seed if seed is not None else seeds.client_seed_of(user_pk)


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
            prefs, client_seed = _preferences_and_seed(_user_pk(user))
            participants.append(
                Participant(
                    player_id=str(_user_pk(user)),
                    client_seed=client_seed,
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
            # shared tables (fairness-v2): the deal of two or more seats waits for the beacon
            beacon=beaconsource.spec() if RULESETS[table.ruleset].max_seats >= 2 else None,
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
    participant: int | None = None,
) -> RoundResult:
    """Apply one player or clock command to a round through the service path.

    `participant`: the user the command must come from a seat of. The round's row is then
    locked only if that user plays in it (one statement for both): otherwise a 404 (no such
    round) or a 403 (`not_a_participant`), raised inside the transaction, so the hook's
    writes roll back with it.
    """
    return _run(round_id, lambda state: command, at_ms, hook=hook, participant=participant)


def round_timeout(*, round_id: str, at_ms: int | None = None) -> RoundResult:
    """The timer nudge: apply whatever an expired deadline implies (nothing if none)."""
    return _run(round_id, lambda state: Timeout(), at_ms)


def round_record_beacon(
    *, round_id: str, beacon_round: int, signature: str, at_ms: int | None = None
) -> RoundResult:
    """Record beacon round `beacon_round` (its signature, already verified by
    `fairness.beaconsource`) in the round that waits for it, and deal."""
    return _run(round_id, lambda state: RecordBeacon(beacon_round, signature), at_ms)


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
    participant: int | None = None,
) -> RoundResult:
    """Retry on a concurrent writer; void the round on a malfunction."""
    for attempt in range(CONCURRENCY_RETRIES):
        try:
            at = at_ms if at_ms is not None else now_ms()
            return _execute(
                round_id,
                build,
                at,
                table,
                hook=hook,
                then=then,
                participant=participant,
                wall_clock=at_ms is None,
            )
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
            wall_clock=True,
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
    participant: int | None = None,
    wall_clock: bool = False,
) -> RoundResult:
    """One command in one transaction. `wall_clock`: `at` is this machine's clock, which may
    step back (NTP): the command is then timed no earlier than the round's last command, and
    its events are recorded no earlier than the round's last event (or, for a new round, the
    last event of the round before it on the seed chain), so times never run backwards
    within a round nor from one round's seed reveal to the next round's open (the verifier
    checks both: fairness-v1 section 6)."""
    pending_error: DomainError | None = None
    # The writes queued with `rawsql.later` (the round's projection UPDATE, the log's leaves)
    # go out with the hook's last write, else at the block's end; a failing command forgets them.
    with transaction.atomic(durable=True), rawsql.queued_block():
        if hook is not None:
            hook.begin()  # the caller's first write (it may end the transaction here)
        row: Round | None = None
        state: RoundState | None
        if table is None:
            # Commands on one round queue on its row instead of racing to a version conflict;
            # the unique (stream, version) still guards any writer that skips this lock. The
            # locked row is also the projection `project` updates (it is not read again).
            if participant is None:
                row = rawsql.first(Round, "id = %s", [round_id], lock=True)
            else:
                row = rawsql.first(Round, _PLAYED_WHERE, [round_id, participant], lock=True)
                if row is None:
                    raise _not_played(round_id)
            folded = _folded_get(round_id, row.version) if row is not None else None
            if folded is not None:
                stored, state = list(folded.stored), folded.state
            else:
                stored, state = round_load(round_id=round_id)
            if state is None:
                raise ApplicationError(f"No round {round_id}.", code="not_found", status_code=404)
        else:
            stored, state = [], None  # a new round: its id is a fresh uuid, nothing to load
        previous = state
        not_before = stored[-1].recorded_at if stored else None
        if wall_clock and state is not None:
            at = max(at, _last_command_time(stored, state))
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
                not_before = _chain_last_recorded(command.chain_id, command.nonce)
            elif isinstance(command, RecordBeacon) and state is not None:
                shoe = seeds.shoe_for_beacon(state, command)
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
            head_hash=stored[-1].hash if stored else None,
            not_before=not_before,
        )
        if table is not None and appended:  # a new round: its open goes into the public log
            seeds.opened_log(round_id=round_id, opened=state.opened, event=appended[0])
        if any(isinstance(e, roundmoney.POSTED) for e in new):  # else no money moves
            roundmoney.post_legs(round_id=round_id, state=state, events=new, stored=appended)
        projection = projections.project(
            round_id=round_id,
            state=state,
            version=len(stored) + len(appended),
            table=table,
            row=row,
            previous=previous,
            queue=True,  # the row's UPDATE goes out with the answer's (or at the end)
        )
        if appended and state.finished and _proof_changes(appended):
            revealed_now = any(e.type == "ServerSeedRevealed" for e in appended)
            seeds.receipt_store(round_id=round_id, stored=[*stored, *appended], first=revealed_now)
        if appended:
            _chain_mark(state, appended)
            observers_in_transaction(round_id=round_id, state=state, events=appended)
            transaction.on_commit(partial(_after_commit, round_id, state, tuple(appended)))
            _folded_keep(round_id, (*stored, *appended), state)
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


def _after_commit(round_id: str, state: RoundState, events: Sequence[StoredEvent]) -> None:
    """What a committed command does outside its transaction. A failure here is logged and
    never undoes the round: a client that missed a push resumes from the event store, and a
    lost nudge is caught by the deadline sweep."""
    try:
        with layersend.batched():  # every push of the command goes out together, in order
            for push in (publish.publish_round, *_following(_after_commit_observers, events)):
                try:
                    push(round_id, state, events)
                except Exception:
                    logger.exception("publishing round %s failed (%s)", round_id, push.__name__)
    except Exception:  # the batch's delivery failed
        logger.exception("publishing round %s failed", round_id)
    publish.after_commit(round_id, None if state.finished else state.deadline_ms)
    if state.phase == BEACON:  # fetch the beacon round once it is due (the sweep retries)
        publish.beacon_after_commit(round_id, state.opened, state.beacon_round)


def _last_command_time(stored: Sequence[StoredEvent], state: RoundState) -> int:
    """The time of the round's last timed command, as its events record it."""
    for event in reversed(stored):
        at = command_time(event.type, event.data, state.rules)
        if at is not None:
            return at
    return 0


# chain id -> (nonce, when that round recorded its last event), as this process appended it:
# the round after it on the chain, opened by this process, needs no read for it.
_chain_marks: OrderedDict[str, tuple[int, datetime]] = OrderedDict()
_CHAIN_MARKS_KEPT = 4096


def _chain_mark(state: RoundState, appended: Sequence[StoredEvent]) -> None:
    if appended and state.finished:
        _chain_marks[state.opened.chain_id] = (state.opened.nonce, appended[-1].recorded_at)
        _chain_marks.move_to_end(state.opened.chain_id)
        if len(_chain_marks) > _CHAIN_MARKS_KEPT:
            _chain_marks.popitem(last=False)


def _chain_last_recorded(chain_id: str, nonce: int) -> datetime | None:
    """When the round before this one on the seed chain recorded its last event (its seed
    reveal, or a later void), or None for a chain's first round. A later void of that round
    recorded elsewhere is missed by this process's mark: harmless, the reveal came first."""
    if nonce <= 1:
        return None
    mark = _chain_marks.get(chain_id)
    if mark is not None and mark[0] == nonce - 1:
        return mark[1]
    previous = Round.objects.filter(chain_id=chain_id, nonce=nonce - 1).values_list("pk")[:1]
    last: datetime | None = (
        StoredEvent.objects.filter(stream_id__in=previous)
        .order_by("-version")
        .values_list("recorded_at", flat=True)
        .first()
    )
    return last


# The round's row, locked only if `participant` has a seat in it (rawsql.first's WHERE).
_PLAYED_WHERE = (
    "id = %s AND EXISTS (SELECT 1 FROM casino_roundplayer p "
    "WHERE p.round_id = casino_round.id AND p.user_id = %s)"
)


def _not_played(round_id: str) -> NotYours:
    """No round a participant may command: 404 if none has this id, else 403."""
    if not Round.objects.filter(pk=round_id).exists():
        return NotYours("No such round.", code="not_found", status_code=404)
    return NotYours("You do not play in this round.", code="not_a_participant", status_code=403)


@dataclass(frozen=True, slots=True)
class _Folded:
    version: int
    stored: tuple[StoredEvent, ...]
    state: RoundState


# The last committed state of recently commanded rounds, per process. A command uses it only
# when the round's locked row is at the same version: events are immutable and every append
# goes through this path (under that lock, with the row's version in the same transaction),
# so equal versions mean equal streams. Anything else (another process's command, a rolled
# back one, an evicted round) reads and folds the events as before.
FOLDED_MAX = 2048
_folded: OrderedDict[str, _Folded] = OrderedDict()
_folded_lock = threading.Lock()


def _folded_get(round_id: str, version: int) -> _Folded | None:
    with _folded_lock:
        found = _folded.get(round_id)
        if found is None or found.version != version:
            return None
        _folded.move_to_end(round_id)
        return found


def _folded_keep(round_id: str, stored: tuple[StoredEvent, ...], state: RoundState) -> None:
    """After the commit (never for a rolled back command): remember the round's new state;
    a finished round is forgotten (a later void reads its events)."""
    folded = _Folded(len(stored), stored, state)

    def keep() -> None:
        with _folded_lock:
            if state.finished:
                _folded.pop(round_id, None)
                return
            known = _folded.get(round_id)
            if known is not None and known.version >= folded.version:
                return  # a later command's state got here first
            _folded[round_id] = folded
            _folded.move_to_end(round_id)
            while len(_folded) > FOLDED_MAX:
                _folded.popitem(last=False)

    transaction.on_commit(keep)
