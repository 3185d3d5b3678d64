"""The staff dashboard on Django admin: rounds (review, flag, void), tables, the event log.

Rounds and events are read-only here: every change to a round goes through the round
service (`casino.rounds.services`) or the review service (`casino.dashboard.review`), and the
custom pages live in `casino.dashboard.views`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import UTC
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.views.main import ChangeList
from django.db.models import Prefetch, QuerySet
from django.http import HttpRequest
from django.urls import URLPattern, path
from django.utils.html import format_html

from casino.dashboard import display, roundpage
from casino.dashboard import views as dashboard_views
from casino.dashboard.readonly import ReadOnlyAdmin
from casino.dashboard.templatetags.usdc import short_id as short_id_html
from casino.engine.rules import DUEL, RULESETS
from casino.eventstore.models import StoredEvent
from casino.models import Round, RoundPlayer, RoundStatus, Table, TableStatus
from casino.tables.services import table_add, table_problems
from ledger.money import usdc

CARD = re.compile(r"[2-9TJQKA][SHDC]")

# "View site": there is no player site yet (another issue adds /play/); the public page a
# player has today is the fairness verify page.
admin.site.site_url = "/fairness/verify/"


@admin.register(Round)
class RoundAdmin(ReadOnlyAdmin):
    """The rounds list; a round's page is the review page (`dashboard_views.round_review`)."""

    # Fits 1366 px: the id cut to 8 characters (the full id in its title, and in the search).
    list_display = (
        "round",
        "ruleset",
        "table_name",
        "player_names",
        "status",
        "flag",
        "stake",
        "returned",
        "fee_usdc",
        "outcome_text",
        "opened",
    )
    list_filter = ("ruleset", "table", "status", "flagged", "opened_at")
    date_hierarchy = "opened_at"
    search_fields = ("id", "players__user__username")
    list_select_related = ("table",)
    list_per_page = 50

    def get_queryset(self, request: HttpRequest) -> QuerySet[Round]:
        seated = RoundPlayer.objects.select_related("user").order_by("seat")
        return super().get_queryset(request).prefetch_related(Prefetch("players", seated))

    @admin.display(description="round", ordering="id")
    def round(self, obj: Round) -> str:
        return short_id_html(obj.id)

    @admin.display(description="table", ordering="table__name")
    def table_name(self, obj: Round) -> str:
        return f"{obj.table.name} v{obj.table.version}"

    @admin.display(description="players")
    def player_names(self, obj: Round) -> str:
        names = ", ".join(p.user.get_username() for p in obj.players.all())
        return format_html('<span title="{}">{}</span>', names, names)

    @admin.display(description="flag", boolean=True, ordering="flagged")
    def flag(self, obj: Round) -> bool:
        return obj.flagged

    @admin.display(description="stake", ordering="stake_total")
    def stake(self, obj: Round) -> str:
        return usdc(obj.stake_total)

    @admin.display(description="return", ordering="return_total")
    def returned(self, obj: Round) -> str:
        return usdc(obj.return_total)

    @admin.display(description="fee", ordering="fee")
    def fee_usdc(self, obj: Round) -> str:
        return usdc(obj.fee)

    @admin.display(description="outcome")
    def outcome_text(self, obj: Round) -> str:
        names = {str(p.user_id): p.user.get_username() for p in obj.players.all()}
        text = display.outcome_text(obj.outcome, names)
        return format_html('<span title="{}">{}</span>', text, text)  # cut by the page's CSS

    @admin.display(description="opened (UTC)", ordering="opened_at")
    def opened(self, obj: Round) -> str:
        when = obj.opened_at.astimezone(UTC)
        return format_html(
            '<span title="{}">{}</span>', when.isoformat(), when.strftime("%Y-%m-%d %H:%M")
        )

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

    def clean(self) -> dict[str, Any]:
        """The rule set's bounds, as `table_create` checks them: a table the engine would
        refuse to open a round at is refused here, in words (not as a violated constraint)."""
        data = super().clean() or {}
        ruleset, seats = data.get("ruleset"), data.get("seats")
        amounts = [data.get(f) for f in ("min_bet", "max_bet", "chip_unit", "stake")]
        if ruleset not in RULESETS or seats is None or None in amounts:
            return data  # the field errors already say what is missing
        min_bet, max_bet, chip_unit, stake = (int(a) for a in amounts)  # type: ignore[arg-type]
        # A duel's limits are its fixed stake.
        if RULESETS[ruleset].kind == DUEL and (min_bet, max_bet) != (stake, stake):
            raise forms.ValidationError(
                "A duel table plays for its fixed stake: set min bet, max bet and stake to the "
                "same amount."
            )
        problems = table_problems(
            ruleset, min_bet=min_bet, max_bet=max_bet, chip_unit=chip_unit, seats=seats
        )
        if problems:
            raise forms.ValidationError([p[:1].upper() + p[1:] + "." for p in problems])
        return data

    def _post_clean(self) -> None:
        # clean() said what is wrong in words: the model's CHECK constraints would only add
        # "Constraint “table_limits_valid” is violated." (they stay the database's guard).
        if not self.errors:
            super()._post_clean()  # type: ignore[misc]


# A saved table's amount fields and the methods that show them in USDC.
MONEY_SHOWN = {
    "min_bet": "min_bet_usdc",
    "max_bet": "max_bet_usdc",
    "chip_unit": "chip_unit_usdc",
    "stake": "stake_usdc",
}


