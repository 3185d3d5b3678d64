"""Audit and export: every check an auditor runs on a round, from the database.

A round's bundle line is rebuilt from the live event store (never from a stored copy), so a
changed, missing or reordered event shows up both in `audit` and in `fairness.verify` run on
an `export_rounds` file. `audit` runs the verifier's own checks (fairness-v1 section 5:
seed against commitment, client material, every card against the shoe, engine replay, hash
chain, receipt signature) and adds what needs the database: the seed against its chain's
published terminal, and the round's ledger legs against its events.

Each round's events are decoded once (`fairness.replay.load_decoders`). A finished round gets
the verifier's proof of play: its players' choices decided anew on the fair shoe rebuilt
from its revealed seed; a round still in play has its choices so far decided anew on the
recorded cards. Event hashes are
recomputed over the canonical JSON of each stored body (`fairness.canonical`), never taken on
trust from the stored row.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple

from django.db import connections

from casino.engine.audit import reenact
from casino.engine.events import RoundOpened
from casino.eventstore.integrity import verify_stream
from casino.eventstore.models import StoredEvent, format_recorded_at
from casino.eventstore.store import decode_json_page, load, load_bundle_events, load_many
from casino.models import Round, RoundStatus
from casino.rounds.money import recorded_nets_many, round_legs_problems
from fairness.bundle import chain_line, line_format
from fairness.canonical import canonical_json
from fairness.chain import hash_seed
from fairness.crossround import round_time_failures
from fairness.logaudit import LogProblem
from fairness.models import LogLeaf, RoundProof, SeedChain, SigningKey
from fairness.replay import DecodedCheck, Decoders, load_decoded, load_decoders
from fairness.verify import KeyRing, verify_round

AUDIT_CHUNK = 500  # rounds read per batch of queries


@dataclass
class RoundAudit:
    round_id: str
    status: str
    problems: list[str] = field(default_factory=list)
    cards: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems


def published_keys() -> KeyRing:
    """The public keys the operator publishes at GET /api/fairness/keys."""
    return KeyRing({k.key_id: k.public_key for k in SigningKey.objects.all()})


def select_rounds(
    *, since: datetime | None = None, round_ids: Iterable[str] = (), finished_only: bool = False
) -> list[str]:
    """Round ids in opening order, filtered by date and/or id."""
    rounds = Round.objects.order_by("opened_at", "id")
    ids = list(round_ids)
    if ids:
        rounds = rounds.filter(id__in=ids)
    if since is not None:
        rounds = rounds.filter(opened_at__gte=since)
    if finished_only:
        rounds = rounds.exclude(status=RoundStatus.OPEN)
    return list(rounds.values_list("id", flat=True))


def logged_rounds_missing() -> list[LogProblem]:
    """Rounds the transparency log shows opened that the database no longer holds. A round
    deleted with its events and its proof leaves nothing for the per-round checks to fail on;
    its `round_opened` leaf stays (the tree check holds the leaves to the signed checkpoint)."""
    leaves = (
        LogLeaf.objects.filter(kind="round_opened")
        .exclude(ref__in=Round.objects.values("id"))
        .values_list("index", "ref", "data")
    )
    problems = []
    for index, round_id, data in leaves:
        leaf = json.loads(data)
        problems.append(
            LogProblem(
                "log_rounds",
                f"round {round_id} (chain {leaf.get('chain_id')}, nonce {leaf.get('nonce')}) is "
                f"in the transparency log (leaf {index}) but not in the database",
                index=index,
            )
        )
    return problems


_PUBLIC_KEYS: dict[str, str] = {}


def _public_key(key_id: str) -> str | None:
    if key_id not in _PUBLIC_KEYS:
        found = SigningKey.objects.filter(key_id=key_id).values_list("public_key", flat=True)
        if not found:
            return None
        _PUBLIC_KEYS[key_id] = found[0]
    return _PUBLIC_KEYS[key_id]


class Proof(NamedTuple):
    """What the audit reads of a RoundProof: the signed receipt and who signed it."""

    receipt: dict[str, Any]
    signature: str
    key_id: str


def _proofs_read(round_ids: Sequence[str]) -> tuple[dict[str, Proof], bool]:
    """The chunk's proofs (receipts decoded in one call), and whether no receipt holds a float.
    The receipt column is read as text on both databases (jsonb as ::text on PostgreSQL), so a
    float, which the signer never writes, is noticed and the canonical JSON of the receipts
    then takes its general path.
    """
    if not round_ids:
        return {}, True
    connection = connections[RoundProof.objects.db]
    receipt = "receipt::text" if connection.vendor == "postgresql" else "receipt"
    marks = ", ".join(["%s"] * len(round_ids))
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT round_id, {receipt}, signature, key_id FROM {RoundProof._meta.db_table} "
            f"WHERE round_id IN ({marks})",
            list(round_ids),
        )
        rows = cursor.fetchall()
    texts = [row[1] if isinstance(row[1], str) else json.dumps(row[1]) for row in rows]
    receipts, float_free = decode_json_page(texts)
    proofs = {
        round_id: Proof(receipt, signature, key)
        for (round_id, _, signature, key), receipt in zip(rows, receipts, strict=True)
    }
    return proofs, float_free


def _proofs(round_ids: Sequence[str]) -> dict[str, Proof]:
    proofs: dict[str, Proof] = {}
    for start in range(0, len(round_ids), AUDIT_CHUNK):
        proofs.update(_proofs_read(round_ids[start : start + AUDIT_CHUNK])[0])
    return proofs


def bundle_events(stored: Sequence[StoredEvent]) -> list[dict[str, Any]]:
    """Events as a verifier reads them: the hashed body exactly as stored, plus its hash.
    (The body of `StoredEvent.stored_body`, with recorded_at formatted once per append.)
    """
    times: dict[datetime, str] = {}
    out = []
    for event in stored:
        schema_version, data = getattr(event, "_stored", (event.schema_version, event.data))
        at = event.recorded_at
        text = times.get(at)
        if text is None:
            text = times[at] = format_recorded_at(at)
        out.append(
            {
                "stream": event.stream_id,
                "version": event.version,
                "type": event.type,
                "schema_version": schema_version,
                "data": data,
                "recorded_at": text,
                "hash": event.hash,
            }
        )
    return out


def _line(proof: Proof, stored: Sequence[StoredEvent]) -> dict[str, Any]:
    line: dict[str, Any] = {
        "format": line_format(proof.receipt),
        "receipt": proof.receipt,
        "signature": proof.signature,
        "key_id": proof.key_id,
        "events": bundle_events(stored),
    }
    public = _public_key(proof.key_id)
    if public is not None:
        line["public_key"] = public
    return line


def bundle_line(round_id: str) -> dict[str, Any] | None:
    """The verifier's line for a finished round: its signed receipt and its events as stored now."""
    proof = _proofs([round_id]).get(round_id)
    if proof is None:
        return None
    return _line(proof, load(round_id))


