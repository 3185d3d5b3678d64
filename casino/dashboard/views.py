"""Admin pages of the staff dashboard (mounted by `admin_game.RoundAdmin.get_urls`).

Views only check permissions, parse the form, call one service and render.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, timedelta
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.auth.models import Group, Permission
from django.core.exceptions import BadRequest, PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone
from django.views import defaults

from casino.dashboard import display, report, review, roundpage
from casino.dashboard.models import RoundReview
from casino.dashboard.roles import ROLES
from casino.dashboard.tables import table_new_versions
from casino.models import Round
from casino.platform.errors import ApplicationError
from casino.rounds.stream import round_load
from ledger.money import usdc

__all__ = ["table_new_versions"]

VIEW_ROUND = "casino.view_round"
VOID_ROUND = "casino.void_round"
FLAG_ROUND = "dashboard.flag_round"
REVIEW_ROUND = "dashboard.review_round"


class StaffPermissionDenied(PermissionDenied):
    """A dashboard refusal that knows the permission it wanted (for the 403 page)."""

    def __init__(self, permission: str) -> None:
        super().__init__(f"needs the {permission} permission")
        self.permission = permission


def _require(request: HttpRequest, perm: str) -> None:
    if not request.user.has_perm(perm):
        raise StaffPermissionDenied(perm)


def _admin_permission(request: HttpRequest) -> str | None:
    """The permission an admin page refused for: from its URL name (`app_model_add`...)."""
    match = getattr(request, "resolver_match", None)
    name = getattr(match, "url_name", None) or ""
    for model in admin.site._registry:
        meta = model._meta
        prefix = f"{meta.app_label}_{meta.model_name}_"
        if name.startswith(prefix):
            action = ADMIN_PAGE_ACTIONS.get(name[len(prefix) :], "view")
            return f"{meta.app_label}.{action}_{meta.model_name}"
    return None


ADMIN_PAGE_ACTIONS = {"add": "add", "delete": "delete", "changelist": "view", "change": "view"}


def roles_granting(permission: str) -> list[str]:
    """The staff roles (groups) holding `permission`, then "superuser" (who holds every one)."""
    app_label, _, codename = permission.partition(".")
    groups = Group.objects.filter(
        name__in=ROLES,
        permissions__content_type__app_label=app_label,
        permissions__codename=codename,
    )
    held = set(groups.values_list("name", flat=True))
    return [*(role for role in ROLES if role in held), "superuser"]


def permission_denied(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """handler403: in the staff dashboard, a styled page naming the role needed."""
    user = request.user
    if not (
        request.path.startswith(reverse("admin:index"))
        and user.is_authenticated
        and getattr(user, "is_staff", False)
    ):
        return defaults.permission_denied(request, exception or PermissionDenied())
    permission = getattr(exception, "permission", None) or _admin_permission(request)
    roles = roles_granting(permission) if permission else ["superuser"]
    label = ""
    if permission:
        app_label, _, codename = permission.partition(".")
        found = Permission.objects.filter(
            content_type__app_label=app_label, codename=codename
        ).first()
        label = found.name if found else ""
    context = {
        **admin.site.each_context(request),
        "title": "Not allowed",
        "permission": permission,
        "permission_label": label,
        "roles_needed": roles,
        "needed_text": _roles_text(roles),
        "your_roles": sorted(user.groups.filter(name__in=ROLES).values_list("name", flat=True)),
    }
    return TemplateResponse(request, "admin/casino/403.html", context, status=403)


def _roles_text(roles: list[str]) -> str:
    """["manager", "superuser"] -> "the manager role (or a superuser)"."""
    staff = [r for r in roles if r != "superuser"]
    if not staff:
        return "a superuser"
    named = " or ".join(staff)
    return f"the {named} role{'s' if len(staff) > 1 else ''} (or a superuser)"


def _context(request: HttpRequest, title: str, **extra: Any) -> dict[str, Any]:
    return {
        **admin.site.each_context(request),
        "title": title,
        "opts": Round._meta,
        **extra,
    }


class FlagForm(forms.Form):
    reason = forms.CharField(
        max_length=200,
        widget=forms.TextInput(attrs={"size": 60}),
        error_messages={"required": "A flag needs a reason."},
    )


class ReviewedForm(forms.Form):
    notes = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3, "cols": 60}),
        error_messages={"required": "Reviewing needs notes: write what you checked."},
    )


class VoidForm(forms.Form):
    reason = forms.CharField(widget=forms.Textarea(attrs={"rows": 3, "cols": 60}))
    confirm = forms.BooleanField(
        label="I confirm: refund every stake, reverse every payout and reveal the seed"
    )


def round_review(request: HttpRequest, round_id: str) -> HttpResponse:
    """The round review page: badges, timeline with cards, players, ledger, staff actions."""
    return _review_page(request, round_id)


def _review_page(
    request: HttpRequest,
    round_id: str,
    *,
    flag_form: forms.Form | None = None,
    reviewed_form: forms.Form | None = None,
    status: int = 200,
) -> HttpResponse:
    _require(request, VIEW_ROUND)
    row = Round.objects.select_related("table").filter(id=round_id).first()
    if row is None:
        raise Http404("no such round")
    stored, state = round_load(round_id=round_id)
    if state is None:
        raise Http404("the round has no events")
    # Hidden cards are secret only while the round is open; after it, the seed is public anyway.
    can_see_hole = roundpage.may_see_hidden_cards(request.user, state)
    rendered = roundpage.staff_view(state, can_see_hole)
    players = list(row.players.select_related("user").order_by("seat"))
    names = {str(p.user_id): p.user.get_username() for p in players}
    context = _context(
        request,
        f"Round {round_id}",
        round=row,
        state_view=rendered,
        hand_rows=roundpage.hand_rows(rendered, names),
        outcome=display.outcome_text(row.outcome, names),
        can_see_hole=can_see_hole,
        badges=roundpage.badges(round_id, state),
        timeline=roundpage.timeline(stored, rendered),
        players=players,
        entries=roundpage.ledger_entries(round_id),
        staff_actions=review.review_events(round_id),
        review_row=RoundReview.objects.filter(round_id=round_id).first(),
        proof_url=f"/api/fairness/rounds/{round_id}",
        verify_url=f"/fairness/verify/?round={round_id}",
        can_flag=request.user.has_perm(FLAG_ROUND),
        can_review=request.user.has_perm(REVIEW_ROUND),
        can_void=request.user.has_perm(VOID_ROUND) and row.status != "voided",
        flag_form=flag_form or FlagForm(),
        reviewed_form=reviewed_form or ReviewedForm(),
    )
    return TemplateResponse(request, "admin/casino/round/review.html", context, status=status)


def _back(round_id: str) -> HttpResponse:
    return redirect(reverse("admin:round_review", args=[round_id]))


def _staff_post(
    request: HttpRequest,
    round_id: str,
    *,
    permission: str,
    form_class: type[forms.Form],
    act: Callable[[dict[str, Any]], object],
    done: str,
    invalid: str,
    form_name: str,
) -> HttpResponse:
    """A staff action posted from the review page: check, validate, act, report, go back.

    An invalid form (no reason, empty notes) is not a no-op: the review page comes back
    (400) with the error at the top and on the form's field."""
    _require(request, permission)
    if request.method != "POST":
        return _back(round_id)
    form = form_class(request.POST)
    if form.is_valid():
        try:
            act(form.cleaned_data)
        except ApplicationError as error:  # e.g. the item was closed meanwhile: say so
            form.add_error(None, error.message)
            messages.error(request, error.message)
            return _review_page(request, round_id, status=error.status_code, **{form_name: form})
        messages.success(request, done)
        return _back(round_id)
    messages.error(request, invalid)
    return _review_page(request, round_id, status=400, **{form_name: form})


