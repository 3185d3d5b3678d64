"""Pieces every game API view shares: the base view, round ids, the round and table lookups and
the participant checks.

The player commands' own path (validation, checks, idempotency, the answer) is
`casino.api.commands`; a view's caller is `casino.api.plumbing.request_user`.
"""

from __future__ import annotations

import re
from typing import Any

from django.db import connection
from rest_framework import serializers
from rest_framework.authentication import SessionAuthentication
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.views import APIView

from casino.api.authentication import TokenAuthentication
from casino.api.plumbing import user_pk
from casino.models import Round, RoundPlayer, Table
from casino.platform import rawsql
from casino.platform.errors import ApplicationError

ROUND_ID_RE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


class JsonBooleanField(serializers.BooleanField):
    """A JSON `true` or `false`, nothing else. DRF's BooleanField also takes "yes", "on", "1",
    1, "true" (form values): `{"confirm": "yes"}` confirmed a risky hit."""

    default_error_messages = {"invalid": "Must be a JSON boolean: true or false."}

    def to_internal_value(self, data: Any) -> bool:
        if type(data) is not bool:
            self.fail("invalid")
        return data


def round_get(round_id: str) -> Round:
    """The round's projection, 404 for an unknown or malformed id."""
    if not ROUND_ID_RE.fullmatch(round_id):
        raise ApplicationError("No such round.", code="not_found", status_code=404)
    found = Round.objects.filter(pk=round_id).first()
    if found is None:
        raise ApplicationError("No such round.", code="not_found", status_code=404)
    return found


_PLAYED_SQL: list[str] = []


def _played_sql() -> str:
    """The round by id if the user has a seat in it: one raw statement, built once (the ORM
    compiled the same join anew for each request, about 2 ms of CPU)."""
    if not _PLAYED_SQL:
        qn = connection.ops.quote_name
        rounds, seats = Round._meta, RoundPlayer._meta
        columns = ", ".join(f"r.{qn(f.column)}" for f in rounds.concrete_fields)
        _PLAYED_SQL.append(
            f"SELECT {columns} FROM {qn(rounds.db_table)} r WHERE r.{qn(rounds.pk.column)} = %s "
            f"AND EXISTS (SELECT 1 FROM {qn(seats.db_table)} p "
            f"WHERE p.{qn(seats.get_field('round').column)} = r.{qn(rounds.pk.column)} "
            f"AND p.{qn(seats.get_field('user').column)} = %s)"
        )
    return _PLAYED_SQL[0]


def round_for_player(request: Request, round_id: str, *, staff_may_read: bool = False) -> Round:
    """The round if the caller plays in it (403 otherwise; staff may read when allowed)."""
    if staff_may_read and request.user.is_staff:
        return round_get(round_id)
    return round_played(user_pk(request), round_id)


def round_played(user_id: int, round_id: str) -> Round:
    """The round if the user has a seat in it: 404 for no such round, else 403."""
    if ROUND_ID_RE.fullmatch(round_id):  # one query on the hot path: the round, if a seat's
        found = rawsql.instance(Round, rawsql.fetch_one(_played_sql(), [round_id, user_id]))
        if found is not None:
            return found
    round_get(round_id)  # 404 if there is no such round
    raise ApplicationError(
        "You do not play in this round.", code="not_a_participant", status_code=403
    )


def table_get(table_id: int) -> Table:
    found = rawsql.first(Table, "id = %s", [table_id])
    if found is None:
        raise ApplicationError("No such table.", code="not_found", status_code=404)
    return found


class GameApi(APIView):
    """Base of the game views: token first, so a missing or bad credential is a 401."""

    authentication_classes = [TokenAuthentication, SessionAuthentication]
    permission_classes = [IsAuthenticated]
    throttle_scope = "money"  # every game POST may stake money (reads are not limited)
