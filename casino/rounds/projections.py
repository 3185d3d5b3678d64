"""Read models folded from the event store: the `Round` and `RoundPlayer` rows.

`project` is called by the round service inside its transaction with the state it just
folded; `rebuild_round` recomputes the same rows from the stored events alone, which is how
`rebuild_projections` proves the projections are only a cache of the events.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, cast

from django.db import connection, transaction

from casino.engine.evolve import SETTLED, VOIDED, RoundState
from casino.eventstore.models import StoredEvent
from casino.models import Round, RoundPlayer, RoundStatus, Table
from casino.platform import rawsql
from casino.rounds.stream import round_load

OUTCOME_MAX = 200


def _status(state: RoundState) -> str:
    if state.phase == VOIDED:
        return RoundStatus.VOIDED
    if state.phase == SETTLED:
        return RoundStatus.SETTLED
    return RoundStatus.OPEN


def _when(ms: int | None) -> datetime | None:
    return None if ms is None else datetime.fromtimestamp(ms / 1000, tz=UTC)


def _finished_ms(state: RoundState) -> int | None:
    if state.voided is not None:
        return state.voided.voided_at_ms
    if state.settlement is not None:
        return state.settlement.settled_at_ms
    return None


def player_money(state: RoundState) -> tuple[dict[str, int], dict[str, int]]:
    """Stake and gross return per player id (a void returns exactly the stakes)."""
    stakes: dict[str, int] = defaultdict(int)
    returns: dict[str, int] = defaultdict(int)
    for box in state.boxes:
        stakes[box.player_id] += box.insurance + sum(h.stake for h in box.hands)
    if state.voided is not None:
        return dict(stakes), dict(stakes)
    if state.settlement is not None:
        for results in (state.settlement.hands, state.settlement.insurance):
            for r in results:
                returns[r.player_id] += r.gross_return
    return dict(stakes), dict(returns)


def outcome_text(state: RoundState) -> str:
    """A short human summary: "voided: <reason>", or each hand's outcome."""
    if state.voided is not None:
        return f"voided: {state.voided.reason}"[:OUTCOME_MAX]
    if state.settlement is None:
        return ""
    parts = [f"{h.player_id}/{h.box}.{h.hand}:{h.outcome}" for h in state.settlement.hands]
    return " ".join(parts)[:OUTCOME_MAX]


class _Unknown:
    """Marks an argument the caller did not give: `project` then reads what it needs."""


UNKNOWN = _Unknown()


def _fields(state: RoundState, version: int) -> dict[str, Any]:
    o = state.opened
    stakes, returns = player_money(state)
    finished = _finished_ms(state)
    return {
        "table_id": int(o.table_id),
        "ruleset": o.ruleset,
        "status": _status(state),
        "phase": state.phase,
        "version": version,
        "chain_id": o.chain_id,
        "nonce": o.nonce,
        "commitment": o.commitment,
        "stake_total": sum(stakes.values()),
        "return_total": sum(returns.values()),
        "fee": state.settlement.fee if state.settlement is not None and state.voided is None else 0,
        "outcome": outcome_text(state),
        "deadline_ms": None if state.finished else state.deadline_ms,
        "opened_at": _when(o.opened_at_ms),
        "finished_at": _when(finished),
    }


def _seat_money(state: RoundState | None) -> list[tuple[int, int]]:
    """(stake, gross return) per seat, in seat order ([] before the round exists)."""
    if state is None:
        return []
    stakes, returns = player_money(state)
    return [
        (stakes.get(p.player_id, 0), returns.get(p.player_id, 0)) for p in state.opened.participants
    ]


def project(
    *,
    round_id: str,
    state: RoundState,
    version: int,
    table: Table | None = None,
    row: Round | _Unknown | None = UNKNOWN,
    previous: RoundState | _Unknown | None = UNKNOWN,
    queue: bool = False,
) -> Round:
    """Write the round's read model from its folded state (inside the caller's transaction).

    The round service passes what it already holds, so nothing is read again: `row`, the
    `Round` row it locked (None: there is none yet, it is created), and `previous`, the state
    the row was projected from (None: a new round). Then only the columns and seats that
    changed are written (nothing at all when nothing changed). Without them (a rebuild) the
    rows are read and every difference from the events is written. `queue`: the UPDATEs of
    an existing round's row and seats are queued (`rawsql.later`) to go out with the
    transaction's next flushing write; the caller flushes.
    """
    run: Callable[[str, Sequence[Any]], object] = rawsql.later if queue else rawsql.execute
    defaults = _fields(state, version)
    seats = _seat_money(state)
    if isinstance(row, _Unknown):
        round_row, created = Round.objects.update_or_create(id=round_id, defaults=defaults)
    elif row is None:  # a new round: the row and its seats, below in one raw statement
        round_row, created = Round(id=round_id, **defaults), True
    else:
        round_row, created = row, False
        changed = {k: v for k, v in defaults.items() if getattr(row, k) != v}
        if changed:
            _update_round(round_id, changed, run)
            for key, value in changed.items():
                setattr(row, key, value)
    if created:  # raw INSERTs (the ORM compiled them anew each time)
        if row is None:
            rawsql.insert_together([round_row], _seats(round_row, state, seats))
        else:
            rawsql.insert(_seats(round_row, state, seats))
        return round_row
    before = None if isinstance(previous, _Unknown) else _seat_money(previous)
    for seat, (stake, gross) in enumerate(seats):
        if before is not None and seat < len(before) and before[seat] == (stake, gross):
            continue  # the live path knows this seat's row already holds these amounts
        _update_seat(round_id, seat, stake, gross, run)
    return round_row


