"""The transparency log's server side: leaves queued by the game's transactions, one
sequencer that gives them indices and signs checkpoints, proofs from the stored tiles, and
the witnesses' cosignatures (docs/fairness.md, "Transparency log").

- A game transaction only queues its leaf (`queue_leaf`): one more row of `LogPending`, sent
  with the transaction's last write inside the round service's `rawsql.queued_block`.
- `sequence` runs in one transaction under the lock of the log's `LogState` row (taken
  with SKIP LOCKED: a second sequencer finds it busy and leaves), takes the pending leaves in
  the order they were queued, appends them to the tree (`fairness.tlog.append`, tiles of 256
  hashes), links the journal entries' hash chain (`JournalLink`), and signs a checkpoint.
- Proofs read O(log n) tiles in one query (`DbTiles`).
"""

from __future__ import annotations

import base64
import hashlib
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any

import orjson
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from casino.eventstore.models import format_recorded_at
from casino.platform import rawsql
from casino.platform.errors import ApplicationError
from fairness import note, tlog
from fairness.canonical import canonical_text
from fairness.models import (
    JournalLink,
    LogCheckpoint,
    LogCosignature,
    LogKey,
    LogLeaf,
    LogPending,
    LogState,
    LogTile,
    LogWitness,
)
from fairness.receipt import private_key_from_hex

logger = logging.getLogger(__name__)

LEAF_KINDS = ("round_opened", "round_receipt", "journal_entry")
CHAIN_START = "0" * 64  # the prev_hash of the journal's first link
BATCH = 20_000  # leaves per sequencer transaction


# --- leaves -------------------------------------------------------------------------------


def _pending_insert(items: dict[Any, tuple[str, str, str]]) -> tuple[str, list[Any]]:
    # queued_at: the database's clock (the transaction's start on PostgreSQL), not a datetime
    # adapted here per leaf: the cheapest honest time for a leaf's wait (/healthz).
    rows = list(items.values())
    sql = "INSERT INTO fairness_logpending (kind, ref, data, queued_at) VALUES " + ", ".join(
        ["(%s, %s, %s, CURRENT_TIMESTAMP)"] * len(rows)
    )
    return sql, [value for row in rows for value in row]


def queue_leaf(kind: str, ref: str, fields: Mapping[str, Any]) -> None:
    """Queue one leaf, the canonical JSON of `{"kind": kind, **fields}`, in the caller's
    transaction: it is sequenced only if that transaction commits."""
    if kind not in LEAF_KINDS:
        raise ValueError(f"unknown leaf kind {kind!r}")
    _queue(kind, ref, canonical_text({**fields, "kind": kind}))


def queue_receipt(*, round_id: str, receipt_text: str, signature: str, key_id: str) -> None:
    """The `round_receipt` leaf, around the receipt's canonical text already made for its
    signature (canonical JSON writes an object's members in key order, each as the value
    alone: tests check it equals `queue_leaf`'s text)."""
    data = (
        f'{{"key_id":{canonical_text(key_id)},"kind":"round_receipt","receipt":{receipt_text},'
        f'"round_id":{canonical_text(round_id)},"signature":{canonical_text(signature)}}}'
    )
    _queue("round_receipt", round_id, data)


def _queue(kind: str, ref: str, data: str) -> None:
    rawsql.write_soon("fairness.log.pending", _pending_insert, (kind, ref), (kind, ref, data))


def entry_time(value: datetime) -> str:
    """A journal entry's created_at as its canonical form writes it (UTC, microseconds)."""
    return format_recorded_at(value)


def journal_entry_hash(
    *, entry_id: int, kind: str, reference: str, created_at: datetime, postings: Mapping[str, int]
) -> str:
    """SHA-256 (hex) of a journal entry's canonical form with its postings: the canonical JSON
    of {"id", "kind", "reference", "created_at", "postings": [{"account", "amount"}...]}, the
    postings in the order of their account keys."""
    form = {
        "id": entry_id,
        "kind": str(kind),
        "reference": reference,
        "created_at": entry_time(created_at),
        "postings": [{"account": k, "amount": postings[k]} for k in sorted(postings)],
    }
    return hashlib.sha256(canonical_text(form).encode("utf-8")).hexdigest()


def queue_journal_entry(
    *, entry_id: int, kind: str, reference: str, created_at: datetime, postings: Mapping[str, int]
) -> None:
    """The `journal_entry` leaf of a new entry: its id, kind, time and hash (no amounts)."""
    digest = journal_entry_hash(
        entry_id=entry_id, kind=kind, reference=reference, created_at=created_at, postings=postings
    )
    queue_leaf(
        "journal_entry",
        str(entry_id),
        {
            "entry_id": entry_id,
            "entry_kind": str(kind),
            "created_at": entry_time(created_at),
            "sha256": digest,
        },
    )


