"""Read models of the game: tables, seats, rounds and player preferences.

Rounds are projections of the event store: `casino.rounds.projections` rebuilds them from events,
and nothing but the round service writes them. Tables and preferences are plain state.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class TableStatus(models.TextChoices):
    OPEN = "open", "Open"
    CLOSED = "closed", "Closed to new rounds"


class Table(models.Model):
    """A table of one rule set. Its money parameters are fixed per table version."""

    name = models.CharField(max_length=80)
    ruleset = models.CharField(max_length=32)
    version = models.PositiveIntegerField(default=1)
    min_bet = models.BigIntegerField(help_text="micro-USDC per betting field")
    max_bet = models.BigIntegerField(help_text="micro-USDC per betting field")
    chip_unit = models.BigIntegerField(default=10_000, help_text="micro-USDC")
    stake = models.BigIntegerField(default=0, help_text="duel: the fixed stake, micro-USDC")
    seats = models.PositiveSmallIntegerField(default=1)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="personal_tables",
        help_text="classic / atlantic_city: the player whose personal table this is",
    )
    status = models.CharField(max_length=8, choices=TableStatus.choices, default=TableStatus.OPEN)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(min_bet__gt=0) & models.Q(max_bet__gte=models.F("min_bet")),
                name="table_limits_valid",
            ),
            models.CheckConstraint(
                condition=models.Q(chip_unit__gt=0), name="table_chip_unit_positive"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.ruleset})"


class Seat(models.Model):
    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="seated")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="seats"
    )
    position = models.PositiveSmallIntegerField()
    ready = models.BooleanField(default=False)
    joined_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["table", "user"], name="seat_one_per_player"),
            models.UniqueConstraint(fields=["table", "position"], name="seat_position_unique"),
        ]
        ordering = ["table", "position"]

    def __str__(self) -> str:
        return f"seat {self.position} of table {self.table_id}"


class RoundStatus(models.TextChoices):
    OPEN = "open", "Open"
    SETTLED = "settled", "Settled"
    VOIDED = "voided", "Voided"


class Round(models.Model):
    """Projection of one round's event stream (rebuildable with `rebuild_projections`)."""

    id = models.CharField(primary_key=True, max_length=36)
    table = models.ForeignKey(Table, on_delete=models.PROTECT, related_name="rounds")
    ruleset = models.CharField(max_length=32)
    status = models.CharField(max_length=8, choices=RoundStatus.choices, default=RoundStatus.OPEN)
    phase = models.CharField(max_length=32, default="")
    version = models.PositiveIntegerField(default=0, help_text="last event version folded")
    chain_id = models.CharField(max_length=64)
    nonce = models.PositiveIntegerField()
    commitment = models.CharField(max_length=64)
    stake_total = models.BigIntegerField(default=0)
    return_total = models.BigIntegerField(default=0)
    fee = models.BigIntegerField(default=0)
    outcome = models.CharField(max_length=200, default="", blank=True)
    deadline_ms = models.BigIntegerField(null=True, blank=True)
    flagged = models.BooleanField(default=False)
    flag_reason = models.CharField(max_length=200, default="", blank=True)
    opened_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-opened_at"]
        indexes = [
            models.Index(fields=["status", "deadline_ms"]),
            models.Index(fields=["table", "status"]),
            # A table's open round (DEAL, the lobby): only open rounds are in it, so finding
            # one does not grow with the table's history. Queries name status = 'open' as a
            # literal, so a prepared statement's generic plan can use it too.
            models.Index(
                fields=["table", "-opened_at"],
                condition=models.Q(status="open"),
                name="casino_round_open_by_table",
            ),
        ]
        permissions = [
            ("void_round", "Can void a round"),
            ("view_hole_card", "Can see a hole card while the round is open"),
        ]

    def __str__(self) -> str:
        return f"round {self.id} ({self.ruleset}, {self.status})"


class RoundPlayer(models.Model):
    round = models.ForeignKey(Round, on_delete=models.CASCADE, related_name="players")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="rounds"
    )
    seat = models.PositiveSmallIntegerField()
    stake = models.BigIntegerField(default=0)
    gross_return = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["round", "user"], name="round_player_unique"),
        ]
        ordering = ["round", "seat"]

    def __str__(self) -> str:
        return f"seat {self.seat} of round {self.round_id}"


def default_felt() -> str:
    return "green"


class PlayerPreferences(models.Model):
    """Seed 000's options. Insurance offer and safety net change play; the rest is for clients."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="preferences"
    )
    offer_insurance = models.BooleanField(default=True)
    safety_net = models.BooleanField(default=False)
    animation = models.BooleanField(default=True)
    audio = models.BooleanField(default=True)
    left_handed = models.BooleanField(default=False)
    felt = models.CharField(max_length=16, default=default_felt)
    last_bet = models.JSONField(default=list, blank=True, help_text="micro-USDC per box")

    def __str__(self) -> str:
        return f"preferences of {self.user_id}"


class LoginToken(models.Model):
    """One login's API token (a device): `Authorization: Token <key>` or the WebSocket's
    `?token=`. Every login makes its own; logout revokes only the one it was made by, and a
    player lists theirs (`GET /api/auth/tokens/`) and revokes any (`DELETE .../<id>/`).
    Revoking a token ends its login's session too: a login is its session and its token.

    Only a SHA-256 digest of the key is stored (a copy of the table gives no usable token),
    with its first characters to tell tokens apart in the list."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="login_tokens"
    )
    digest = models.CharField(max_length=64, unique=True, help_text="SHA-256 of the key, hex")
    prefix = models.CharField(max_length=8, help_text="the key's first characters")
    created = models.DateTimeField(auto_now_add=True)
    user_agent = models.CharField(max_length=200, blank=True, default="")
    session_key = models.CharField(
        max_length=40, blank=True, default="", help_text="the login's session: revoked with it"
    )

    class Meta:
        ordering = ["user", "created", "id"]

    def __str__(self) -> str:
        return f"token {self.prefix}... of {self.user_id}"
