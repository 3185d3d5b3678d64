"""Fairness services: seed chains, client seeds, receipts and round proofs.

`seed_issue`, `server_seed_for`, `seed_reveal` and `round_proof_create` run inside the round
service's transaction (they take row locks, never open a durable block), and `chain_create`
inside the transaction that creates the table; the other writes are their own durable
transaction. See docs/fairness.md for the round service's call order.
"""

from __future__ import annotations

import secrets
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Any, NamedTuple

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models.signals import post_migrate
from django.utils import timezone

from casino.eventstore.store import NewEvent, append
from casino.platform import rawsql
from casino.platform.errors import ApplicationError, ConflictError
from fairness import ed25519, transparency
from fairness.bundle import BUNDLE_FORMAT, line_format
from fairness.canonical import canonical_json, canonical_text, canonical_text_float_free
from fairness.chain import DEFAULT_LENGTH, create_chain, hash_seed, walk
from fairness.models import ClientSeed, RoundProof, SeedChain, SigningKey
from fairness.receipt import (
    key_id,
    private_key_from_hex,
    public_key_bytes,
    receipt_from_events,
)
from fairness.seedcrypto import decrypt_secret, encrypt_secret, rotate_token
from fairness.shoe import FairnessInputError, validate_client_seed

# A new chain is prepared once the active one has this few seeds left (and by the Celery task).
REFILL_AT: int = getattr(settings, "FAIRNESS_CHAIN_REFILL_AT", 1_000)
CHAIN_LENGTH: int = getattr(settings, "FAIRNESS_CHAIN_LENGTH", DEFAULT_LENGTH)
CHECKPOINT_EVERY = 100  # seeds kept per cached chain: s_N, s_{N-100}, ... (walks stay short)
BUNDLE_EVENT_KEYS = ("stream", "version", "type", "schema_version", "data", "recorded_at", "hash")


class IssuedSeed(NamedTuple):
    """What opening round k needs: its chain, k, the public commitment s_{k-1} and secret s_k."""

    chain: SeedChain
    nonce: int
    commitment: str
    server_seed: str

    @property
    def chain_id(self) -> str:
        return str(self.chain.pk)


# --- round-in-progress hook (the round service registers the real check) -----------------

_round_in_progress: Callable[[Any], bool] = lambda user: False  # noqa: E731


def register_round_in_progress_check(check: Callable[[Any], bool]) -> None:
    """Install the round service's `player_has_round_in_progress(user) -> bool`."""
    global _round_in_progress
    _round_in_progress = check


def player_has_round_in_progress(user: Any) -> bool:
    """Whether the player sits in a round that has not ended (False until a check is wired)."""
    return bool(_round_in_progress(user))


# --- seed chains --------------------------------------------------------------------------


def _chain_new(*, table_id: str, length: int, status: str) -> SeedChain:
    if not 1 <= length <= 10_000_000:
        raise ApplicationError("A chain holds 1 to 10,000,000 seeds.", code="invalid_length")
    chain = create_chain(length)
    row = SeedChain.objects.create(
        table_id=table_id,
        length=length,
        terminal=chain.terminal,
        head_encrypted=encrypt_secret(chain.head),
        status=status,
    )
    _publish_terminal(row)
    return row


def _publish_terminal(chain: SeedChain) -> None:
    """The terminal s_0 as an event, before any round can use the chain."""
    append(
        stream_id=f"seedchain-{chain.pk}",
        expected_version=0,
        events=[
            NewEvent(
                "SeedChainCreated",
                {
                    "chain_id": str(chain.pk),
                    "table_id": chain.table_id,
                    "length": chain.length,
                    "terminal": chain.terminal,
                },
            )
        ],
    )


def chain_create(*, table_id: str, length: int | None = None) -> SeedChain:
    """A new prepared chain for the table (default length CHAIN_LENGTH), its terminal
    published: a table's first chain, created in the transaction that creates the table
    (`casino.tables.services.table_add`), so the first round's commitment is public as soon as the
    table exists. Joins the caller's transaction (a savepoint), else is its own."""
    with transaction.atomic():
        return _chain_new(
            table_id=table_id,
            length=CHAIN_LENGTH if length is None else length,
            status=SeedChain.Status.READY,
        )


def chain_prepare_next(*, table_id: str) -> SeedChain | None:
    """Make sure a prepared chain waits when the active one is low; returns it if created."""
    with transaction.atomic(durable=True):
        return _prepare_if_low(table_id)


