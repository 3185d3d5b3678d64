"""Read-only admin views of the fairness tables (never a secret: chain heads are not shown)."""

from __future__ import annotations

from django.contrib import admin

from casino.dashboard.readonly import ReadOnlyAdmin
from fairness.models import ClientSeed, RoundProof, SeedChain, SigningKey


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
