"""seed_demo creates one staff user per role, in its group, idempotently."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

pytestmark = pytest.mark.django_db


def test_seed_demo_creates_one_user_per_role(settings) -> None:
    settings.DEBUG = True  # pytest-django turns DEBUG off; seed_demo refuses then
    call_command("seed_demo")
    call_command("seed_demo")
    User = get_user_model()
    for role in ("reviewer", "manager", "auditor"):
        user = User.objects.get(username=role)
        assert user.is_staff and not user.is_superuser
        assert list(user.groups.values_list("name", flat=True)) == [role]
        client = Client()
        assert client.login(username=role, password="demo-password")
        assert client.get("/admin/casino/round/").status_code == 200
    assert User.objects.get(username="manager").has_perm("casino.void_round")
    assert not User.objects.get(username="reviewer").has_perm("casino.void_round")