def _low(chain: SeedChain) -> bool:
    """Whether the table's next chain must be prepared now: the chain has REFILL_AT seeds
    left or fewer, and never fewer than one, whatever REFILL_AT says. So the next chain (its
    terminal published) exists before the chain's last seed is issued, in an earlier
    transaction, even for a chain of two or three seeds."""
    return chain.remaining <= max(REFILL_AT, 1)


def _prepare_if_low(table_id: str) -> SeedChain | None:
    chains = list(SeedChain.objects.filter(table_id=table_id).exclude(status="exhausted"))
    if any(c.status == SeedChain.Status.READY for c in chains):
        return None
    active = next((c for c in chains if c.status == SeedChain.Status.ACTIVE), None)
    if active is not None and not _low(active):
        return None
    return _chain_new(table_id=table_id, length=CHAIN_LENGTH, status=SeedChain.Status.READY)


def _active_chain(table_id: str) -> SeedChain:
    """The table's active chain, locked; its prepared chain becomes active if none is.
    Never a chain made here: a round only ever uses a chain whose terminal was published in
    an earlier transaction (with the table, or prepared before the last chain ran out), so
    its commitment could be served before the round opened. No chain at all is refused
    (`no_chain`): every table gets its first chain when it is created.
    """
    chain = rawsql.first(
        SeedChain, "table_id = %s AND status = %s", [table_id, "active"], lock=True
    )
    if chain is not None:
        return chain
    try:
        with transaction.atomic():  # a savepoint: a concurrent first round may activate first
            ready = (
                SeedChain.objects.select_for_update()
                .filter(table_id=table_id, status="ready")
                .order_by("id")
                .first()
            )
            if ready is not None:
                ready.status = SeedChain.Status.ACTIVE
                ready.save(update_fields=["status"])
                return ready
    except IntegrityError:  # the other opener won (one active chain per table): use theirs
        return SeedChain.objects.select_for_update().get(table_id=table_id, status="active")
    # None ready: another opener may just have activated the one we waited for.
    chain = rawsql.first(
        SeedChain, "table_id = %s AND status = %s", [table_id, "active"], lock=True
    )
    if chain is not None:
        return chain
    raise ConflictError(
        f"Table {table_id} has no seed chain, so no published commitment: a table gets its"
        " first chain when it is created (casino.tables.services.table_add).",
        code="no_chain",
        extra={"table_id": table_id},
    )


def seed_issue(*, table_id: str) -> IssuedSeed:
    """Hand out the next seed of the table's chain, in order (inside the caller's transaction).
    Refuses (409) while the previous round on the chain has not revealed its seed: that seed is
    the next commitment, so publishing it early would reveal a round still in play.
    """
    _require_transaction()
    # The common case in one statement: an active chain, the previous round revealed, and
    # not its last seed; the row is locked as the UPDATE takes it. Anything else: below.
    issued = rawsql.update_one(
        SeedChain,
        "next_index = next_index + 1",
        "table_id = %s AND status = 'active' AND revealed_index >= next_index - 1 "
        "AND next_index < length",
        [table_id],
    )
    if issued is not None:
        k = issued.next_index - 1
        server_seed = _seed_of(issued, k)
        if _low(issued):
            _prepare_if_low(table_id)
        return IssuedSeed(
            chain=issued, nonce=k, commitment=hash_seed(server_seed), server_seed=server_seed
        )
    chain = _active_chain(table_id)
    k = chain.next_index
    if chain.revealed_index < k - 1:
        raise ConflictError(
            "The previous round on this table has not ended yet.",
            code="previous_round_open",
            extra={"table_id": table_id, "chain_id": str(chain.pk), "nonce": k - 1},
        )
    server_seed = _seed_of(chain, k)
    commitment = hash_seed(server_seed)
    chain.next_index = k + 1
    if k == chain.length:
        chain.status, chain.exhausted_at = SeedChain.Status.EXHAUSTED, timezone.now()
        chain.save(update_fields=["next_index", "status", "exhausted_at"])
    else:
        _chain_set(chain.pk, "next_index", chain.next_index)
    if _low(chain):
        _prepare_if_low(table_id)
    return IssuedSeed(chain=chain, nonce=k, commitment=commitment, server_seed=server_seed)


