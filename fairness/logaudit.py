"""The transparency log checked against the database: the checks `manage.py audit` and
`manage.py reconcile` run (docs/fairness.md, "Transparency log").

- The stored tree: every leaf's bytes hash to the tile hash at its index, the leaves
  rebuild the stored root, and the latest checkpoint is signed by a log key over that root.
- The journal: every entry's canonical form with its postings hashes to the `sha256` of its
  `journal_entry` leaf and to its chain link; the links chain (each link's prev_hash is the
  chain hash before it); no entry is missing from the log,
  and no logged entry is missing from the journal. An entry still queued for the sequencer
  is not a problem here (its lag is /healthz's maximum merge delay check).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from fairness import note, tlog, transparency
from fairness.models import JournalLink, LogCheckpoint, LogLeaf, LogPending, LogState
from ledger.models import JournalEntry, Posting

Progress = Callable[[int, int], None]
CHUNK = 5000


@dataclass(frozen=True)
class LogProblem:
    check: str  # "log_tree" or "journal_chain"
    message: str
    entry: int | None = None
    index: int | None = None


def _leaf_chunks() -> Iterator[list[tuple[int, str]]]:
    last = -1
    while True:
        rows = list(
            LogLeaf.objects.filter(index__gt=last)
            .order_by("index")
            .values_list("index", "data")[:CHUNK]
        )
        if not rows:
            return
        yield rows
        last = rows[-1][0]


def tree_problems(*, progress: Progress | None = None) -> list[LogProblem]:
    """The stored leaves against the stored tiles, the stored root and the latest checkpoint."""
    problems: list[LogProblem] = []
    state = LogState.objects.filter(id=1).first()
    size = state.size if state is not None else 0
    tiles = transparency.DbTiles()
    rebuilt = tlog.MemoryTiles()
    count = 0
    for rows in _leaf_chunks():
        first, last = rows[0][0], rows[-1][0]
        gap = next((i for i, (index, _) in enumerate(rows) if index != count + i), None)
        if gap is not None:
            skipped = count + gap
            message = f"the stored leaves skip from {skipped} to {rows[gap][0]}"
            problems.append(LogProblem("log_tree", message, index=skipped))
            return problems
        hashes = [tlog.leaf_hash(data.encode("utf-8")) for _, data in rows]
        stored = _level0(tiles, first, last + 1)
        for (index, _), mine, theirs in zip(rows, hashes, stored, strict=True):
            if mine != theirs:
                problems.append(
                    LogProblem(
                        "log_tree",
                        f"leaf {index}'s bytes do not hash to the tree's hash at that index",
                        index=index,
                    )
                )
        rebuilt.write(tlog.append(count, rebuilt, hashes)[0])
        count += len(rows)
        if progress is not None:
            progress(count, size)
    if count != size:
        problems.append(
            LogProblem("log_tree", f"the log holds {count} leaves but its state says {size}")
        )
    root = tlog.tree_hash(count, rebuilt)
    if state is not None and state.root and state.root != root.hex():
        problems.append(
            LogProblem("log_tree", f"the leaves rebuild root {root.hex()}, not {state.root}")
        )
    problems += _checkpoint_problems(count, root)
    return problems


def _level0(tiles: transparency.DbTiles, start: int, end: int) -> list[bytes]:
    keys = [(0, n) for n in range(start // tlog.TILE_WIDTH, (end - 1) // tlog.TILE_WIDTH + 1)]
    found = tiles.read(keys)
    out = []
    for i in range(start, end):
        tile = found.get((0, i // tlog.TILE_WIDTH), b"")
        at = (i % tlog.TILE_WIDTH) * tlog.HASH_SIZE
        out.append(tile[at : at + tlog.HASH_SIZE])
    return out


def _checkpoint_problems(size: int, root: bytes) -> list[LogProblem]:
    checkpoint = LogCheckpoint.objects.order_by("-size").first()
    if checkpoint is None:
        return [] if size == 0 else [LogProblem("log_tree", "the log has leaves but no checkpoint")]
    try:
        body, _ = note.open_note(checkpoint.note, transparency.verifiers())
        _, signed_size, signed_root = note.parse_checkpoint(body)
    except note.NoteError as error:
        return [LogProblem("log_tree", f"checkpoint at size {checkpoint.size}: {error}")]
    if signed_size > size:
        return [
            LogProblem("log_tree", f"the checkpoint signs size {signed_size}; the log has {size}")
        ]
    if signed_size == size and signed_root != root:
        return [
            LogProblem(
                "log_tree",
                f"the checkpoint at size {size} signs root {signed_root.hex()}, "
                f"the leaves rebuild {root.hex()}",
            )
        ]
    return []


def _entry_chunks() -> Iterator[list[dict[str, Any]]]:
    last = 0
    while True:
        rows: list[dict[str, Any]] = [
            dict(row)
            for row in JournalEntry.objects.filter(id__gt=last)
            .order_by("id")
            .values("id", "kind", "reference", "created_at")[:CHUNK]
        ]
        if not rows:
            return
        postings: dict[int, dict[str, int]] = {}
        for entry_id, key, amount in Posting.objects.filter(
            entry_id__gte=rows[0]["id"], entry_id__lte=rows[-1]["id"]
        ).values_list("entry_id", "account__key", "amount"):
            postings.setdefault(entry_id, {})[key] = amount
        for row in rows:
            row["postings"] = postings.get(row["id"], {})
        yield rows
        last = rows[-1]["id"]


def journal_problems(*, progress: Progress | None = None) -> list[LogProblem]:
    """Every journal entry against its leaf and its chain link, and the chain itself."""
    problems: list[LogProblem] = []
    links = {
        row[0]: row
        for row in JournalLink.objects.values_list(
            "entry_id", "seq", "entry_hash", "prev_hash", "chain_hash", "log_index"
        )
    }
    leaf_hashes = {
        int(json.loads(data)["entry_id"]): (index, json.loads(data)["sha256"])
        for index, data in LogLeaf.objects.filter(kind="journal_entry").values_list("index", "data")
    }
    pending = set(LogPending.objects.filter(kind="journal_entry").values_list("ref", flat=True))
    total, done = JournalEntry.objects.count(), 0
    seen: set[int] = set()
    for rows in _entry_chunks():
        for row in rows:
            entry_id = row["id"]
            seen.add(entry_id)
            digest = transparency.journal_entry_hash(
                entry_id=entry_id,
                kind=row["kind"],
                reference=row["reference"],
                created_at=row["created_at"],
                postings=row["postings"],
            )
            problems += _entry_problems(
                entry_id, digest, row, links.get(entry_id), leaf_hashes.get(entry_id),
                str(entry_id) in pending,
            )  # fmt: skip
        done += len(rows)
        if progress is not None:
            progress(done, total)
    for entry_id in sorted(set(links) - seen):
        problems.append(
            LogProblem(
                "journal_chain",
                f"journal entry {entry_id} is in the log but not in the journal (deleted)",
                entry=entry_id,
            )
        )
    problems += _chain_problems(sorted(links.values(), key=lambda r: r[1]))
    return problems


def _entry_problems(
    entry_id: int,
    digest: str,
    row: dict[str, Any],
    link: tuple[Any, ...] | None,
    leaf: tuple[int, str] | None,
    is_pending: bool,
) -> list[LogProblem]:
    name = f"journal entry {entry_id} ({row['kind']} {row['reference']})"
    if link is None or leaf is None:
        if is_pending:
            return []  # queued with it: the sequencer has not reached it yet (/healthz: the lag)
        why = (
            "has no journal_entry leaf in the transparency log: it was written outside the "
            "ledger's path"
        )
        return [LogProblem("journal_chain", f"{name} {why}", entry=entry_id)]
    problems = []
    if leaf[1] != digest or link[2] != digest:
        problems.append(
            LogProblem(
                "journal_chain",
                f"{name} does not match the hash the log holds for it (log leaf {leaf[0]}): its "
                "fields or postings changed after it was logged",
                entry=entry_id,
                index=leaf[0],
            )
        )
    return problems


def _chain_problems(links: list[tuple[Any, ...]]) -> list[LogProblem]:
    problems = []
    prev = transparency.CHAIN_START
    for expected_seq, (entry_id, seq, entry_hash, prev_hash, link_hash, _) in enumerate(links, 1):
        if seq != expected_seq or prev_hash != prev:
            problems.append(
                LogProblem(
                    "journal_chain",
                    f"the journal chain breaks at entry {entry_id} (link {seq})",
                    entry=entry_id,
                )
            )
        if transparency.chain_hash(prev_hash, entry_hash) != link_hash:
            problems.append(
                LogProblem(
                    "journal_chain",
                    f"journal entry {entry_id}'s chain hash is not SHA-256(prev || entry)",
                    entry=entry_id,
                )
            )
        prev = link_hash
    return problems


def log_problems(*, progress: Progress | None = None) -> list[LogProblem]:
    """Both checks: the stored tree, then the journal against it."""
    return tree_problems(progress=progress) + journal_problems()
