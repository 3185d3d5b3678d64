"""The player site's pages. Each renders a small template; the page's ES module does the rest
through the REST API and the table WebSocket, so the server decides everything shown.

The templates and static files live in this package (not an installed app's folders), so
the site has its own template engine and serves its own assets: `/play/static/<name>`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBase, HttpResponseRedirect
from django.middleware.csrf import get_token
from django.template.backends.django import DjangoTemplates
from django.views.decorators.http import require_safe
from django.views.static import serve

from casino.api.tables import TableOut
from casino.models import Table
from casino.site import rulesets
from ledger.destinations import NETWORKS

SITE_DIR: Final = Path(__file__).resolve().parent
STATIC_DIR: Final = SITE_DIR / "static"

_templates = DjangoTemplates(
    {
        "NAME": "casino.site",
        "DIRS": [SITE_DIR / "templates"],
        "APP_DIRS": False,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
            ]
        },
    }
)


def _page(request: HttpRequest, name: str, **context: Any) -> HttpResponse:
    """Render `site/<name>` with what every page needs: the user, demo mode, a CSRF cookie."""
    get_token(request)  # sets the csrftoken cookie the page's API calls send back
    user = request.user
    context.setdefault("page", name.removesuffix(".html"))
    context["signed_in"] = user.is_authenticated
    context["username"] = user.get_username() if user.is_authenticated else ""
    context["player_id"] = str(user.pk) if user.is_authenticated else ""
    context["demo_mode"] = bool(getattr(settings, "DEMO_MODE", False))
    context["rulesets"] = rulesets.RULESETS
    html = _templates.get_template(f"site/{name}").render(context, request)
    return HttpResponse(html)


def root(request: HttpRequest) -> HttpResponse:
    """`/`: the site is the front page."""
    return HttpResponseRedirect("/play/")


@require_safe
def lobby(request: HttpRequest) -> HttpResponse:
    """`/play/`: sign in, or the wallet and the lobby."""
    return _page(request, "lobby.html", networks=NETWORKS)


@require_safe
def table(request: HttpRequest, table_id: int) -> HttpResponse:
    """`/play/<id>/`: one table. A visitor signs in first; another's personal table is none."""
    if not request.user.is_authenticated:
        return HttpResponseRedirect(f"/play/?next=/play/{table_id}/")
    found = Table.objects.prefetch_related("seated").filter(pk=table_id).first()
    if found is None or (found.owner_id is not None and found.owner_id != request.user.pk):
        raise Http404("No such table.")
    data = dict(TableOut(found).data)
    return _page(
        request,
        "table.html",
        table=found,
        table_json=json.dumps(data),
        rules=rulesets.RULESETS.get(found.ruleset),
    )


@require_safe
def history(request: HttpRequest) -> HttpResponse:
    """`/play/history/`: your rounds, a page at a time, each with its Verify link."""
    if not request.user.is_authenticated:
        return HttpResponseRedirect("/play/?next=/play/history/")
    return _page(request, "history.html")


@require_safe
def events(request: HttpRequest) -> HttpResponse:
    """`/play/events/`: the biggest wins and the tables' activity (public stats)."""
    return _page(request, "events.html")


@require_safe
def leaderboard(request: HttpRequest) -> HttpResponse:
    """`/play/leaderboard/`: players by net win, today, this week or ever (public stats)."""
    return _page(request, "leaderboard.html")


@require_safe
def rules_index(request: HttpRequest) -> HttpResponse:
    """`/play/rules/`: the rule sets, each linking its page."""
    return _page(request, "rules_index.html")


@require_safe
def rules(request: HttpRequest, ruleset: str) -> HttpResponse:
    """`/play/rules/<ruleset>/`: one rule set in the players' words."""
    found = rulesets.RULESETS.get(ruleset)
    if found is None:
        raise Http404("No such rule set.")
    return _page(request, "rules.html", rules=found, page="rules")


@require_safe
def asset(request: HttpRequest, name: str) -> HttpResponseBase:
    """A static file of the site (its ES modules, its stylesheet), from this package."""
    response = serve(request, name, document_root=str(STATIC_DIR))
    response["Cache-Control"] = "no-cache"  # revalidated: Last-Modified answers 304
    return response