def server_seed_for(*, chain_id: str | int, nonce: int) -> str:
    """The secret seed of an issued round, for dealing its shoe (never for a response)."""
    chain = _chain(chain_id)
    if not 1 <= nonce < chain.next_index:
        raise ApplicationError("That seed has not been issued.", code="seed_not_issued")
    return _seed_of(chain, nonce)


def seed_reveal(*, chain_id: str | int, nonce: int) -> str:
    """Reveal round k's seed once it ended (settled or voided); it is public from then on."""
    _require_transaction()
    if isinstance(nonce, int) and str(chain_id).isdigit():
        # One statement when the seed was issued (the row locked as it is updated).
        revealed = rawsql.update_one(
            SeedChain,
            "revealed_index = CASE WHEN revealed_index < %s THEN %s ELSE revealed_index END",
            "id = %s AND %s >= 1 AND %s < next_index",
            [nonce, nonce, int(chain_id), nonce, nonce],
        )
        if revealed is not None:
            return _seed_of(revealed, nonce)
    chain = _chain(chain_id, lock=True)
    if not 1 <= nonce < chain.next_index:
        raise ApplicationError("That seed has not been issued.", code="seed_not_issued")
    if nonce > chain.revealed_index:
        chain.revealed_index = nonce
        _chain_set(chain.pk, "revealed_index", nonce)
    return _seed_of(chain, nonce)


def next_commitment(*, table_id: str) -> dict[str, Any] | None:
    """The public commitment the table's next round will open with (None: no chain, so no
    such table: every table has one from its creation)."""
    chains = SeedChain.objects.filter(table_id=table_id).exclude(status="exhausted")
    chain = next((c for c in chains if c.status == "active"), None) or next(iter(chains), None)
    if chain is None:
        return None
    k = chain.next_index
    if chain.revealed_index < k - 1:
        raise ConflictError(
            "A round is in progress; the next commitment is published when it ends.",
            code="round_in_progress",
            extra={"table_id": table_id, "chain_id": str(chain.pk), "nonce": k - 1},
        )
    commitment = chain.terminal if k == 1 else hash_seed(_seed_of(chain, k))
    return {
        "table_id": table_id,
        "chain_id": str(chain.pk),
        "nonce": k,
        "commitment": commitment,
        "terminal": chain.terminal,
        "chain_length": chain.length,
    }


def _chain(chain_id: str | int, *, lock: bool = False) -> SeedChain:
    try:
        pk = int(chain_id)
    except ValueError:
        pk = None
    chain = None if pk is None else rawsql.first(SeedChain, "id = %s", [pk], lock=lock)
    if chain is None:
        raise ApplicationError("Unknown seed chain.", code="unknown_chain", status_code=404)
    return chain


def _chain_set(pk: int, column: str, value: int) -> None:
    """One counter of a locked chain row (next_index, revealed_index): one raw UPDATE."""
    rawsql.execute(
        f"UPDATE {SeedChain._meta.db_table} SET {column} = %s WHERE id = %s", [value, pk]
    )


def _require_transaction() -> None:
    if not transaction.get_connection().in_atomic_block:
        raise transaction.TransactionManagementError(
            "seed_issue/seed_reveal run inside the round service's transaction.atomic() block"
        )


def _seed_of(chain: SeedChain, k: int) -> str:
    """s_k, from the cached segment of the chain that holds it (see `_segment`)."""
    index = (chain.length - k) // CHECKPOINT_EVERY  # checkpoint s_{N - index*C} is at or above k
    segment = _segment(chain.pk, chain.head_encrypted, chain.length, index)
    return segment[chain.length - index * CHECKPOINT_EVERY - k]


_SEGMENTS: OrderedDict[tuple[int, str, int], list[str]] = OrderedDict()
_SEGMENTS_SIZE = 512


def _segment(pk: int, token: str, length: int, index: int) -> list[str]:
    """The seeds below checkpoint `index` of a chain, s_{c}, s_{c-1}, ... s_{c-C+1} (c =
    N - index*C), walked once and kept (LRU): rounds take their seeds in order, so a table's
    next hundred rounds find theirs here instead of each walking up to a hundred steps down
    from the checkpoint, twice a round (issue and reveal)."""
    key = (pk, token, index)
    cached = _SEGMENTS.get(key)
    if cached is not None:
        _SEGMENTS.move_to_end(key)
        return cached
    seed = _checkpoints(pk, token, length)[index]
    seeds = [seed]
    for _ in range(min(CHECKPOINT_EVERY, length - index * CHECKPOINT_EVERY + 1) - 1):
        seed = hash_seed(seed)
        seeds.append(seed)
    _SEGMENTS[key] = seeds
    if len(_SEGMENTS) > _SEGMENTS_SIZE:
        _SEGMENTS.popitem(last=False)
    return seeds


