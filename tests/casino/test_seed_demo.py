"""seed_demo creates the demo users once, and refuses to run with DEBUG off."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command


@pytest.mark.django_db
def test_seed_demo_is_idempotent(settings: object) -> None:
    settings.DEBUG = True  # type: ignore[attr-defined]  # pytest-django turns DEBUG off
    User = get_user_model()
    call_command("seed_demo")
    first = {u.username: (u.pk, u.password, u.is_staff) for u in User.objects.all()}
    call_command("seed_demo")
    second = {u.username: (u.pk, u.password, u.is_staff) for u in User.objects.all()}
    assert first == second
    assert {"alice", "bob", "carol", "staff"} <= set(first)
    assert User.objects.get(username="staff").is_staff
    assert not User.objects.get(username="alice").is_staff
    assert User.objects.get(username="alice").check_password("demo-password")


@pytest.mark.django_db
def test_seed_demo_refuses_with_debug_off(settings: object) -> None:
    settings.DEBUG = False  # type: ignore[attr-defined]
    with pytest.raises(CommandError, match="DEBUG off"):
        call_command("seed_demo")
    assert not get_user_model().objects.exists()
