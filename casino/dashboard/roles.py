"""The staff roles as Django groups, and what each may do.

reviewer: view everything in the dashboard, flag rounds and mark them reviewed.
manager:  a reviewer who may also void rounds, resolve withdrawals and create/close tables.
auditor:  read-only access to everything, plus the round export.
The data migration creates the groups; a post_migrate hook re-syncs them so views of
models added later join the read-only roles.
"""

from __future__ import annotations

from typing import Any

from django.apps import apps as live_apps

REVIEWER, MANAGER, AUDITOR = "reviewer", "manager", "auditor"
ROLES = (REVIEWER, MANAGER, AUDITOR)
VIEW_APPS = ("casino", "eventstore", "ledger", "fairness", "dashboard")
EXTRA: dict[str, tuple[str, ...]] = {
    REVIEWER: ("dashboard.flag_round", "dashboard.review_round"),
    MANAGER: (
        "dashboard.flag_round",
        "dashboard.review_round",
        "casino.void_round",
        "dashboard.resolve_withdrawal",
        "casino.add_table",
        "casino.change_table",
    ),
    AUDITOR: ("dashboard.export_rounds",),
}


def sync_role_groups(apps: Any) -> None:
    """Create the three groups (if missing) and grant their permissions (never revokes)."""
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    views = list(
        Permission.objects.filter(
            content_type__app_label__in=VIEW_APPS, codename__startswith="view_"
        ).exclude(codename="view_hole_card")
    )
    for role in ROLES:
        group, _ = Group.objects.get_or_create(name=role)
        wanted = list(views)
        for name in EXTRA[role]:
            app_label, codename = name.split(".")
            wanted.extend(
                Permission.objects.filter(content_type__app_label=app_label, codename=codename)
            )
        group.permissions.add(*wanted)


def sync_after_migrate(sender: Any, **kwargs: Any) -> None:
    """post_migrate receiver: keep the groups in step with the installed models."""
    sync_role_groups(kwargs.get("apps") or live_apps)
