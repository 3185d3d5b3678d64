"""Seed chains, client seeds, signing keys and round proofs (fairness-v1 on the database side).

Only public data is stored in clear: a chain's secret head is a Fernet token under
settings.SEED_ENCRYPTION_KEYS, and seeds below it are recomputed from the head when needed.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class SeedChain(models.Model):
    """One table's seed chain: round k uses s_k; s_0 (the terminal) is public from creation."""

    class Status(models.TextChoices):
        READY = "ready", "ready (prepared, not yet used)"
        ACTIVE = "active", "active (seeds being handed out)"
        EXHAUSTED = "exhausted", "exhausted"

    table_id = models.CharField(max_length=64, db_index=True)
    length = models.PositiveIntegerField()
    terminal = models.CharField(max_length=64)  # s_0, public
    head_encrypted = models.TextField()  # Fernet token of s_N: never the seed in clear
    next_index = models.PositiveIntegerField(default=1)  # k of the next round to issue
    revealed_index = models.PositiveIntegerField(default=0)  # highest k whose seed is public
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.READY)
    created_at = models.DateTimeField(auto_now_add=True)
    exhausted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["table_id"],
                condition=models.Q(status="active"),
                name="fairness_one_active_chain_per_table",
            ),
            models.CheckConstraint(
                condition=models.Q(next_index__gte=1), name="fairness_chain_next_index_positive"
            ),
        ]

    def __str__(self) -> str:
        return f"chain {self.pk} of table {self.table_id} ({self.status}, next {self.next_index})"

    @property
    def remaining(self) -> int:
        """Seeds not yet handed out."""
        return max(self.length - self.next_index + 1, 0)


class ClientSeed(models.Model):
    """A player's client seed: 1-64 of [A-Za-z0-9_.-], random by default, changed between rounds."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="client_seed"
    )
    seed = models.CharField(max_length=64)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"client seed of user {self.user_id}"


class SigningKey(models.Model):
    """Every receipt-signing public key ever used, so old receipts still verify after rotation."""

    key_id = models.CharField(max_length=16, unique=True)
    public_key = models.CharField(max_length=64)  # raw Ed25519 public key, hex
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"signing key {self.key_id}"


class RoundProof(models.Model):
    """The public proof of a finished round: signed receipt plus its bundle line."""

    round_id = models.CharField(max_length=64, unique=True)
    table_id = models.CharField(max_length=64, db_index=True)
    chain_id = models.CharField(max_length=64)
    nonce = models.PositiveIntegerField()
    receipt = models.JSONField()
    receipt_canonical = models.TextField()  # the exact signed bytes (UTF-8)
    signature = models.CharField(max_length=128)
    key_id = models.CharField(max_length=16)
    bundle_line = models.TextField()  # one JSON Lines line, the format docs/fairness.md defines
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"proof of round {self.round_id}"


# --- the transparency log (docs/fairness.md, "Transparency log") ---------------------------


class LogPending(models.Model):
    """A leaf waiting for the sequencer, queued by the transaction that makes it (a round's
    open or end, a journal entry); the sequencer gives it its index and deletes this row."""

    kind = models.CharField(max_length=32)  # round_opened, round_receipt, journal_entry
    ref = models.CharField(max_length=100)  # the round id or the journal entry id
    data = models.TextField()  # the leaf's canonical JSON
    queued_at = models.DateTimeField()

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"pending {self.kind} {self.ref}"


class LogLeaf(models.Model):
    """One sequenced leaf: its index in the log and the exact bytes (UTF-8) it hashes."""

    index = models.BigIntegerField(primary_key=True)
    kind = models.CharField(max_length=32)
    ref = models.CharField(max_length=100, db_index=True)
    data = models.TextField()
    queued_at = models.DateTimeField()
    sequenced_at = models.DateTimeField()

    class Meta:
        ordering = ["index"]

    def __str__(self) -> str:
        return f"leaf {self.index} ({self.kind} {self.ref})"


class LogTile(models.Model):
    """One tile of the tree (C2SP tlog-tiles layout): up to 256 hashes of tree level 8*level.
    A partial tile at the right edge is rewritten as it grows; only the sequencer writes."""

    level = models.SmallIntegerField()
    index = models.BigIntegerField()
    hashes = models.BinaryField()  # concatenated 32-byte hashes

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["level", "index"], name="fairness_logtile_unique")
        ]

    def __str__(self) -> str:
        return f"tile {self.level}/{self.index} ({len(self.hashes) // 32} hashes)"


class LogState(models.Model):
    """The log's one row: its size and root as the sequencer last wrote them. The sequencer
    locks it, so two sequencers never write at once."""

    id = models.PositiveSmallIntegerField(primary_key=True, default=1)
    size = models.BigIntegerField(default=0)
    root = models.CharField(max_length=64, default="")
    sequenced_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"log of {self.size} leaves"


class LogCheckpoint(models.Model):
    """A signed checkpoint (C2SP tlog-checkpoint in a signed note), one per size the log had."""

    size = models.BigIntegerField(primary_key=True)
    root = models.CharField(max_length=64)  # hex
    note = models.TextField()  # the signed note, exactly as served
    key_id = models.CharField(max_length=16)
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["size"]

    def __str__(self) -> str:
        return f"checkpoint at size {self.size}"


class LogKey(models.Model):
    """Every checkpoint-signing public key ever used, so old checkpoints still verify."""

    key_id = models.CharField(max_length=16, unique=True)  # hex of the note key id
    vkey = models.TextField()  # the note verifier key text
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"log key {self.key_id}"


class LogWitness(models.Model):
    """An outside witness: its cosigner key authenticates what it posts."""

    name = models.CharField(max_length=200, unique=True)
    vkey = models.TextField()
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return f"witness {self.name}"


class LogCosignature(models.Model):
    """A witness's cosignature on one checkpoint, as its signature line."""

    witness = models.ForeignKey(LogWitness, on_delete=models.PROTECT, related_name="cosignatures")
    size = models.BigIntegerField()
    line = models.TextField()
    timestamp = models.BigIntegerField()  # the cosignature's own time, unix seconds
    received_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["size", "witness_id"]
        constraints = [
            models.UniqueConstraint(fields=["witness", "size"], name="fairness_one_cosig_per_size")
        ]

    def __str__(self) -> str:
        return f"cosignature of {self.witness_id} at size {self.size}"


class JournalLink(models.Model):
    """The journal's hash chain as the sequencer links it, in log order: each journal entry's
    own hash (canonical form with its postings) and the chain hash of the entry before it.
    Linked off the money path, so concurrent money writes never wait on a chain head."""

    entry_id = models.BigIntegerField(primary_key=True)
    seq = models.BigIntegerField(unique=True)  # 1, 2, ... in log order
    entry_hash = models.CharField(max_length=64)
    prev_hash = models.CharField(max_length=64)  # chain hash of seq - 1 ("0"*64 for seq 1)
    chain_hash = models.CharField(max_length=64)  # SHA-256(prev_hash || entry_hash), hex
    log_index = models.BigIntegerField()

    class Meta:
        ordering = ["seq"]

    def __str__(self) -> str:
        return f"journal link {self.seq} (entry {self.entry_id})"
