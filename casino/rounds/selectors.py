"""Reads of the game's read models (HackSoft style: reads here, writes in services)."""

from __future__ import annotations

from typing import Any

from django.db.models import Q

from casino.engine.views import Viewer, view
from casino.models import Round, RoundPlayer, RoundStatus, Table, TableStatus
from casino.rounds.stream import round_state_for


def player_has_round_in_progress(user: Any) -> bool:
    """Whether the player sits in a round that has not settled or been voided."""
    return RoundPlayer.objects.filter(user_id=user.pk, round__status=RoundStatus.OPEN).exists()


def viewer_for(user: Any, state: Any) -> Any:
    """The engine viewer a user gets for a round: own view, staff view, or the public one."""
    if user is not None and user.is_authenticated:
        player_id = str(user.pk)
        if any(p.player_id == player_id for p in state.opened.participants):
            return Viewer("player", player_id)
        if user.is_staff:
            return Viewer("staff")
    return Viewer("public")


def round_view_for(*, user: Any, round_id: str, state: Any = None) -> dict[str, Any]:
    """`view(state, viewer)` of a round for `user` (the only way round data reaches a client)."""
    if state is None:
        state = round_state_for(round_id=round_id)
    return view(state, viewer_for(user, state))


def tables_list(*, user: Any, ruleset: str | None = None) -> list[Any]:
    """Open shared tables plus the user's own personal tables, with seats and the open round."""

    tables = Table.objects.filter(status=TableStatus.OPEN).filter(
        Q(owner=None) | Q(owner_id=user.pk)
    )
    if ruleset:
        tables = tables.filter(ruleset=ruleset)
    return list(tables.prefetch_related("seated").order_by("id"))


def table_open_round_id(*, table: Any) -> str | None:
    return (
        Round.objects.filter(table=table, status=RoundStatus.OPEN)
        .order_by("-opened_at")
        .values_list("id", flat=True)
        .first()
    )


def player_rounds(*, user: Any, limit: int = 20, status: str | None = None) -> list[Any]:
    """The player's own rounds, newest first (game recall)."""
    rounds = Round.objects.filter(players__user_id=user.pk)
    if status:
        rounds = rounds.filter(status=status)
    return list(rounds.order_by("-opened_at")[:limit])


def player_rounds_page(
    *, user: Any, limit: int, status: str | None = None, after: tuple[Any, str] | None = None
) -> tuple[list[Any], bool]:
    """A page of the player's rounds, newest first, keyset-ordered by (opened_at, id).

    `after` is the (opened_at, id) of the last round of the previous page: the page starts
    strictly after it, so rounds added meanwhile (newer, hence before it) neither repeat nor
    shift anything. Returns the rounds and whether more follow.
    """

    rounds = Round.objects.filter(players__user_id=user.pk)
    if status:
        rounds = rounds.filter(status=status)
    if after is not None:
        opened_at, round_id = after
        rounds = rounds.filter(Q(opened_at__lt=opened_at) | Q(opened_at=opened_at, id__lt=round_id))
    found = list(rounds.order_by("-opened_at", "-id")[: limit + 1])
    return found[:limit], len(found) > limit
