"""Read-only admin views of the fairness tables (never a secret: chain heads are not shown),
and the transparency log's page: its size, latest checkpoint, sequencer lag and witnesses."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest, HttpResponse

from casino.dashboard.readonly import ReadOnlyAdmin
from fairness import transparency
from fairness.models import (
    ClientSeed,
    LogCheckpoint,
    LogPending,
    LogWitness,
    RoundProof,
    SeedChain,
    SigningKey,
)


@admin.register(SeedChain)
class SeedChainAdmin(ReadOnlyAdmin):
    list_display = ("id", "table_id", "status", "next_index", "revealed_index", "length")
    list_filter = ("status",)
    search_fields = ("table_id",)
    exclude = ("head_encrypted",)  # encrypted, but still nobody's business


@admin.register(RoundProof)
class RoundProofAdmin(ReadOnlyAdmin):
    list_display = ("round_id", "table_id", "chain_id", "nonce", "key_id", "created_at")
    search_fields = ("round_id", "table_id")
    exclude = ("bundle_line",)


@admin.register(SigningKey)
class SigningKeyAdmin(ReadOnlyAdmin):
    list_display = ("key_id", "public_key", "created_at")


@admin.register(ClientSeed)
class ClientSeedAdmin(ReadOnlyAdmin):
    list_display = ("user", "seed", "updated_at")


@admin.register(LogCheckpoint)
class LogCheckpointAdmin(ReadOnlyAdmin):
    """The transparency log: its checkpoints, with the log's state above the list."""

    list_display = ("size", "root", "key_id", "created_at")
    ordering = ("-size",)

    def changelist_view(self, request: HttpRequest, extra_context: Any = None) -> HttpResponse:
        latest = transparency.latest_checkpoint()
        witnesses = transparency.witness_status()
        context = {
            **(extra_context or {}),
            "log_size": transparency.current_size(),
            "log_latest": None if latest is None else transparency.checkpoint_text(latest),
            "log_pending": LogPending.objects.count(),
            "log_lag_s": round(transparency.merge_delay_s(), 1),
            "log_max_delay_s": transparency.max_merge_delay_s(),
            "log_witnesses": witnesses,
            "log_overdue": [w["name"] for w in witnesses if w["overdue"]],
        }
        return super().changelist_view(request, extra_context=context)


@admin.register(LogWitness)
class LogWitnessAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    """The witnesses whose cosignatures the log accepts (added by a superuser)."""

    list_display = ("name", "active", "last_cosigned", "created_at")
    list_filter = ("active",)

    @admin.display(description="last cosigned size")
    def last_cosigned(self, obj: LogWitness) -> str:
        last = obj.cosignatures.order_by("-size").first()
        return "never" if last is None else f"{last.size} ({last.received_at:%Y-%m-%d %H:%M} UTC)"