def chain_hash(prev_hash: str, entry_hash: str) -> str:
    """The journal chain's hash after an entry: SHA-256 of the two hex hashes' bytes."""
    return hashlib.sha256(bytes.fromhex(prev_hash) + bytes.fromhex(entry_hash)).hexdigest()


# --- the stored tree ----------------------------------------------------------------------


class DbTiles:
    """`fairness.tlog.TileReader` over `LogTile`: one query per `read`."""

    def read(self, keys: Sequence[tlog.TileKey]) -> Mapping[tlog.TileKey, bytes]:
        if not keys:
            return {}
        where = " OR ".join(['(level = %s AND "index" = %s)'] * len(keys))
        rows = rawsql.query(
            f'SELECT level, "index", hashes FROM fairness_logtile WHERE {where}',
            [v for key in keys for v in key],
            lambda cursor: cursor.fetchall(),
        )
        return {(level, index): bytes(hashes) for level, index, hashes in rows}


def _write_tiles(changed: Mapping[tlog.TileKey, bytes]) -> None:
    LogTile.objects.bulk_create(
        [LogTile(level=level, index=index, hashes=h) for (level, index), h in changed.items()],
        update_conflicts=True,
        unique_fields=["level", "index"],
        update_fields=["hashes"],
    )


# --- keys and checkpoints ----------------------------------------------------------------


@dataclass(frozen=True)
class LogSigner:
    name: str
    key: Any  # Ed25519PrivateKey
    vkey: str
    key_id: str  # hex


@lru_cache(maxsize=4)
def _signer(private_key_hex: str, origin: str) -> LogSigner:
    key = private_key_from_hex(private_key_hex)
    vkey = note.make_vkey(origin, key.public_key().public_bytes_raw())
    return LogSigner(origin, key, vkey, note.parse_vkey(vkey).key_id.hex())


def signer() -> LogSigner:
    """The current checkpoint signer (settings.LOG_SIGNING_KEY, named by LOG_ORIGIN)."""
    return _signer(settings.LOG_SIGNING_KEY, settings.LOG_ORIGIN)


def _record_key(current: LogSigner) -> None:
    LogKey.objects.get_or_create(key_id=current.key_id, defaults={"vkey": current.vkey})


def verifiers() -> list[note.Verifier]:
    """Every checkpoint key the log ever signed with (old checkpoints verify after rotation)."""
    known = [note.parse_vkey(v) for v in LogKey.objects.values_list("vkey", flat=True)]
    current = note.parse_vkey(signer().vkey)
    return known if any(v.key_id == current.key_id for v in known) else [*known, current]


def _checkpoint(size: int, root: bytes) -> LogCheckpoint:
    current = signer()
    _record_key(current)
    body = note.checkpoint_body(settings.LOG_ORIGIN, size, root)
    text = note.sign_note(body, current.name, current.key)
    checkpoint, _ = LogCheckpoint.objects.update_or_create(
        size=size,
        defaults={
            "root": root.hex(),
            "note": text,
            "key_id": current.key_id,
            "created_at": timezone.now(),
        },
    )
    return checkpoint


# --- the sequencer ------------------------------------------------------------------------


@dataclass(frozen=True)
class Sequenced:
    """What one sequencer pass did (`busy`: another sequencer held the log)."""

    added: int
    size: int
    root: str
    busy: bool = False


def _state_locked() -> LogState | None:
    """The log's row under its lock, or None while another sequencer holds it. The row is made
    by the migration; a flushed database (tests) makes it again on first use."""
    if not LogState.objects.filter(id=1).exists():
        LogState.objects.get_or_create(id=1)
    return LogState.objects.select_for_update(skip_locked=True).filter(id=1).first()


def sequence(*, batch: int = BATCH) -> Sequenced:
    """Give the pending leaves their indices, in the order they were queued, extend the tree
    and sign a checkpoint at the new size. One pass takes at most `batch` leaves."""
    with transaction.atomic(durable=True):
        state = _state_locked()
        if state is None:
            return Sequenced(0, -1, "", busy=True)
        pending = _take_pending(batch)
        if not pending:
            if not LogCheckpoint.objects.filter(size=state.size).exists():
                root = bytes.fromhex(state.root) if state.root else tlog.root_of([])
                _checkpoint(state.size, root)  # the empty log's first checkpoint too
            return Sequenced(0, state.size, state.root or tlog.root_of([]).hex())
        start = state.size
        hashes = [tlog.leaf_hash(row[3].encode("utf-8")) for row in pending]
        changed, root = tlog.append(start, DbTiles(), hashes)
        _write_tiles(changed)
        now = timezone.now()
        rawsql.copy_rows(
            LogLeaf._meta.db_table,
            ["index", "kind", "ref", "data", "queued_at", "sequenced_at"],
            [
                (start + i, kind, ref, data, at, now)
                for i, (_, kind, ref, data, at) in enumerate(pending)
            ],
        )
        _link_journal(start, pending)
        state.size = start + len(pending)
        state.root = root.hex()
        state.sequenced_at = now
        state.save(update_fields=["size", "root", "sequenced_at"])
        _checkpoint(state.size, root)
        return Sequenced(len(pending), state.size, state.root)


