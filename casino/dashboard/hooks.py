"""Hooks of the round service: the public stats rows, automatic flags and the stats ping.

Both are observers of the round service (`casino.rounds.services.add_in_transaction` and
`add_after_commit`, registered in `DashboardConfig.ready`) of the commands that append one of
`FOLLOWS`: the round service calls them for no other command. `in_round_transaction` writes
a finished round's stats contributions inside the command's own transaction (in a
savepoint), so they commit or roll back with the round and cost no transaction of their own,
while a failure of theirs alone is logged and never fails the round. `after_round_commit`
runs only for committed round events: a malfunction void or a win above
`settings.REVIEW_WIN_THRESHOLD_MICRO` flags the round, and a finished round pings the stats
WebSocket group.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model

from casino.dashboard import stats
from casino.dashboard.display import player_name
from casino.dashboard.models import PlayerProfile
from casino.dashboard.review import BIG_WIN, MALFUNCTION, round_flag
from casino.engine.events import RoundSettled
from casino.engine.evolve import RoundState
from casino.eventstore.models import StoredEvent
from casino.platform import rawsql
from ledger.money import usdc

logger = logging.getLogger(__name__)

# The event types the stats rows and the automatic flags follow: a round settled or voided.
FOLLOWS = ("RoundSettled", "RoundVoided")


def player_nets(settled: RoundSettled) -> dict[str, int]:
    """Net win (gross return - stake) per player of a settlement, insurance included."""
    nets: dict[str, int] = defaultdict(int)
    for hand in settled.hands:
        nets[hand.player_id] += hand.gross_return - hand.stake
    for ins in settled.insurance:
        nets[ins.player_id] += ins.gross_return - ins.stake
    return dict(nets)


def automatic_flags(state: RoundState, events: Sequence[StoredEvent]) -> list[tuple[str, str]]:
    """(reason, detail) for each automatic flag these new events call for."""
    flags: list[tuple[str, str]] = []
    types = {e.type for e in events}
    if "RoundVoided" in types and state.voided is not None and state.voided.reason == MALFUNCTION:
        flags.append((MALFUNCTION, state.voided.evidence))
    if "RoundSettled" in types and state.settlement is not None and state.voided is None:
        threshold = settings.REVIEW_WIN_THRESHOLD_MICRO
        big = {p: n for p, n in player_nets(state.settlement).items() if n > threshold}
        if big:
            names = _usernames(list(big))
            detail = ", ".join(
                f"{player_name(names, p)} won {usdc(n)}" for p, n in sorted(big.items())
            )
            flags.append((BIG_WIN, f"{detail} (threshold {usdc(threshold)})"))
    return flags


def _usernames(player_ids: list[str]) -> dict[str, str]:
    User = get_user_model()
    pks = [int(p) for p in player_ids if p.isdigit()]
    return {
        str(pk): name
        for pk, name in User.objects.filter(pk__in=pks).values_list("pk", User.USERNAME_FIELD)
    }


def after_round_commit(round_id: str, state: RoundState, events: Sequence[StoredEvent]) -> None:
    """The publisher: flag what needs a reviewer, then ping the stats group."""
    for reason, detail in automatic_flags(state, events):
        round_flag(round_id=round_id, reason=reason, detail=detail)
    if _stats_moved(state, events):
        stats.announce(round_id=round_id, table_id=state.opened.table_id)


def profile_for_new_player(sender: Any, instance: Any, created: bool, **kwargs: Any) -> None:
    """post_save of the user model: every new player (not staff) gets their PlayerProfile, so
    "Player profiles" lists every player, not only those who once set a display name."""
    if not created or kwargs.get("raw") or instance.is_staff:
        return

    PlayerProfile.objects.get_or_create(user_id=instance.pk)


def _stats_moved(state: RoundState, events: Sequence[StoredEvent]) -> bool:
    return state.finished and any(e.type in FOLLOWS for e in events)


def in_round_transaction(round_id: str, state: RoundState, events: Sequence[StoredEvent]) -> None:
    """Inside the command's transaction: make the round's stats rows what its state implies."""
    if not _stats_moved(state, events):
        return
    # In a savepoint: a failing stats write is logged and undone on its own (`rebuild_stats`
    # restores the rows). It never fails the command, which would void a played round as a
    # malfunction over a dashboard figure.
    try:
        with rawsql.savepoint():
            stats.round_contribute(round_id=round_id, state=state)
    except Exception:
        logger.exception("stats rows of round %s not written", round_id)
