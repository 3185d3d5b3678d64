"""A command's answer is built without a serializer instance: it must equal RoundOut's data."""

from __future__ import annotations

import json
from typing import Any

import pytest

from casino.api.commands import RoundOut, round_body
from casino.engine.views import Viewer, view
from casino.rounds.stream import round_state_for
from tests.api.conftest import Api

pytestmark = pytest.mark.django_db


def _serialized(round_id: Any, version: Any, status: Any, the_view: dict[str, Any]) -> Any:
    return dict(
        RoundOut(
            {"round_id": round_id, "version": version, "status": status, "view": the_view}
        ).data
    )


def test_round_body_is_what_the_serializer_gives(api: Api, player: Any) -> None:
    client = api
    table = client.post("/api/tables/personal/", {"ruleset": "classic"}).json()["id"]
    dealt = client.post(f"/api/tables/{table}/deal/", {"bets": ["1.00"]}).json()
    state = round_state_for(round_id=dealt["round_id"])
    the_view = view(state, Viewer("player", str(player.pk)))
    ours = round_body(
        round_id=dealt["round_id"], version=dealt["version"], status="open", view=the_view
    )
    theirs = _serialized(dealt["round_id"], dealt["version"], "open", the_view)
    assert list(ours) == list(theirs) == ["round_id", "version", "status", "view"]
    assert json.dumps(ours) == json.dumps(theirs)
    # Loose inputs are coerced the same way (str ids and status, int version, str view keys).
    odd: Any = {1: None, "a": [1, 2]}
    assert round_body(round_id=7, version="3", status=1, view=odd) == _serialized(  # type: ignore[arg-type]
        7, "3", 1, odd
    )


def test_a_players_round_is_read_in_one_statement_as_the_orm_reads_it(
    api: Api, player: Any
) -> None:
    from types import SimpleNamespace

    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from casino.api.common import round_for_player
    from casino.models import Round
    from casino.platform.errors import ApplicationError
    from tests.api.conftest import make_player

    table = api.post("/api/tables/personal/", {"ruleset": "classic"}).json()["id"]
    round_id = api.post(f"/api/tables/{table}/deal/", {"bets": ["1.00"]}).json()["round_id"]
    mine: Any = SimpleNamespace(user=player)
    with CaptureQueriesContext(connection) as queries:
        found = round_for_player(mine, round_id)
    assert len(queries) == 1
    orm = Round.objects.get(pk=round_id)
    fields = [f.attname for f in Round._meta.concrete_fields]
    assert type(found) is Round and not found._state.adding
    assert [getattr(found, f) for f in fields] == [getattr(orm, f) for f in fields]
    other: Any = SimpleNamespace(user=make_player())
    with pytest.raises(ApplicationError) as refused:
        round_for_player(other, round_id)
    assert (refused.value.code, refused.value.status_code) == ("not_a_participant", 403)
    with pytest.raises(ApplicationError) as missing:
        round_for_player(mine, "00000000-0000-0000-0000-000000000000")
    assert (missing.value.code, missing.value.status_code) == ("not_found", 404)
