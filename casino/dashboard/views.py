"""Admin pages of the staff dashboard (mounted by `casino.admin.RoundAdmin.get_urls`).

Views only check permissions, parse the form, call one service and render.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, timedelta
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import BadRequest, PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone

from casino.dashboard import report, review, roundpage
from casino.dashboard.models import RoundReview
from casino.dashboard.tables import table_new_versions
from casino.errors import ApplicationError
from casino.models import Round
from casino.services import round_load

__all__ = ["table_new_versions"]

VIEW_ROUND = "casino.view_round"
VOID_ROUND = "casino.void_round"
FLAG_ROUND = "dashboard.flag_round"
REVIEW_ROUND = "dashboard.review_round"


def _require(request: HttpRequest, perm: str) -> None:
    if not request.user.has_perm(perm):
        raise PermissionDenied(f"needs the {perm} permission")


def _context(request: HttpRequest, title: str, **extra: Any) -> dict[str, Any]:
    return {
        **admin.site.each_context(request),
        "title": title,
        "opts": Round._meta,
        **extra,
    }


class FlagForm(forms.Form):
    reason = forms.CharField(max_length=200, widget=forms.TextInput(attrs={"size": 60}))


class ReviewedForm(forms.Form):
    notes = forms.CharField(widget=forms.Textarea(attrs={"rows": 3, "cols": 60}))


class VoidForm(forms.Form):
    reason = forms.CharField(widget=forms.Textarea(attrs={"rows": 3, "cols": 60}))
    confirm = forms.BooleanField(
        label="I confirm: refund every stake, reverse every payout and reveal the seed"
    )


def round_review(request: HttpRequest, round_id: str) -> HttpResponse:
    """The round review page: badges, timeline with cards, players, ledger, staff actions."""
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
    context = _context(
        request,
        f"Round {round_id}",
        round=row,
        state_view=rendered,
        can_see_hole=can_see_hole,
        badges=roundpage.badges(round_id, state),
        timeline=roundpage.timeline(stored, rendered),
        players=row.players.select_related("user").order_by("seat"),
        entries=roundpage.ledger_entries(round_id),
        staff_actions=review.review_events(round_id),
        review_row=RoundReview.objects.filter(round_id=round_id).first(),
        proof_url=f"/api/fairness/rounds/{round_id}",
        verify_url=f"/fairness/verify/?round={round_id}",
        can_flag=request.user.has_perm(FLAG_ROUND),
        can_review=request.user.has_perm(REVIEW_ROUND),
        can_void=request.user.has_perm(VOID_ROUND) and row.status != "voided",
        flag_form=FlagForm(),
        reviewed_form=ReviewedForm(),
    )
    return TemplateResponse(request, "admin/casino/round/review.html", context)


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
) -> HttpResponse:
    """A staff action posted from the review page: check, validate, act, report, go back."""
    _require(request, permission)
    if request.method != "POST":
        return _back(round_id)
    form = form_class(request.POST)
    if form.is_valid():
        try:
            act(form.cleaned_data)
            messages.success(request, done)
        except ApplicationError as error:
            messages.error(request, error.message)
    else:
        messages.error(request, invalid)
    return _back(round_id)


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
        invalid="A flag needs a reason.",
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
        invalid="Reviewing needs notes.",
    )


def round_void_page(request: HttpRequest, round_id: str) -> HttpResponse:
    """GET: the confirmation form; POST with a reason and the confirmation: void the round."""
    _require(request, VOID_ROUND)
    row = Round.objects.filter(id=round_id).first()
    if row is None:
        raise Http404("no such round")
    form = VoidForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            result = review.round_void_by_staff(
                round_id=round_id, reason=form.cleaned_data["reason"], user=request.user
            )
        except ApplicationError as error:
            messages.error(request, f"{error.code}: {error.message}")
        else:
            messages.success(
                request,
                f"Round voided: {result.round.stake_total} micro-USDC of stakes refunded; "
                "server seed revealed.",
            )
            return _back(round_id)
    context = _context(request, f"Void round {round_id}", round=row, form=form)
    return TemplateResponse(request, "admin/casino/round/void.html", context)


def review_queue_page(request: HttpRequest) -> HttpResponse:
    _require(request, VIEW_ROUND)
    rows = review.review_queue()
    reviews = {r.round_id: r for r in RoundReview.objects.filter(pending=True)}
    items = [(r, reviews.get(r.id)) for r in rows]
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
    rows = report.daily_rows(since=since, until=until)
    context = _context(
        request,
        "Daily report",
        rows=rows,
        since=since,
        until=until,
        chart=report.svg_chart(rows),
        theoretical=report.THEORETICAL_RTP,
        query=request.GET.urlencode(),
    )
    return TemplateResponse(request, "admin/casino/round/report.html", context)


def daily_report_csv(request: HttpRequest) -> StreamingHttpResponse:
    _require(request, VIEW_ROUND)
    since, until = _report_range(request)
    response = StreamingHttpResponse(
        report.csv_lines(report.daily_rows(since=since, until=until)), content_type="text/csv"
    )
    response["Content-Disposition"] = f'attachment; filename="daily-{since}-{until}.csv"'
    return response
