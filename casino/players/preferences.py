"""Player preferences (seed 000 Options): insurance offer and safety net change play; the
rest (animation, audio, left-handed, felt) is stored and returned for clients."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from casino.models import PlayerPreferences

FIELDS = ("offer_insurance", "safety_net", "animation", "audio", "left_handed", "felt")
FELTS = ("green", "blue", "red", "black", "purple")


def preferences_get(*, user: AbstractBaseUser) -> PlayerPreferences:
    prefs, _ = PlayerPreferences.objects.get_or_create(user_id=user.pk)
    return prefs


def preferences_update(*, user: AbstractBaseUser, changes: dict[str, Any]) -> PlayerPreferences:
    """Change some options. Play options apply from the next round the player joins."""
    with transaction.atomic(durable=True):
        prefs, _ = PlayerPreferences.objects.select_for_update().get_or_create(user_id=user.pk)
        fields = [name for name in FIELDS if name in changes]
        for name in fields:
            setattr(prefs, name, changes[name])
        if fields:
            prefs.save(update_fields=fields)
    return prefs
