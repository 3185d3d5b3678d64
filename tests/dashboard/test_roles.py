"""Authorization: every dashboard action against every role, and every admin page per role."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from django.contrib import admin
from django.test import Client
from django.urls import reverse

from casino.dashboard import review
from casino.dashboard.roles import VIEW_APPS
from casino.engine.rules import USDC
from casino.models import Round, Table
from ledger.models import WithdrawalRequest
from ledger.services import withdrawal_request
from tests.dashboard.conftest import login, make_player, make_table

pytestmark = pytest.mark.django_db

ROLES = ("reviewer", "manager", "auditor", "superuser", "player")
STAFF = {"reviewer", "manager", "auditor", "superuser"}
ALLOWED: dict[str, set[str]] = {
    "view_round": STAFF,
    "daily_report": STAFF,
    "flag": {"reviewer", "manager", "superuser"},
    "mark_reviewed": {"reviewer", "manager", "superuser"},
    "void": {"manager", "superuser"},
    "complete_withdrawal": {"manager", "superuser"},
    "cancel_withdrawal": {"manager", "superuser"},
    "create_table": {"manager", "superuser"},
    "close_table": {"manager", "superuser"},
    "export": {"auditor", "superuser"},
}


ADDRESS = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"  # EIP-55's own example


def _withdrawal() -> WithdrawalRequest:
    player = make_player("withdrawer")
    return withdrawal_request(
        user=player,
        amount_micro=5 * USDC,
        idempotency_key="w1",
        network="ethereum",
        address=ADDRESS,
    )


def act_view_round(client: Client, round_id: str) -> bool:
    return client.get(reverse("admin:round_review", args=[round_id])).status_code == 200


def act_daily_report(client: Client, round_id: str) -> bool:
    page = client.get(reverse("admin:casino_round_report")).status_code == 200
    csv = client.get(reverse("admin:casino_round_report_csv")).status_code == 200
    assert page == csv
    return page


def act_flag(client: Client, round_id: str) -> bool:
    client.post(reverse("admin:round_flag", args=[round_id]), {"reason": "look"})
    return any(e.type == review.FLAGGED for e in review.review_events(round_id))


def act_mark_reviewed(client: Client, round_id: str) -> bool:
    review.round_flag(round_id=round_id, reason="auto")
    client.post(reverse("admin:round_reviewed", args=[round_id]), {"notes": "ok"})
    return any(e.type == review.REVIEWED for e in review.review_events(round_id))


def act_void(client: Client, round_id: str) -> bool:
    client.post(reverse("admin:round_void", args=[round_id]), {"reason": "r", "confirm": "on"})
    return Round.objects.get(id=round_id).status == "voided"


def _withdrawal_action(client: Client, action: str) -> str:
    withdrawal = _withdrawal()
    # Completing asks for a confirmation first: this is the confirmation page's own POST.
    confirmed = {"post": "yes", "confirm": "on"} if action == "complete" else {}
    client.post(
        reverse("admin:dashboard_pendingwithdrawal_changelist"),
        {"action": action, "_selected_action": [withdrawal.pk], "index": 0, **confirmed},
    )
    return WithdrawalRequest.objects.get(pk=withdrawal.pk).status


def act_complete_withdrawal(client: Client, round_id: str) -> bool:
    return _withdrawal_action(client, "complete") == "completed"


def act_cancel_withdrawal(client: Client, round_id: str) -> bool:
    return _withdrawal_action(client, "cancel") == "cancelled"


def act_create_table(client: Client, round_id: str) -> bool:
    client.post(
        reverse("admin:casino_table_add"),
        {
            "name": "new table",
            "ruleset": "classic",
            "min_bet": USDC,
            "max_bet": 100 * USDC,
            "chip_unit": 10_000,
            "stake": 0,
            "seats": 1,
        },
    )
    return Table.objects.filter(name="new table").exists()


def act_close_table(client: Client, round_id: str) -> bool:
    table = make_table("classic", name="to close")
    client.post(
        reverse("admin:casino_table_changelist"),
        {"action": "close_tables", "_selected_action": [table.pk], "index": 0},
    )
    return Table.objects.get(pk=table.pk).status == "closed"


def act_export(client: Client, round_id: str) -> bool:
    day = datetime.now(UTC).date().isoformat()
    return client.get("/api/audit/export", {"since": day, "until": day}).status_code == 200


ACTIONS: dict[str, Callable[[Client, str], bool]] = {
    name: globals()[f"act_{name}"] for name in ALLOWED
}


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("action", list(ALLOWED))
def test_every_action_against_every_role(action: str, role: str, staff, fair_round) -> None:
    assert ACTIONS[action](login(staff[role]), fair_round) is (role in ALLOWED[action])


def admin_pages(round_id: str) -> list[tuple[str, str]]:
    """(app label, url) of every admin page: index, each model's list and first object."""
    pages = [("", reverse("admin:index"))]
    for model, model_admin in admin.site._registry.items():
        meta = model._meta
        base = f"admin:{meta.app_label}_{meta.model_name}"
        pages.append((meta.app_label, reverse(f"{base}_changelist")))
        obj = model_admin.get_queryset(_Request()).order_by("pk").first()
        if obj is not None:
            pages.append((meta.app_label, reverse(f"{base}_change", args=[obj.pk])))
    for name in ("casino_round_queue", "casino_round_report", "casino_round_report_csv"):
        pages.append(("casino", reverse(f"admin:{name}")))
    pages.append(("casino", reverse("admin:round_review", args=[round_id])))
    return pages


class _Request:
    user = None
    GET: dict[str, Any] = {}


@pytest.mark.parametrize("role", ["reviewer", "manager", "auditor", "superuser"])
def test_every_admin_page_renders_for_each_role(role: str, staff, fair_round) -> None:
    _withdrawal()
    review.round_flag(round_id=fair_round, reason="queue me")
    from casino.dashboard.stats import profile_update

    profile_update(user_id=staff["player"].pk, display_name="Shown")
    client = login(staff[role])
    pages = admin_pages(fair_round)
    assert len(pages) > 30
    for app_label, url in pages:
        response = client.get(url)
        if role == "superuser" or app_label in ("", *VIEW_APPS):
            assert response.status_code == 200, (url, response.status_code)
        else:
            assert response.status_code == 403, url  # auth users and groups: superusers only
    void = client.get(reverse("admin:round_void", args=[fair_round])).status_code
    assert void == (200 if role in ALLOWED["void"] else 403)
    add_table = client.get(reverse("admin:casino_table_add")).status_code
    assert add_table == (200 if role in ALLOWED["create_table"] else 403)


def test_the_groups_exist_with_their_permissions() -> None:
    from django.contrib.auth.models import Group

    perms = {
        g.name: {f"{p.content_type.app_label}.{p.codename}" for p in g.permissions.all()}
        for g in Group.objects.prefetch_related("permissions__content_type")
    }
    assert {"casino.view_round", "eventstore.view_storedevent", "ledger.view_posting"} <= (
        perms["reviewer"] & perms["manager"] & perms["auditor"]
    )
    assert "casino.void_round" in perms["manager"] - perms["reviewer"] - perms["auditor"]
    assert "dashboard.export_rounds" in perms["auditor"] - perms["manager"]
    assert not any(
        "view_hole_card" in p or p.split(".")[1].startswith("delete_")
        for group in perms.values()
        for p in group
    )
