"""The double-entry ledger: accounts, immutable journal entries and their postings.

Money is an int of micro-USDC in a BigIntegerField. Every entry's postings sum to zero; an
account's balance is the sum of its postings, also stored in `AccountBalance` and updated in
the same transaction under row locks. Migrations add the database's own guarantees:
append-only triggers, a deferred balance check (PostgreSQL) and CHECK (balance >= 0).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from ledger.money import usdc


class AccountType(models.TextChoices):
    PLAYER_AVAILABLE = "player_available", "Player available"
    ROUND_ESCROW = "round_escrow", "Round escrow"
    HOUSE_BANKROLL = "house_bankroll", "House bankroll"
    HOUSE_FEE_REVENUE = "house_fee_revenue", "House fee revenue"
    EXTERNAL = "external", "External (deposits and withdrawals)"
    PENDING_WITHDRAWAL = "pending_withdrawal", "Pending withdrawal"
    RECEIVABLE = "receivable", "Receivable (owed by a player)"


# The only types the database lets go below zero; settings.LEDGER_NEGATIVE_BALANCE_TYPES
# chooses which of these actually may (the "as configured" part).
NEGATIVE_CAPABLE_TYPES = (
    AccountType.EXTERNAL,
    AccountType.HOUSE_BANKROLL,
    AccountType.HOUSE_FEE_REVENUE,
    AccountType.RECEIVABLE,
)


class EntryKind(models.TextChoices):
    DEPOSIT = "deposit"
    WITHDRAWAL_REQUESTED = "withdrawal_requested"
    WITHDRAWAL_COMPLETED = "withdrawal_completed"
    WITHDRAWAL_CANCELLED = "withdrawal_cancelled"
    BET = "bet"
    INSURANCE = "insurance"
    PAYOUT = "payout"
    FEE = "fee"
    REFUND = "refund"
    VOID_REVERSAL = "void_reversal"


class EscrowState(models.TextChoices):
    OPEN = "open"
    SETTLED = "settled"
    VOIDED = "voided"


class Account(models.Model):
    """One ledger account. `key` names it uniquely, e.g. "player_available:42"."""

    key = models.CharField(max_length=160, unique=True)
    type = models.CharField(max_length=32, choices=AccountType.choices)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="ledger_accounts",
    )
    round_ref = models.CharField(max_length=100, blank=True, default="")
    currency = models.CharField(max_length=8, default="USDC")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["owner", "type"], name="ledger_acct_owner_type")]

    def __str__(self) -> str:
        return self.key


class AccountBalance(models.Model):
    """The stored balance of one account: the row that is locked when money moves.

    `account_type` is copied here so the CHECK constraint can name the types that may never
    go negative; `state` is the lifecycle of a round escrow (open, settled, voided).
    """

    account = models.OneToOneField(
        Account, primary_key=True, on_delete=models.PROTECT, related_name="balance_row"
    )
    account_type = models.CharField(max_length=32, choices=AccountType.choices)
    may_go_negative = models.BooleanField(default=False)
    balance = models.BigIntegerField(default=0)
    state = models.CharField(max_length=16, choices=EscrowState.choices, default=EscrowState.OPEN)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(balance__gte=0)
                | Q(
                    may_go_negative=True, account_type__in=[t.value for t in NEGATIVE_CAPABLE_TYPES]
                ),
                name="ledger_balance_nonnegative",
            )
        ]

    def __str__(self) -> str:
        return f"balance of {self.account.key}: {usdc(self.balance)}"


class JournalEntry(models.Model):
    """An immutable journal entry; its postings sum to zero. Corrections are new entries."""

    kind = models.CharField(max_length=32, choices=EntryKind.choices)
    # "round:<id>", "withdrawal:<id>", "request:<user>:<key>"...
    reference = models.CharField(max_length=160, db_index=True)
    idempotency_key = models.CharField(max_length=200, unique=True)
    # sha256 of what was asked for: the same key with another fingerprint is refused.
    fingerprint = models.CharField(max_length=64)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        db_index=False,  # never queried by; one index less on every insert
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "journal entries"
        constraints = [
            # A round is voided at most once, whatever idempotency key the second try carries.
            models.UniqueConstraint(
                fields=["reference"],
                condition=Q(kind="void_reversal"),
                name="ledger_one_void_per_reference",
            )
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.reference} #{self.pk}"


class Posting(models.Model):
    """One signed amount on one account within an entry (positive = the account gains)."""

    entry = models.ForeignKey(JournalEntry, on_delete=models.PROTECT, related_name="postings")
    # No separate index: the (account, entry) index below serves account lookups too.
    account = models.ForeignKey(
        Account, on_delete=models.PROTECT, related_name="postings", db_index=False
    )
    amount = models.BigIntegerField()

    class Meta:
        constraints = [
            models.CheckConstraint(condition=~Q(amount=0), name="ledger_posting_nonzero"),
        ]
        indexes = [models.Index(fields=["account", "entry"], name="ledger_post_account_entry")]

    def __str__(self) -> str:
        return f"entry #{self.entry_id} {self.account.key}: {usdc(self.amount)}"


class WithdrawalStatus(models.TextChoices):
    PENDING = "pending"
    COMPLETED = "completed"
    CANCELLED = "cancelled"


class WithdrawalNetwork(models.TextChoices):
    """Where a withdrawal goes (`ledger.destinations` checks the address for each)."""

    NONE = "", "not recorded"  # requests made before destinations were recorded
    ETHEREUM = "ethereum", "Ethereum"
    POLYGON = "polygon", "Polygon"
    ARBITRUM = "arbitrum", "Arbitrum One"
    BASE = "base", "Base"
    SOLANA = "solana", "Solana"


class WithdrawalRequest(models.Model):
    """A player's request to withdraw; funds sit in pending_withdrawal until staff decide.

    Its journal entries (request, then completion or cancellation) share its own reference,
    `withdrawal:<id>`. Completing it needs a destination and someone other than the requester.
    """

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="withdrawals"
    )
    amount_micro = models.BigIntegerField()
    status = models.CharField(
        max_length=16, choices=WithdrawalStatus.choices, default=WithdrawalStatus.PENDING
    )
    network = models.CharField(
        max_length=16, choices=WithdrawalNetwork.choices, blank=True, default=""
    )
    address = models.CharField(max_length=64, blank=True, default="")
    # Set in the transaction that creates the row (the entry's reference needs the row's id).
    request_entry = models.OneToOneField(
        JournalEntry,
        null=True,
        on_delete=models.PROTECT,
        related_name="withdrawal_requested",
    )
    resolution_entry = models.OneToOneField(
        JournalEntry,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="withdrawal_resolved",
    )
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    resolved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(amount_micro__gt=0), name="ledger_withdrawal_positive"
            )
        ]

    def __str__(self) -> str:
        return f"withdrawal {self.pk} ({self.status})"

    @property
    def reference(self) -> str:
        """The reference of this withdrawal's journal entries (unique per withdrawal)."""
        return withdrawal_reference(self.pk)


def withdrawal_reference(withdrawal_id: int | None) -> str:
    return f"withdrawal:{withdrawal_id}"


class IdempotencyRecord(models.Model):
    """The stored response to a money-moving request, replayed for the same key and body."""

    key = models.CharField(max_length=200, unique=True)
    operation = models.CharField(max_length=64)
    fingerprint = models.CharField(max_length=64)
    status_code = models.PositiveSmallIntegerField()
    response = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    def __str__(self) -> str:
        return f"idempotency {self.key}"
