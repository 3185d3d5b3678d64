"""Read models of the dashboard: review state, player display names, stats contributions.

`RoundReview` is folded from the review stream's events; `StatsContribution` from each
finished round's events. Both are rebuilt by `casino.dashboard.projections.rebuild`.
Proxy models give the ledger views their own admin pages and permissions.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.db.models.functions import Lower

from ledger.models import Account, AccountBalance, WithdrawalRequest


class RoundReview(models.Model):
    """Where a round stands in the review queue (projection of `review-<id>` events)."""

    round_id = models.CharField(primary_key=True, max_length=36)
    pending = models.BooleanField(default=False, help_text="flagged and not yet reviewed")
    reasons = models.JSONField(default=list, help_text="every flag reason, oldest first")
    flagged_at = models.DateTimeField(null=True, blank=True)
    reviewed_by = models.CharField(max_length=150, blank=True, default="")
    reviewed_at = models.DateTimeField(null=True, blank=True)
    notes = models.TextField(blank=True, default="")
    resolution = models.CharField(
        max_length=16,
        choices=[("", "open"), ("reviewed", "reviewed"), ("voided", "voided")],
        blank=True,
        default="",
        help_text="how the item left the queue: reviewed (notes) or voided (the void's reason)",
    )
    version = models.PositiveIntegerField(default=0, help_text="last review event folded")

    class Meta:
        permissions = [
            ("flag_round", "Can flag a round for review"),
            ("review_round", "Can mark a flagged round reviewed"),
            ("export_rounds", "Can export rounds for auditors"),
            ("resolve_withdrawal", "Can complete or cancel a withdrawal"),
        ]

    def __str__(self) -> str:
        return f"review of round {self.round_id}"


class PlayerProfile(models.Model):
    """How a player appears on public stats: a chosen display name, or not at all.

    Every player (a user created without staff status) has one from the start: a
    `post_save` receiver creates it (`casino.dashboard.hooks.profile_for_new_player`), and
    migration 0003 created those of the players that existed before.
    """

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="public_profile"
    )
    display_name = models.CharField(max_length=40, blank=True, default="")
    opt_out = models.BooleanField(default=False)

    class Meta:
        constraints = [
            # One player per public name, whatever its case (blank: shown as player-<id>)
            models.UniqueConstraint(
                Lower("display_name"),
                condition=~Q(display_name=""),
                name="dashboard_display_name_unique",
                violation_error_message="Another player has this public name.",
            )
        ]

    def __str__(self) -> str:
        return self.display_name or f"player {self.user_id}"


class StatsContribution(models.Model):
    """One player's money in one finished round (voided rounds contribute nothing)."""

    round_id = models.CharField(max_length=36)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    table_id = models.BigIntegerField()
    ruleset = models.CharField(max_length=32)
    day = models.DateField()
    stake = models.BigIntegerField()
    gross_return = models.BigIntegerField()
    net = models.BigIntegerField(help_text="gross_return - stake, micro-USDC")
    finished_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["round_id", "user"], name="stats_round_user_unique")
        ]
        indexes = [
            models.Index(fields=["day", "user"], name="stats_day_user"),
            models.Index(fields=["net"], name="stats_net"),
            models.Index(fields=["table_id"], name="stats_table"),
        ]

    def __str__(self) -> str:
        return f"{self.user_id} in round {self.round_id}: {self.net}"


class LedgerAccount(Account):
    """Admin page: accounts with their balances."""

    class Meta:
        proxy = True
        verbose_name = "ledger account"


class Receivable(AccountBalance):
    """Admin page: receivables left by voids (a player owes the house)."""

    class Meta:
        proxy = True
        verbose_name = "receivable"


class PendingWithdrawal(WithdrawalRequest):
    """Admin page: pending withdrawals with complete and cancel actions."""

    class Meta:
        proxy = True
        verbose_name = "pending withdrawal"