def round_flag_page(request: HttpRequest, round_id: str) -> HttpResponse:
    return _staff_post(
        request,
        round_id,
        permission=FLAG_ROUND,
        form_class=FlagForm,
        act=lambda data: review.round_flag(
            round_id=round_id, reason=data["reason"], user=request.user
        ),
        done="Round flagged for review.",
        invalid="Not flagged: a flag needs a reason.",
        form_name="flag_form",
    )


def round_reviewed_page(request: HttpRequest, round_id: str) -> HttpResponse:
    return _staff_post(
        request,
        round_id,
        permission=REVIEW_ROUND,
        form_class=ReviewedForm,
        act=lambda data: review.round_review_mark(
            round_id=round_id, notes=data["notes"], user=request.user
        ),
        done="Round marked reviewed.",
        invalid="Not marked reviewed: write what you checked in the notes.",
        form_name="reviewed_form",
    )


def round_void_page(request: HttpRequest, round_id: str) -> HttpResponse:
    """GET: the confirmation form; POST with a reason and the confirmation: void the round."""
    _require(request, VOID_ROUND)
    row = Round.objects.filter(id=round_id).first()
    if row is None:
        raise Http404("no such round")
    form = VoidForm(request.POST or None)
    status = 200
    if request.method == "POST" and form.is_valid():
        try:
            result = review.round_void_by_staff(
                round_id=round_id, reason=form.cleaned_data["reason"], user=request.user
            )
        except ApplicationError as error:  # e.g. voided meanwhile, from another tab
            messages.error(request, f"Not voided: {error.message.rstrip('.')}.")
            row.refresh_from_db()
            status = error.status_code
        else:
            owed = "".join(
                f" {name} could not pay back {usdc(amount)} of winnings: they now owe it "
                "(Receivables)."
                for name, amount in roundpage.void_shortfalls(round_id)
            )
            messages.success(
                request,
                f"Round voided: {usdc(result.round.stake_total)} of stakes refunded, every "
                "payout reversed; server seed revealed; its review-queue item is closed." + owed,
            )
            return _back(round_id)
    context = _context(request, f"Void round {round_id}", round=row, form=form)
    return TemplateResponse(request, "admin/casino/round/void.html", context, status=status)