_CACHE: OrderedDict[tuple[int, str], list[str]] = OrderedDict()
_CACHE_SIZE = 256


def _checkpoints(pk: int, token: str, length: int) -> list[str]:
    """s_N, s_{N-100}, s_{N-200}, ... of one chain, kept in process memory (LRU)."""
    key = (pk, token)
    cached = _CACHE.get(key)
    if cached is not None:
        _CACHE.move_to_end(key)
        return cached
    seed = decrypt_secret(token)
    points = [seed]
    for _ in range(length // CHECKPOINT_EVERY):
        seed = walk(seed, CHECKPOINT_EVERY)
        points.append(seed)
    _CACHE[key] = points
    if len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return points


def seed_keys_rotate() -> int:
    """Re-encrypt every unexhausted chain head under the newest key; returns how many."""
    count = 0
    with transaction.atomic(durable=True):
        for chain in SeedChain.objects.select_for_update().exclude(status="exhausted"):
            chain.head_encrypted = rotate_token(chain.head_encrypted)
            chain.save(update_fields=["head_encrypted"])
            count += 1
    return count


# --- client seeds -------------------------------------------------------------------------


def client_seed_default() -> str:
    """A fresh random client seed (16 characters of [A-Za-z0-9_-])."""
    return secrets.token_urlsafe(12)


def client_seed_get(*, user: Any) -> str:
    """The player's current client seed (a random default is created on first use)."""
    user_id = getattr(user, "pk", user)
    row = rawsql.first(ClientSeed, "user_id = %s", [user_id])
    if row is None:
        row, _ = ClientSeed.objects.get_or_create(
            user_id=user_id, defaults={"seed": client_seed_default()}
        )
    return row.seed


def client_seed_set(*, user: Any, seed: str) -> ClientSeed:
    """Change the player's client seed; refused (409) while they play a round."""
    try:
        validate_client_seed(seed)
    except FairnessInputError as exc:
        raise ApplicationError(str(exc), code="invalid_client_seed", extra={"seed": seed}) from exc
    with transaction.atomic(durable=True):
        if player_has_round_in_progress(user):
            raise ConflictError(
                "You cannot change your client seed during a round; try again when it ends.",
                code="round_in_progress",
            )
        row, _ = ClientSeed.objects.select_for_update().get_or_create(
            user=user, defaults={"seed": seed}
        )
        if row.seed != seed:
            row.seed = seed
            row.save(update_fields=["seed", "updated_at"])
    return row


# --- receipts and proofs ------------------------------------------------------------------


@lru_cache(maxsize=4)
def _signing_key(private_key_hex: str) -> Any:
    return private_key_from_hex(private_key_hex)


# The recorded row of each private key this process signed with, keyed by the key itself (a
# rotation is a new RECEIPT_SIGNING_KEY, so a new entry). An entry is made only once the row
# is known committed (after the commit, outside any atomic block), so a row whose transaction
# rolls back is never remembered; a flush of the database (tests) forgets them all.
_recorded_keys: dict[str, SigningKey] = {}


def _remember_key(private_key_hex: str, row: SigningKey) -> None:
    if not transaction.get_connection().in_atomic_block:
        _recorded_keys[private_key_hex] = row


def _forget_keys(**_: Any) -> None:
    _recorded_keys.clear()


post_migrate.connect(_forget_keys, dispatch_uid="fairness.services.forget_signing_keys")


def signing_key_current() -> SigningKey:
    """The public half of settings.RECEIPT_SIGNING_KEY, recorded so it stays listed forever."""
    private_key_hex = settings.RECEIPT_SIGNING_KEY
    cached = _recorded_keys.get(private_key_hex)
    if cached is not None:
        return cached
    public = public_key_bytes(_signing_key(private_key_hex))
    row, _ = SigningKey.objects.get_or_create(
        key_id=key_id(public), defaults={"public_key": public.hex()}
    )
    transaction.on_commit(lambda: _remember_key(private_key_hex, row))
    return row


@lru_cache(maxsize=4)
def _libsodium_signer(private_key_hex: str) -> ed25519.Signs | None:
    return ed25519.signer(bytes.fromhex(private_key_hex))


def _sign(canonical: bytes) -> tuple[str, SigningKey]:
    """The signature of a receipt's canonical JSON under the current key, by libsodium
    (`fairness.ed25519.signer`: the same bytes as `cryptography`'s, which signs only for a key
    libsodium's signer refuses: a malformed one)."""
    key = signing_key_current()
    signs = _libsodium_signer(settings.RECEIPT_SIGNING_KEY)
    if signs is not None:
        return signs(canonical).hex(), key
    return _signing_key(settings.RECEIPT_SIGNING_KEY).sign(canonical).hex(), key


def receipt_sign(*, receipt: Mapping[str, Any]) -> tuple[str, str]:
    """(signature hex, key id) of the receipt's canonical JSON under the current key."""
    signature, key = _sign(canonical_json(receipt))
    return signature, key.key_id


def bundle_line_text(
    *,
    receipt_text: str,
    signature: str,
    key_id: str,
    public_key: str,
    events: Sequence[Mapping[str, Any]],
    line_format: str = BUNDLE_FORMAT,
) -> str:
    """The canonical JSON of a bundle line ({"format", "receipt", "signature", "key_id",
    "public_key", "events"}), around the receipt's canonical text already made for its
    signature: canonical JSON sorts an object's keys and writes each member as it writes the
    value alone, so the line is its members' texts in key order (tests: equal to
    `canonical_json(line)`). `line_format`: the receipt's (`fairness.bundle.line_format`)."""
    return (
        f'{{"events":{canonical_text_float_free(events)},"format":{canonical_text(line_format)},'
        f'"key_id":{canonical_text(key_id)},"public_key":{canonical_text(public_key)},'
        f'"receipt":{receipt_text},"signature":{canonical_text(signature)}}}'
    )


def round_proof_create(
    *, round_id: str, events: Sequence[Mapping[str, Any]], first: bool = False
) -> RoundProof:
    """Build, sign and keep the public proof of a finished round from its stored events.

    `events`: the round's whole stream as stored (body fields plus "hash"), ending with
    ServerSeedRevealed, or with a RoundVoided after it (a staff void of a round that had
    already settled). Idempotent per round id and final event: the same stream gives the same
    proof back. A late void supersedes the settled proof with a voided one over the longer
    stream; the settled receipt a player may hold still verifies against the prefix it
    names, and the proof served from then on is the voided one. `first`: the caller has just
    appended the stream's seed reveal in this transaction, so the round has no proof yet
    (it is not looked up; a proof there all the same fails the insert: round ids are unique).
    """
    existing = None if first else rawsql.first(RoundProof, "round_id = %s", [round_id])
    if existing is not None and (
        not events or events[-1]["version"] <= existing.receipt["final_event_version"]
    ):
        return existing
    bundle_events = [{k: e[k] for k in BUNDLE_EVENT_KEYS} for e in events]
    types = [e["type"] for e in bundle_events]
    ends_revealed = bool(types) and types[-1] == "ServerSeedRevealed"
    late_void = len(types) > 1 and types[-1] == "RoundVoided" and "ServerSeedRevealed" in types
    if not (ends_revealed or late_void):
        raise ApplicationError(
            "A proof needs the finished round's events, ending with the seed reveal.",
            code="round_not_finished",
            status_code=409,
        )
    receipt = receipt_from_events(bundle_events[0]["stream"], bundle_events)
    receipt_text = canonical_text_float_free(receipt)  # stored events and ints: no float
    signature, key = _sign(receipt_text.encode("utf-8"))
    signer, public_key = key.key_id, key.public_key
    fields = {
        "table_id": receipt["table_id"],
        "chain_id": receipt["chain_id"],
        "nonce": receipt["nonce"],
        "receipt": receipt,
        "receipt_canonical": receipt_text,
        "signature": signature,
        "key_id": signer,
        "bundle_line": bundle_line_text(
            receipt_text=receipt_text,
            signature=signature,
            key_id=signer,
            public_key=public_key,
            events=bundle_events,
            line_format=line_format(receipt),
        ),
    }
    transparency.queue_receipt(
        round_id=round_id, receipt_text=receipt_text, signature=signature, key_id=signer
    )
    if existing is not None:  # a late void: the voided proof replaces the settled one
        for name, value in fields.items():
            setattr(existing, name, value)
        existing.save(update_fields=list(fields))
        return existing
    proof = RoundProof(round_id=round_id, **fields)
    rawsql.insert([proof])
    return proof