def export_lines(round_ids: Sequence[str]) -> Iterator[str]:
    """JSON Lines text of every finished round among `round_ids` (canonical JSON per line)."""
    for start in range(0, len(round_ids), AUDIT_CHUNK):
        chunk = round_ids[start : start + AUDIT_CHUNK]
        streams = load_many(chunk)
        proofs = _proofs(chunk)
        for round_id in chunk:
            if round_id in proofs:
                yield canonical_json(_line(proofs[round_id], streams[round_id])).decode("utf-8")


class ChainScope(NamedTuple):
    """What an export's chain lines state (`fairness.bundle.chain_line`, docs/fairness.md).

    `scope`: "all" (every round: each chain that revealed a seed, nonces 1 to its last
    revealed one), "since" (from the first exported nonce of each chain to its last revealed
    one) or "rounds" (named rounds: from the smallest to the largest exported nonce).
    `revealed`: each chain's revealed_index (chain id -> k) read before the rounds were
    selected, so every round it counts had finished, and was selected, when they were.
    """

    scope: str
    revealed: dict[str, int]


def chain_scope(scope: str) -> ChainScope:
    """Read the chains before selecting the rounds to export (see ChainScope)."""
    if scope not in ("all", "since", "rounds"):
        raise ValueError(f"unknown chain scope {scope!r}")
    rows = SeedChain.objects.values_list("pk", "revealed_index")
    return ChainScope(scope, {str(pk): revealed for pk, revealed in rows})