def review_queue_page(request: HttpRequest) -> HttpResponse:
    _require(request, VIEW_ROUND)
    rows = review.review_queue().prefetch_related("players__user")
    reviews = {r.round_id: r for r in RoundReview.objects.filter(pending=True)}
    items = [
        (r, reviews.get(r.id), ", ".join(p.user.get_username() for p in r.players.all()))
        for r in rows
    ]
    return TemplateResponse(
        request, "admin/casino/round/queue.html", _context(request, "Review queue", items=items)
    )


def _report_range(request: HttpRequest) -> tuple[date, date]:
    today = timezone.now().date()
    try:
        until = (
            date.fromisoformat(request.GET.get("until", "")) if request.GET.get("until") else today
        )
        since = (
            date.fromisoformat(request.GET["since"])
            if request.GET.get("since")
            else until - timedelta(days=13)
        )
    except ValueError as exc:
        raise BadRequest("dates are YYYY-MM-DD") from exc
    return since, until


def daily_report_page(request: HttpRequest) -> HttpResponse:
    _require(request, VIEW_ROUND)
    since, until = _report_range(request)
    built = report.build(since=since, until=until)
    # A reversed range holds no day: say so, not "No finished rounds in this range."
    range_error = (
        f"From ({since}) is after to ({until}): no day is in this range. Pick a From on or "
        "before the To."
        if since > until
        else ""
    )
    context = _context(
        request,
        "Daily report",
        range_error=range_error,
        rows=[(r, report.printed(r)) for r in built.rows],
        totals=report.printed(built.totals),
        totals_row=built.totals,
        by_ruleset=[(r, report.printed(r)) for r in built.by_ruleset],
        by_table=[(r, report.printed(r)) for r in built.by_table],
        since=since,
        until=until,
        chart=report.svg_chart(built.rows),
        theoretical=report.THEORETICAL_RTP,
        z99=report.Z99,
        query=request.GET.urlencode(),
    )
    return TemplateResponse(
        request, "admin/casino/round/report.html", context, status=400 if range_error else 200
    )


def daily_report_csv(request: HttpRequest) -> StreamingHttpResponse:
    _require(request, VIEW_ROUND)
    since, until = _report_range(request)
    if since > until:
        raise BadRequest("since is after until")
    built = report.build(since=since, until=until)
    response = StreamingHttpResponse(
        report.csv_lines(built.rows, built.totals), content_type="text/csv"
    )
    response["Content-Disposition"] = f'attachment; filename="daily-{since}-{until}.csv"'
    return response
