"""`manage.py fairness_rotate_seed_keys`: re-encrypt every live chain head under the newest key."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from fairness.services import seed_keys_rotate


class Command(BaseCommand):
    help = (
        "Re-encrypt the secret head of every unexhausted seed chain under the first key of "
        "SEED_ENCRYPTION_KEYS. Put the new key first, run this, then remove the old key."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        count = seed_keys_rotate()
        self.stdout.write(f"re-encrypted {count} chain head(s) under the newest key")