def _seats(round_row: Round, state: RoundState, seats: list[tuple[int, int]]) -> list[RoundPlayer]:
    """A new round's seat rows (their keys stay unknown: nothing reads them by key)."""
    return [
        RoundPlayer(
            round=round_row,
            user_id=int(p.player_id),
            seat=i,
            stake=seats[i][0],
            gross_return=seats[i][1],
        )
        for i, p in enumerate(state.opened.participants)
    ]


# The live path's two UPDATEs as raw statements, their SQL built once per set of columns:
# where the ORM would compile them anew for every command. Values still go through each
# field's `get_db_prep_save`, as the ORM's UPDATE does.
_ROUND_UPDATES: dict[tuple[str, ...], tuple[str, list[Any]]] = {}
_SEAT_UPDATE: list[str] = []


def _update_round(
    round_id: str, changed: dict[str, Any], run: Callable[[str, Sequence[Any]], object]
) -> None:
    names = tuple(changed)
    found = _ROUND_UPDATES.get(names)
    if found is None:
        qn = connection.ops.quote_name
        meta = Round._meta
        fields = [cast(Any, meta.get_field(name)) for name in names]  # name or attname
        sets = ", ".join(f"{qn(f.column)} = %s" for f in fields)
        sql = f"UPDATE {qn(meta.db_table)} SET {sets} WHERE {qn(meta.pk.column)} = %s"
        found = _ROUND_UPDATES[names] = (sql, fields)
    sql, fields = found
    params = [
        f.get_db_prep_save(changed[n], connection) for n, f in zip(names, fields, strict=True)
    ]
    run(sql, [*params, round_id])


def _update_seat(
    round_id: str, seat: int, stake: int, gross: int, run: Callable[[str, Sequence[Any]], object]
) -> None:
    """The seat's amounts, written only when they differ (as `.exclude(...).update(...)`)."""
    if not _SEAT_UPDATE:
        qn = connection.ops.quote_name
        meta = RoundPlayer._meta
        stake_c, gross_c = qn("stake"), qn("gross_return")
        _SEAT_UPDATE.append(
            f"UPDATE {qn(meta.db_table)} SET {stake_c} = %s, {gross_c} = %s "
            f"WHERE {qn(cast(Any, meta.get_field('round')).column)} = %s AND {qn('seat')} = %s "
            f"AND NOT ({stake_c} = %s AND {gross_c} = %s)"
        )
    run(_SEAT_UPDATE[0], [stake, gross, round_id, seat, stake, gross])


PROJECTED_FIELDS = (
    "table_id",
    "ruleset",
    "status",
    "phase",
    "version",
    "chain_id",
    "nonce",
    "commitment",
    "stake_total",
    "return_total",
    "fee",
    "outcome",
    "deadline_ms",
    "opened_at",
    "finished_at",
)


def _snapshot(round_id: str) -> dict[str, Any] | None:
    row = Round.objects.filter(id=round_id).values(*PROJECTED_FIELDS).first()
    if row is None:
        return None
    players = list(
        RoundPlayer.objects.filter(round_id=round_id)
        .order_by("seat")
        .values_list("user_id", "seat", "stake", "gross_return")
    )
    return {**row, "players": players}


def rebuild_round(round_id: str, *, write: bool = True) -> list[str]:
    """Refold one round from its events; return how the live projection differed (if at all)."""
    stored, state = round_load(round_id=round_id)
    if state is None:
        return [f"{round_id}: no events"]
    before = _snapshot(round_id)
    with transaction.atomic():
        project(round_id=round_id, state=state, version=len(stored))
        after = _snapshot(round_id)
        if not write:
            transaction.set_rollback(True)
    if before == after:
        return []
    if before is None or after is None:
        return [f"{round_id}: projection missing"]
    return [
        f"{round_id}: {key} was {before[key]!r}, events say {after[key]!r}"
        for key in before
        if before[key] != after[key]
    ]


def rebuild_all(
    *, write: bool = True, progress: Callable[[int, int], None] | None = None
) -> dict[str, Any]:
    """Rebuild (or with write=False only compare) every round's projection."""
    stream_ids = list(
        StoredEvent.objects.filter(type="RoundOpened")
        .order_by("position")
        .values_list("stream_id", flat=True)
    )
    problems: list[str] = []
    differences = 0
    for done, round_id in enumerate(stream_ids, start=1):
        found = rebuild_round(round_id, write=write)
        if found:
            differences += 1
            problems.extend(found)
        if progress is not None:
            progress(done, len(stream_ids))
    return {"rounds": len(stream_ids), "differences": differences, "problems": problems}
