"""`manage.py seed_demo`: demo users, funds and one table per rule set (idempotent).

Refuses to run with DEBUG off: the demo logins are public.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from casino.engine.rules import RULESETS, USDC
from casino.tables.services import demo_table
from ledger.services import wallet_deposit

DEMO_PASSWORD = "demo-password"
DEMO_PLAYERS = ("alice", "bob", "carol")
DEMO_STAFF = ("staff",)
# One staff user per dashboard role (casino.dashboard.roles), in the group of the same name.
DEMO_ROLES = ("reviewer", "manager", "auditor")
DEMO_FUNDS = 1_000 * USDC


class Command(BaseCommand):
    help = (
        "Create the demo users (alice, bob, carol, staff, and reviewer, manager, auditor in their "
        "staff groups; password demo-password), fund the "
        "players with 1,000 USDC once, and open one table of each rule set. Idempotent."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        if not settings.DEBUG:
            raise CommandError("seed_demo refuses to run with DEBUG off: demo logins are public.")
        User = get_user_model()
        created: list[str] = []
        with transaction.atomic():
            for name in (*DEMO_PLAYERS, *DEMO_STAFF):
                is_staff = name in DEMO_STAFF
                user, was_created = User.objects.get_or_create(
                    username=name, defaults={"is_staff": is_staff, "is_superuser": is_staff}
                )
                if was_created:
                    user.set_password(DEMO_PASSWORD)
                    user.save()
                    created.append(name)
            for role in DEMO_ROLES:
                user, was_created = User.objects.get_or_create(
                    username=role, defaults={"is_staff": True}
                )
                if was_created:
                    user.set_password(DEMO_PASSWORD)
                    user.save()
                    created.append(role)
                user.groups.add(Group.objects.get(name=role))
            tables = [demo_table(ruleset) for ruleset in RULESETS]
        for name in DEMO_PLAYERS:
            # The same key every run: the ledger returns the first deposit instead of paying twice.
            wallet_deposit(
                user=User.objects.get(username=name),
                amount_micro=DEMO_FUNDS,
                idempotency_key=f"seed_demo:funds:{name}",
                source="staff",
            )
        status = f"created {', '.join(created)}" if created else "already present"
        self.stdout.write(f"Demo users: {status}. Password for all: {DEMO_PASSWORD}")
        self.stdout.write("Demo tables: " + ", ".join(f"{t.name} (#{t.pk})" for t in tables))