_TAKE = (
    "DELETE FROM fairness_logpending WHERE id IN "
    "(SELECT id FROM fairness_logpending ORDER BY id LIMIT %s) "
    "RETURNING id, kind, ref, data, CAST(queued_at AS TEXT)"
)


def _take_pending(batch: int) -> list[tuple[Any, ...]]:
    """The oldest `batch` queued leaves, taken off the queue in one statement (the caller
    holds the log's lock: no other sequencer takes them), in the order they were queued.
    Their times stay the database's text: they are written back, never read here."""
    rows = rawsql.query(_TAKE, [batch], lambda cursor: cursor.fetchall())
    return sorted(rows, key=lambda row: row[0])


def _link_journal(start: int, pending: Sequence[tuple[Any, ...]]) -> None:
    entries = [(start + i, row) for i, row in enumerate(pending) if row[1] == "journal_entry"]
    if not entries:
        return
    last = JournalLink.objects.order_by("-seq").values_list("seq", "chain_hash").first()
    seq, prev = last if last is not None else (0, CHAIN_START)
    links = []
    for index, row in entries:
        leaf = orjson.loads(row[3])
        seq += 1
        link = chain_hash(prev, leaf["sha256"])
        links.append((int(leaf["entry_id"]), seq, leaf["sha256"], prev, link, index))
        prev = link
    columns = ["entry_id", "seq", "entry_hash", "prev_hash", "chain_hash", "log_index"]
    rawsql.copy_rows(JournalLink._meta.db_table, columns, links)


# --- reading the log ----------------------------------------------------------------------


def _bad(message: str, code: str, **extra: Any) -> ApplicationError:
    return ApplicationError(message, code=code, extra=extra)


def current_size() -> int:
    found = rawsql.fetch_one("SELECT size FROM fairness_logstate WHERE id = 1", [])
    return int(found[0]) if found is not None else 0


def latest_checkpoint() -> LogCheckpoint | None:
    return LogCheckpoint.objects.order_by("-size").first()


def checkpoint_text(checkpoint: LogCheckpoint) -> str:
    """The signed checkpoint as served: the log's signature, then every witness's."""
    lines = list(
        LogCosignature.objects.filter(size=checkpoint.size)
        .order_by("witness__name")
        .values_list("line", flat=True)
    )
    return checkpoint.note + "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def _size_in_log(size: int, *, name: str) -> None:
    have = current_size()
    if size < 0 or size > have:
        raise _bad(
            f"{name} must be between 0 and the log's size {have}.",
            "out_of_range",
            **{name: size, "log_size": have},
        )


def inclusion(index: int, size: int) -> list[str]:
    """The inclusion proof of leaf `index` in the tree of `size` leaves (base64 hashes)."""
    _size_in_log(size, name="size")
    if not 0 <= index < size:
        raise _bad("index must be below size.", "out_of_range", index=index, size=size)
    return [_b64(h) for h in tlog.inclusion_proof(index, size, DbTiles())]


def consistency(size1: int, size2: int) -> list[str]:
    """The consistency proof from the tree of `size1` leaves to the one of `size2`."""
    _size_in_log(size2, name="to")
    if not 0 <= size1 <= size2:
        raise _bad("from must be between 0 and to.", "out_of_range", **{"from": size1, "to": size2})
    return [_b64(h) for h in tlog.consistency_proof(size1, size2, DbTiles())]


MAX_LEAVES = 1000  # per /leaves request


def leaves(start: int, end: int) -> list[LogLeaf]:
    have = current_size()
    if not 0 <= start < end <= have or end - start > MAX_LEAVES:
        raise _bad(
            f"Leaves start <= i < end, within the log's size {have}, at most {MAX_LEAVES}.",
            "out_of_range",
            start=start,
            end=end,
            log_size=have,
        )
    return list(LogLeaf.objects.filter(index__gte=start, index__lt=end).order_by("index"))