def chain_lines(round_ids: Sequence[str], scope: ChainScope) -> list[str]:
    """One chain line per chain of the rounds (and, for "all", per chain that revealed a seed),
    in chain order, canonical JSON: the chain's public facts and the nonces the export covers,
    so that the verifier names each nonce missing from that range."""
    ranges: dict[str, list[int]] = {}  # chain id -> [smallest, largest] nonce of the rounds
    for start in range(0, len(round_ids), AUDIT_CHUNK):
        chunk = round_ids[start : start + AUDIT_CHUNK]
        for chain_id, nonce in Round.objects.filter(id__in=chunk).values_list("chain_id", "nonce"):
            seen = ranges.get(chain_id)
            if seen is None:
                ranges[chain_id] = [nonce, nonce]
            else:
                seen[0], seen[1] = min(seen[0], nonce), max(seen[1], nonce)
    if scope.scope == "all":
        for chain_id, revealed in scope.revealed.items():
            if revealed >= 1:
                ranges.setdefault(chain_id, [1, revealed])
    chains = SeedChain.objects.filter(pk__in=[int(c) for c in ranges if c.isdigit()])
    lines = []
    for chain in sorted(chains, key=lambda c: c.pk):
        chain_id = str(chain.pk)
        low, high = ranges[chain_id]
        revealed = scope.revealed.get(chain_id, 0)
        first = 1 if scope.scope == "all" else low
        last = high if scope.scope == "rounds" else max(high, revealed)
        line = chain_line(
            chain_id=chain_id,
            table_id=chain.table_id,
            terminal=chain.terminal,
            length=chain.length,
            created_at=format_recorded_at(chain.created_at),
            first_nonce=first,
            last_nonce=last,
        )
        lines.append(canonical_json(line).decode("utf-8"))
    return lines


class ChainWalker:
    """Checks revealed seeds against their chain's terminal, remembering seeds already proven.

    Proving s_k walks down until it meets a proven seed (or s_0), so auditing a chain's rounds
    in order costs one hash per round instead of k.
    """

    def __init__(self) -> None:
        self._proven: dict[str, dict[int, str]] = {}

    def problems(self, chain_id: str, nonce: int, seed: str) -> list[str]:
        proven = self._proven.get(chain_id)
        if proven is None:
            chain = SeedChain.objects.filter(pk=chain_id).first()
            if chain is None:
                return [f"chain: no seed chain {chain_id}"]
            proven = self._proven[chain_id] = {0: chain.terminal}
        value, k = seed, nonce
        walked: dict[int, str] = {}
        while k not in proven:
            if k <= 0:
                return [f"chain: seed of nonce {nonce} does not walk down to chain {chain_id}"]
            walked[k] = value
            value, k = hash_seed(value), k - 1
        if proven[k] != value:
            return [
                f"chain: seed of nonce {nonce} does not walk down to the published "
                f"{'terminal' if k == 0 else f'seed of nonce {k}'} of chain {chain_id}"
            ]
        proven.update(walked)
        return []


class Checks(NamedTuple):
    """What every round's audit shares: the published keys, the seed-chain walker, the
    proof of play (the round decided anew on its fair shoe) and the event decoders."""

    keys: KeyRing
    walker: ChainWalker
    play: DecodedCheck
    decoders: Decoders


_ENDS = frozenset({"RoundSettled", "RoundVoided"})


def _decode(
    events_read: list[dict[str, Any]], current: list[dict[str, Any]], decoders: Decoders
) -> list[Any]:
    """The engine's events, from each event's data upcast to the current schema version."""
    return [
        decoders[stored["type"]](data) for stored, data in zip(events_read, current, strict=True)
    ]


def _audit_one(
    round_id: str,
    events_read: list[dict[str, Any]],
    current: list[dict[str, Any]],
    float_free: bool,
    receipts_float_free: bool,
    status: str,
    proof: Proof | None,
    recorded: dict[str, int],
    checks: Checks,
) -> RoundAudit:
    report = RoundAudit(round_id=round_id, status=status)
    if not events_read:
        report.problems.append("events: the round has no events")
        return report
    try:
        events = _decode(events_read, current, checks.decoders)  # once, for every check below
    except (KeyError, TypeError, ValueError) as exc:  # not the engine's events: say so
        undecoded = f"events: an event does not decode ({type(exc).__name__}: {exc})"
        events = []
    else:
        undecoded = ""
        report.problems.extend(round_legs_problems(round_id, events, recorded))
    if not any(stored["type"] in _ENDS for stored in events_read):
        # A round still in play: its choices so far, decided anew on the recorded cards
        # (its seed is secret until it ends), and its hash chain.

        report.problems.extend(
            [undecoded] if undecoded else (f"rules: {p}" for p in reenact(events))
        )
        report.problems.extend(
            f"events: version {p.version} ({p.code}): {p.message}"
            for p in verify_stream(load(round_id))
        )
        return report
    if proof is None:
        report.problems.append("receipt: the finished round has no signed receipt")
        return report
    # The verifier checks the hash chain (prev_hash links included), the seed, the cards, the
    # proof of play and the signature, on the events exactly as read.
    play = checks.play

    def decided(
        _events: Sequence[Mapping[str, Any]], receipt: Mapping[str, Any], dealt: Sequence[str]
    ) -> list[str]:
        return [undecoded] if undecoded else play(events, receipt, dealt)

    line: dict[str, Any] = {
        "format": line_format(proof.receipt),
        "receipt": proof.receipt,
        "signature": proof.signature,
        "key_id": proof.key_id,
        "events": events_read,
    }
    public = _public_key(proof.key_id)
    if public is not None:
        line["public_key"] = public
    verified = verify_round(
        line,
        checks.keys,
        replay_check=decided,
        float_free=receipts_float_free and float_free,
        events_float_free=float_free,
    )
    report.cards = verified.cards
    report.problems.extend(verified.failures)
    report.problems.extend(round_time_failures(events_read))
    seed, opened = proof.receipt.get("server_seed"), events[0] if events else None
    if isinstance(seed, str) and isinstance(opened, RoundOpened):
        report.problems.extend(checks.walker.problems(opened.chain_id, opened.nonce, seed))
    return report


