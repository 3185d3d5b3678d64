"""Reads of the game's read models (HackSoft style: reads here, writes in services)."""

from __future__ import annotations

from typing import Any

from casino.models import RoundPlayer, RoundStatus


def player_has_round_in_progress(user: Any) -> bool:
    """Whether the player sits in a round that has not settled or been voided."""
    return RoundPlayer.objects.filter(user_id=user.pk, round__status=RoundStatus.OPEN).exists()