@admin.register(Table)
class TableAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    """Create tables and close them; parameters are never edited (a new version instead)."""

    form = TableForm
    list_display = (
        "id",
        "name",
        "ruleset",
        "version",
        "min_bet_usdc",
        "max_bet_usdc",
        "chip_unit_usdc",
        "stake_usdc",
        "seats",
        "status",
        "owner",
    )
    list_filter = ("ruleset", "status")
    search_fields = ("name", "owner__username")
    actions = ("close_tables", "new_versions")

    @admin.display(description="min bet", ordering="min_bet")
    def min_bet_usdc(self, obj: Table) -> str:
        return usdc(obj.min_bet)

    @admin.display(description="max bet", ordering="max_bet")
    def max_bet_usdc(self, obj: Table) -> str:
        return usdc(obj.max_bet)

    @admin.display(description="chip unit", ordering="chip_unit")
    def chip_unit_usdc(self, obj: Table) -> str:
        return usdc(obj.chip_unit)

    @admin.display(description="stake (duel)", ordering="stake")
    def stake_usdc(self, obj: Table) -> str:
        return usdc(obj.stake) if obj.stake else "—"

    def get_readonly_fields(self, request: HttpRequest, obj: Table | None = None) -> Any:
        # Rounds carry their table's parameters: a saved table never changes them. Its
        # amounts show in USDC, like the list's.
        if obj is not None:
            shown = (MONEY_SHOWN.get(f, f) for f in TableForm.Meta.fields)
            return (*shown, "version", "status", "created_at")
        return ()

    def get_exclude(self, request: HttpRequest, obj: Table | None = None) -> Any:
        # A saved table's amounts are read-only fields shown in USDC, not form fields.
        return tuple(MONEY_SHOWN) if obj is not None else super().get_exclude(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: Table, form: Any, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
        else:  # a new table gets its first seed chain in the same transaction
            table_add(obj)

    @admin.action(description="Close selected tables to new rounds", permissions=["change"])
    def close_tables(self, request: HttpRequest, queryset: QuerySet[Table]) -> None:
        closed = queryset.filter(status=TableStatus.OPEN).update(status=TableStatus.CLOSED)
        self.message_user(request, f"Closed {closed} table(s) to new rounds.", messages.SUCCESS)

    @admin.action(
        description="Close and open a new version (same parameters, edit by creating anew)",
        permissions=["add", "change"],
    )
    def new_versions(self, request: HttpRequest, queryset: QuerySet[Table]) -> None:
        made, skipped = dashboard_views.table_new_versions(tables=list(queryset.order_by("pk")))
        for table, newer in skipped:
            self.message_user(
                request,
                f"Not opened: {table.name} v{table.version} (#{table.pk}) already has "
                f"v{newer.version} (#{newer.pk}).",
                messages.ERROR,
            )
        if made:
            self.message_user(
                request,
                "Opened " + ", ".join(f"{t.name} v{t.version} (#{t.pk})" for t in made),
                messages.SUCCESS,
            )


class StoredEventChangeList(ChangeList):
    def get_results(self, request: HttpRequest) -> None:
        super().get_results(request)
        self.result_list = list(self.result_list)
        _mask(request, self.result_list)


def _mask(request: HttpRequest, events: Sequence[StoredEvent]) -> None:
    """Set each event's `shown_data`: its data with the cards the user may not see masked."""
    shown = roundpage.staff_event_data(events, request.user)
    for event in events:
        event.shown_data = shown[event.pk]  # type: ignore[attr-defined]


@admin.register(StoredEvent)
class StoredEventAdmin(ReadOnlyAdmin):
    """The event log, read-only (the database's triggers refuse UPDATE and DELETE too).

    Event data is shown only through `roundpage.staff_event_data`: the hole card and a duel's
    hidden cards of a round not yet ended show as HIDDEN_CARD, as on the round review page,
    and a search by card value does not find them.
    """

    list_display = ("position", "stream_id", "version", "type", "card", "recorded_at", "hash")
    list_filter = ("type",)
    search_fields = ("stream_id",)
    search_help_text = (
        f"Round id, or a card (e.g. AS). Cards dealt face down show as {roundpage.HIDDEN_CARD} "
        "until the round ends."
    )
    fields = readonly_fields = (
        "position",
        "stream_id",
        "version",
        "type",
        "schema_version",
        "event_data",
        "recorded_at",
        "prev_hash",
        "hash",
    )

    def get_changelist(self, request: HttpRequest, **kwargs: Any) -> type[ChangeList]:
        return StoredEventChangeList

    def get_object(
        self, request: HttpRequest, object_id: str, from_field: str | None = None
    ) -> StoredEvent | None:
        event = super().get_object(request, object_id, from_field)
        if event is not None:
            _mask(request, [event])
        return event

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet[StoredEvent], search_term: str
    ) -> tuple[QuerySet[StoredEvent], bool]:
        """By stream id, or by card value among the cards the user may see."""
        results, duplicates = super().get_search_results(request, queryset, search_term)
        term = search_term.strip().upper()
        if CARD.fullmatch(term):
            matches = queryset.filter(data__card=term)
            ended = Round.objects.exclude(status=RoundStatus.OPEN).values("id")
            live = list(matches.exclude(stream_id__in=ended))
            shown = roundpage.staff_event_data(live, request.user)
            hidden = [e.pk for e in live if shown[e.pk].get("card") != term]
            results = results | matches.exclude(pk__in=hidden)
        return results, duplicates

    @admin.display(description="card")
    def card(self, obj: StoredEvent) -> str:
        data = getattr(obj, "shown_data", None)
        return str(data.get("card", "")) if isinstance(data, dict) else ""

    @admin.display(description="data")
    def event_data(self, obj: StoredEvent) -> str:
        data = getattr(obj, "shown_data", None)
        if data is None:  # not loaded through get_object: show nothing rather than guess
            return ""
        return format_html(
            "<pre>{}</pre>", json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False)
        )
