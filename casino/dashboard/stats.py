"""Public stats and leaderboard, projected from round events.

Each finished round contributes one `StatsContribution` row per player (a voided round
contributes nothing, so a void after settlement takes its numbers back). Leaderboards and
per-table stats are sums over those rows; `rebuild` recomputes every row from the event
store and reports any difference from the live rows.
"""

from __future__ import annotations

import logging
import re
from datetime import UTC, date, datetime, timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Count, Max, Q, Sum

from casino.dashboard.models import PlayerProfile, StatsContribution
from casino.engine.evolve import RoundState
from casino.eventstore.models import StoredEvent
from casino.models import Round, RoundStatus
from casino.platform import layersend, rawsql
from casino.platform.errors import ApplicationError, ConflictError
from casino.rounds.projections import player_money
from casino.rounds.stream import round_load

logger = logging.getLogger(__name__)
STATS_GROUP = "public-stats"
PERIODS = ("day", "week", "all")


# StatsContribution's columns (attnames) in the order `_contribution_values` gives them.
_FIELDS = (
    "round_id", "user_id", "table_id", "ruleset", "day", "stake", "gross_return", "net",
    "finished_at",
)  # fmt: skip


def _contribution_values(round_id: str, state: RoundState) -> list[tuple[Any, ...]]:
    """The values (in _FIELDS order) of the rows a finished round contributes."""
    if not state.finished or state.voided is not None or state.settlement is None:
        return []
    stakes, returns = player_money(state)
    finished = datetime.fromtimestamp(state.settlement.settled_at_ms / 1000, tz=UTC)
    day, table_id, ruleset = finished.date(), int(state.opened.table_id), state.opened.ruleset
    return [
        (
            round_id,
            int(player_id),
            table_id,
            ruleset,
            day,
            stake,
            returns.get(player_id, 0),
            returns.get(player_id, 0) - stake,
            finished,
        )
        for player_id, stake in sorted(stakes.items())
    ]


def contributions(round_id: str, state: RoundState) -> list[StatsContribution]:
    """The rows a finished round contributes (none while open or once voided)."""
    return [
        StatsContribution(**dict(zip(_FIELDS, values, strict=True)))
        for values in _contribution_values(round_id, state)
    ]


def round_contribute(*, round_id: str, state: RoundState) -> None:
    """Make a finished round's contribution rows what its state implies (one query)."""
    values = _contribution_values(round_id, state)
    if values:  # just settled: the round has no rows yet (raw, without model instances)
        rawsql.insert_values(StatsContribution, _FIELDS, values, ignore_conflicts=True)
    else:  # voided (possibly after settlement): its numbers come back out
        StatsContribution.objects.filter(round_id=round_id).delete()


def announce(*, round_id: str, table_id: str) -> None:
    """Tell the stats WebSocket group that the numbers moved (clients re-fetch the API); sent
    with the round's own messages when the round service batches them
    (casino.platform.layersend)."""
    message = {"type": "stats.changed", "round_id": round_id, "table_id": table_id}
    try:
        layersend.send([(STATS_GROUP, message)])
    except Exception:  # stats pushes are best effort; the API is the truth
        logger.exception("stats announcement for round %s failed", round_id)


def _key(row: StatsContribution) -> tuple[Any, ...]:
    return (
        row.round_id,
        row.user_id,
        row.table_id,
        row.ruleset,
        row.day,
        row.stake,
        row.gross_return,
        row.net,
        row.finished_at,
    )


def rebuild(*, write: bool = True) -> dict[str, Any]:
    """Recompute every contribution from the events; report differences from the live rows."""
    expected: list[StatsContribution] = []
    stream_ids = StoredEvent.objects.filter(type="RoundOpened").values_list("stream_id", flat=True)
    for round_id in stream_ids:
        _, state = round_load(round_id=round_id)
        if state is not None:
            expected.extend(contributions(round_id, state))
    live = {_key(r) for r in StatsContribution.objects.all()}
    want = {_key(r) for r in expected}
    if write:
        with transaction.atomic():
            StatsContribution.objects.all().delete()
            StatsContribution.objects.bulk_create(expected)
    return {
        "rows": len(want),
        "missing": sorted(map(str, want - live)),
        "extra": sorted(map(str, live - want)),
    }


def period_start(period: str, today: date) -> date | None:
    if period == "day":
        return today
    if period == "week":
        return today - timedelta(days=today.weekday())
    if period == "all":
        return None
    raise ValueError(f"unknown period {period!r}")


def _names(user_ids: list[int]) -> dict[int, str]:
    profiles = {p.user_id: p for p in PlayerProfile.objects.filter(user_id__in=user_ids)}
    names = {}
    for user_id in user_ids:
        profile = profiles.get(user_id)
        names[user_id] = (profile.display_name if profile else "") or f"player-{user_id}"
    return names


