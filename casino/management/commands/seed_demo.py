"""`manage.py seed_demo`: demo users (idempotent). Refuses to run with DEBUG off."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

DEMO_PASSWORD = "demo-password"
DEMO_PLAYERS = ("alice", "bob", "carol")
DEMO_STAFF = ("staff",)


class Command(BaseCommand):
    help = "Create the demo users (alice, bob, carol, staff; password demo-password). Idempotent."

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
        status = f"created {', '.join(created)}" if created else "already present"
        self.stdout.write(f"Demo users: {status}. Password for all: {DEMO_PASSWORD}")