def audit_round(
    round_id: str, keys: KeyRing | None = None, walker: ChainWalker | None = None
) -> RoundAudit:
    """Every check on one round (open rounds: hash chain, replay and ledger legs)."""
    return audit([round_id], checks=(keys, walker))[0]


def audit(
    round_ids: list[str],
    *,
    progress: Callable[[int, int], None] | None = None,
    checks: tuple[KeyRing | None, ChainWalker | None] = (None, None),
) -> list[RoundAudit]:
    """Audit rounds in batches: a handful of queries per AUDIT_CHUNK rounds.

    `checks` = (keys, walker): the published keys and a seed-chain walker to reuse across
    calls (None: fresh ones). The engine's settlement replay runs on every round: as part of
    its re-enactment, or on the audit's own fold where the round does not re-enact exactly.
    """
    keys, walker = checks
    decoders = load_decoders()
    play = load_decoded()
    assert decoders is not None and play is not None  # the engine is part of this project
    resolved = Checks(keys or published_keys(), walker or ChainWalker(), play, decoders)
    reports: list[RoundAudit] = []
    # The cyclic garbage collector is paused while a chunk is audited: a chunk makes tens of
    # thousands of short-lived, acyclic objects, and the full collections they trigger walk
    # the whole heap several times per chunk. What a chunk left (all of it still in the
    # youngest generation) is collected before the next chunk; the collector resumes after.
    collecting = gc.isenabled()
    gc.disable()
    try:
        for start in range(0, len(round_ids), AUDIT_CHUNK):
            if start:
                gc.collect(0)
            chunk = round_ids[start : start + AUDIT_CHUNK]
            _audit_chunk(chunk, resolved, reports, progress, len(round_ids))
    finally:
        if collecting:
            gc.enable()
    return reports


def _statuses(round_ids: Sequence[str]) -> dict[str, str]:
    """{round id: status} of the rounds that exist, as
    dict(Round.objects.filter(id__in=...).values_list("id", "status")) gives it (one raw
    statement: no queryset to compile)."""
    if not round_ids:
        return {}
    connection = connections[Round.objects.db]
    marks = ", ".join(["%s"] * len(round_ids))
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT id, status FROM {Round._meta.db_table} WHERE id IN ({marks})", list(round_ids)
        )
        return dict(cursor.fetchall())


def _audit_chunk(
    chunk: list[str],
    resolved: Checks,
    reports: list[RoundAudit],
    progress: Callable[[int, int], None] | None,
    total: int,
) -> None:
    """One chunk: a handful of queries, then each round's checks."""

    read = load_bundle_events(chunk)
    proofs, receipts_float_free = _proofs_read(chunk)
    statuses = _statuses(chunk)
    nets = recorded_nets_many(chunk)
    for round_id in chunk:
        reports.append(
            _audit_one(
                round_id,
                read.events[round_id],
                read.current[round_id],
                read.float_free,
                receipts_float_free,
                statuses.get(round_id, "?"),
                proofs.get(round_id),
                nets[round_id],
                resolved,
            )
        )
        if progress is not None:
            progress(len(reports), total)


def summary(reports: list[RoundAudit]) -> dict[str, Any]:
    failed = [r for r in reports if not r.ok]
    return {
        "ok": not failed,
        "rounds": len(reports),
        "passed": len(reports) - len(failed),
        "failed": len(failed),
        "cards": sum(r.cards for r in reports),
        "problems": [{"round": r.round_id, "problems": r.problems} for r in failed],
    }
