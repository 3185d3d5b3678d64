"""The base of every admin page of an immutable record: staff read it, nobody edits it.

Events, journal entries, postings, receipts and seed chains change only through their
services (the round service, the ledger, the review service), never through a form.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest


class ReadOnlyAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    """Immutable records: no add, change or delete in the admin, and so no bulk delete."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
