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
