"""The staff dashboard on Django admin: rounds (review, flag, void), tables, the event log.

Rounds and events are read-only here: every change to a round goes through the round
service (`casino.services`) or the review service (`casino.dashboard.review`), and the
custom pages live in `casino.dashboard.views`.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import URLPattern, path

from casino.dashboard import views as dashboard_views
from casino.engine.rules import RULESETS
from casino.eventstore.models import StoredEvent
from casino.models import Round, Table, TableStatus
from ledger.money import format_amount


class ReadOnlyAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    """Immutable records: no add, change or delete in the admin, and so no bulk delete."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Round)
class RoundAdmin(ReadOnlyAdmin):
    """The rounds list; a round's page is the review page (`dashboard_views.round_review`)."""

    list_display = (
        "id",
        "ruleset",
        "table",
        "status",
        "flagged",
        "stake",
        "returned",
        "fee_usdc",
        "outcome",
        "opened_at",
    )
    list_filter = ("ruleset", "table", "status", "flagged", "opened_at")
    date_hierarchy = "opened_at"
    search_fields = ("id", "players__user__username")
    list_select_related = ("table",)
    list_per_page = 50

    @admin.display(description="stake (USDC)", ordering="stake_total")
    def stake(self, obj: Round) -> str:
        return format_amount(obj.stake_total)

    @admin.display(description="return (USDC)", ordering="return_total")
    def returned(self, obj: Round) -> str:
        return format_amount(obj.return_total)

    @admin.display(description="fee (USDC)", ordering="fee")
    def fee_usdc(self, obj: Round) -> str:
        return format_amount(obj.fee)

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet[Round], search_term: str
    ) -> tuple[QuerySet[Round], bool]:
        """Search by round id, player username, or player id (digits)."""
        results, duplicates = super().get_search_results(request, queryset, search_term)
        term = search_term.strip()
        if term.isdigit():
            results = results | queryset.filter(players__user_id=int(term))
            duplicates = True
        return results, duplicates

    def get_urls(self) -> list[URLPattern]:
        wrap = self.admin_site.admin_view
        own = [
            path("queue/", wrap(dashboard_views.review_queue_page), name="casino_round_queue"),
            path("report/", wrap(dashboard_views.daily_report_page), name="casino_round_report"),
            path(
                "report.csv", wrap(dashboard_views.daily_report_csv), name="casino_round_report_csv"
            ),
            path("<str:round_id>/flag/", wrap(dashboard_views.round_flag_page), name="round_flag"),
            path(
                "<str:round_id>/reviewed/",
                wrap(dashboard_views.round_reviewed_page),
                name="round_reviewed",
            ),
            path("<str:round_id>/void/", wrap(dashboard_views.round_void_page), name="round_void"),
            path(
                "<str:round_id>/review/",
                wrap(dashboard_views.round_review),
                name="round_review",
            ),
        ]
        return own + super().get_urls()

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> Any:
        return dashboard_views.round_review(request, object_id)


class TableForm(forms.ModelForm):  # type: ignore[type-arg]
    ruleset = forms.ChoiceField(choices=[(r, r) for r in RULESETS])

    class Meta:
        model = Table
        fields = ("name", "ruleset", "min_bet", "max_bet", "chip_unit", "stake", "seats", "owner")


@admin.register(Table)
class TableAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    """Create tables and close them; parameters are never edited (a new version instead)."""

    form = TableForm
    list_display = (
        "id",
        "name",
        "ruleset",
        "version",
        "min_bet",
        "max_bet",
        "chip_unit",
        "stake",
        "seats",
        "status",
        "owner",
    )
    list_filter = ("ruleset", "status")
    search_fields = ("name", "owner__username")
    actions = ("close_tables", "new_versions")

    def get_readonly_fields(self, request: HttpRequest, obj: Table | None = None) -> Any:
        # Rounds carry their table's parameters: a saved table never changes them.
        if obj is not None:
            return (*TableForm.Meta.fields, "version", "status", "created_at")
        return ()

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.action(description="Close selected tables to new rounds", permissions=["change"])
    def close_tables(self, request: HttpRequest, queryset: QuerySet[Table]) -> None:
        closed = queryset.filter(status=TableStatus.OPEN).update(status=TableStatus.CLOSED)
        self.message_user(request, f"Closed {closed} table(s) to new rounds.", messages.SUCCESS)

    @admin.action(
        description="Close and open a new version (same parameters, edit by creating anew)",
        permissions=["add", "change"],
    )
    def new_versions(self, request: HttpRequest, queryset: QuerySet[Table]) -> None:
        made = dashboard_views.table_new_versions(tables=list(queryset))
        self.message_user(
            request,
            "Opened " + ", ".join(f"{t.name} v{t.version} (#{t.pk})" for t in made),
            messages.SUCCESS,
        )


@admin.register(StoredEvent)
class StoredEventAdmin(ReadOnlyAdmin):
    """The event log, read-only (the database's triggers refuse UPDATE and DELETE too)."""

    list_display = ("position", "stream_id", "version", "type", "recorded_at", "hash")
    list_filter = ("type",)
    search_fields = ("stream_id",)
    readonly_fields = (
        "position",
        "stream_id",
        "version",
        "type",
        "schema_version",
        "data",
        "recorded_at",
        "prev_hash",
        "hash",
    )