def _public(rows: Any) -> Any:
    opted_out = PlayerProfile.objects.filter(opt_out=True).values("user_id")
    return rows.exclude(user_id__in=opted_out)


def leaderboard(*, period: str, today: date | None = None, limit: int = 20) -> list[dict[str, Any]]:
    """Players by net win over the period (opted-out players never appear)."""
    start = period_start(period, today or datetime.now(UTC).date())
    rows = _public(StatsContribution.objects.all())
    if start is not None:
        rows = rows.filter(day__gte=start)
    grouped = list(
        rows.values("user_id")
        .annotate(rounds=Count("round_id"), handle=Sum("stake"), net=Sum("net"))
        .order_by("-net", "user_id")[:limit]
    )
    names = _names([g["user_id"] for g in grouped])
    return [
        {
            "player": names[g["user_id"]],
            "rounds": g["rounds"],
            "handle": g["handle"],
            "net": g["net"],
        }
        for g in grouped
    ]


def biggest_wins(*, limit: int = 10) -> list[dict[str, Any]]:
    rows = list(_public(StatsContribution.objects.filter(net__gt=0)).order_by("-net", "id")[:limit])
    names = _names([r.user_id for r in rows])
    return [
        {
            "player": names[r.user_id],
            "round_id": r.round_id,
            "ruleset": r.ruleset,
            "net": r.net,
            "finished_at": r.finished_at.isoformat(),
        }
        for r in rows
    ]


def table_stats() -> list[dict[str, Any]]:
    """Per table: rounds, handle, players' net, last round; plus rounds open right now."""
    open_rounds = dict(
        Round.objects.filter(status=RoundStatus.OPEN)
        .values("table_id")
        .annotate(n=Count("id"))
        .values_list("table_id", "n")
    )
    grouped = (
        StatsContribution.objects.values("table_id", "ruleset")
        .annotate(
            rounds=Count("round_id", distinct=True),
            handle=Sum("stake"),
            players_net=Sum("net"),
            wins=Count("id", filter=Q(net__gt=0)),
            last=Max("finished_at"),
        )
        .order_by("table_id")
    )
    return [
        {
            "table_id": g["table_id"],
            "ruleset": g["ruleset"],
            "rounds": g["rounds"],
            "handle": g["handle"],
            "players_net": g["players_net"],
            "winning_hands": g["wins"],
            "last_round_at": g["last"].isoformat() if g["last"] else None,
            "open_rounds": open_rounds.get(g["table_id"], 0),
        }
        for g in grouped
    ]


# A public name: letters and digits (any script), spaces and _ . - ', starting and ending
# with a letter or digit. No control or format characters (a right-to-left override or a
# zero-width space would let a name pass for another on the public pages).
_NAME = re.compile(r"[^\W_](?:[\w .'-]*[^\W_])?")
_DEFAULT_NAME = re.compile(r"player[- ]?[0-9]+", re.IGNORECASE)  # how unnamed players show


def display_name_clean(text: str) -> str:
    """The public name a player asked for, trimmed, or 400 `display_name_invalid` /
    `display_name_reserved` ("" clears the name: the player shows as player-<id>)."""
    name = text.strip()
    if not name:
        return ""
    if len(name) > 40 or not _NAME.fullmatch(name):
        raise ApplicationError(
            "A public name is 1 to 40 letters, digits, spaces and _ . - ', starting and "
            "ending with a letter or digit.",
            code="display_name_invalid",
            extra={"display_name": text},
        )
    if _DEFAULT_NAME.fullmatch(name):
        raise ApplicationError(
            "player-<number> is how players without a name are shown: choose another name.",
            code="display_name_reserved",
            extra={"display_name": text},
        )
    return name


def profile_update(
    *, user_id: int, display_name: str | None = None, opt_out: bool | None = None
) -> PlayerProfile:
    """Set the player's public display name and/or opt-out. A name another player has (in
    any case) is a 409 `display_name_taken`, and nothing changes: the unique index on the
    lowered name decides, the one rule whether the other player saved long ago or at the
    same moment."""
    name = None if display_name is None else display_name_clean(display_name)
    try:
        with transaction.atomic(durable=True):
            profile, _ = PlayerProfile.objects.select_for_update().get_or_create(user_id=user_id)
            if name is not None:
                profile.display_name = name
            if opt_out is not None:
                profile.opt_out = opt_out
            profile.save()
    except IntegrityError:  # dashboard_display_name_unique: the name is another player's
        raise ConflictError(
            "Another player has this public name.",
            code="display_name_taken",
            extra={"display_name": display_name},
        ) from None
    return profile