def round_leaves(round_id: str) -> dict[str, Any]:
    """A round's leaf indices once sequenced: its round_opened and its receipts (a late void
    adds a second receipt), how many of its leaves still wait, and for how long at most."""
    rows = LogLeaf.objects.filter(ref=round_id).order_by("index").values_list("kind", "index")
    opened: int | None = None
    receipts: list[int] = []
    for kind, index in rows:
        if kind == "round_opened":
            opened = index
        elif kind == "round_receipt":
            receipts.append(index)
    pending = LogPending.objects.filter(ref=round_id).count()
    return {
        "round_opened": opened,
        "round_receipt": receipts,
        "pending": pending,
        "max_merge_delay_s": max_merge_delay_s(),
    }


def _b64(value: bytes) -> str:
    return base64.b64encode(value).decode("ascii")


# --- witnesses -----------------------------------------------------------------------------


def cosignature_add(*, size: int, line: str) -> tuple[LogCosignature, bool]:
    """Keep a witness's cosignature of the checkpoint at `size`. The line authenticates itself:
    it must verify under a registered witness's cosigner key. (cosignature, created)."""
    checkpoint = LogCheckpoint.objects.filter(size=size).first()
    if checkpoint is None:
        raise ApplicationError(
            f"No checkpoint at size {size}.",
            code="not_found",
            status_code=404,
            extra={"size": size},
        )
    body = checkpoint.note.split("\n\n", 1)[0] + "\n"
    name = line.removeprefix("\u2014 ").split(" ", 1)[0]
    witness = LogWitness.objects.filter(name=name, active=True).first()
    if witness is None:
        raise ApplicationError(
            f"No active witness named {name!r}.",
            code="unknown_witness",
            status_code=403,
            extra={"name": name},
        )
    try:
        timestamp = note.verify_cosignature(body, line, note.parse_vkey(witness.vkey))
    except ValueError as error:  # NoteError, or a malformed line's base64
        raise ApplicationError(
            f"The cosignature does not verify: {error}", code="bad_cosignature", status_code=403
        ) from error
    if abs(timestamp - time.time()) > 3600:
        raise ApplicationError(
            "The cosignature's time is more than an hour away from the server's.",
            code="bad_cosignature",
            status_code=403,
        )
    return LogCosignature.objects.get_or_create(
        witness=witness,
        size=size,
        defaults={"line": line if line.endswith("\n") else line + "\n", "timestamp": timestamp},
    )


def witness_status(*, stale_s: float = 3600.0) -> list[dict[str, Any]]:
    """Each witness with the last size it cosigned and whether it is overdue (no cosignature
    for `stale_s`, one hour by default: the dashboard's alarm)."""
    now = time.time()
    out = []
    for witness in LogWitness.objects.filter(active=True):
        last = witness.cosignatures.order_by("-size").first()
        age = None if last is None else now - last.received_at.timestamp()
        out.append(
            {
                "name": witness.name,
                "last_size": None if last is None else last.size,
                "last_cosigned_at": None if last is None else last.received_at,
                "overdue": age is None or age > stale_s,
            }
        )
    return out


def max_merge_delay_s() -> float:
    """How long a queued leaf may wait for its checkpoint (settings.LOG_MAX_MERGE_DELAY_S)."""
    return float(settings.LOG_MAX_MERGE_DELAY_S)


_STARTED = time.monotonic()


def check_log() -> dict[str, Any]:
    """/healthz: the oldest queued leaf has waited no longer than the maximum merge delay. As
    the timers' check, a process that started less than TIMERS_STALE_S ago reports `waiting`
    instead (its sequencer, a worker running beat's task, may be starting)."""
    delay, limit = merge_delay_s(), max_merge_delay_s()
    starting = time.monotonic() - _STARTED < float(getattr(settings, "TIMERS_STALE_S", 30.0))
    if delay > limit and starting:
        return {"ok": True, "size": current_size(), "oldest_pending_s": round(delay, 1),
                "max_merge_delay_s": limit, "waiting": True}  # fmt: skip
    if delay > limit:
        raise RuntimeError(
            f"the oldest queued leaf has waited {delay:.1f} s, over the maximum merge delay "
            f"of {limit:.0f} s: is the sequencer running (beat's fairness.log_sequence with a "
            "worker, or the in-process timers)?"
        )
    return {
        "ok": True,
        "size": current_size(),
        "oldest_pending_s": round(delay, 1),
        "max_merge_delay_s": limit,
    }


def merge_delay_s() -> float:
    """How long the oldest pending leaf has waited (0 when none waits)."""
    oldest = LogPending.objects.order_by("id").values_list("queued_at", flat=True).first()
    return 0.0 if oldest is None else max(0.0, (timezone.now() - oldest).total_seconds())
