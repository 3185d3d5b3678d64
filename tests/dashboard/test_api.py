"""The auditor's export endpoint and the public stats API."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from casino.dashboard import stats
from casino.dashboard.models import StatsContribution
from fairness.models import SigningKey
from fairness.verify import KeyRing, load_engine_replay, verify_round
from tests.dashboard.conftest import login

pytestmark = pytest.mark.django_db

EXPORT = "/api/audit/export"


def today() -> str:
    return datetime.now(UTC).date().isoformat()


def test_export_streams_verifiable_rounds_for_auditors_only(fair_round, staff) -> None:
    query = {"since": today(), "until": today()}
    for role in ("reviewer", "manager", "player"):
        assert login(staff[role]).get(EXPORT, query).status_code == 403, role
    response = login(staff["auditor"]).get(EXPORT, query)
    assert response.status_code == 200
    lines = b"".join(response.streaming_content).decode().splitlines()
    assert len(lines) == 1
    keys = KeyRing({k.key_id: k.public_key for k in SigningKey.objects.all()})
    report = verify_round(json.loads(lines[0]), keys, replay_check=load_engine_replay())
    assert report.failures == []


def test_export_outside_the_range_is_empty_and_bad_dates_are_400(fair_round, staff) -> None:
    auditor = login(staff["auditor"])
    response = auditor.get(EXPORT, {"since": "2001-01-01", "until": "2001-01-31"})
    assert b"".join(response.streaming_content) == b""
    bad = auditor.get(EXPORT, {"since": "yesterday", "until": today()})
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_since"
    assert auditor.get(EXPORT, {"since": today(), "until": "2001-01-01"}).status_code == 400


def test_export_needs_authentication(fair_round) -> None:
    from django.test import Client

    assert Client().get(EXPORT, {"since": today(), "until": today()}).status_code in (401, 403)


def test_leaderboard_names_and_opt_out(fair_round, staff) -> None:
    from django.test import Client

    public = Client()
    player = StatsContribution.objects.get().user
    rows = public.get("/api/stats/leaderboard", {"period": "all"}).json()
    assert [r["player"] for r in rows] == [f"player-{player.pk}"]
    client = login(player)
    response = client.put(
        "/api/stats/profile", {"display_name": "Lucky"}, content_type="application/json"
    )
    assert response.status_code == 200 and response.json()["display_name"] == "Lucky"
    assert public.get("/api/stats/leaderboard").json()[0]["player"] == "Lucky"
    client.put("/api/stats/profile", {"opt_out": True}, content_type="application/json")
    assert public.get("/api/stats/leaderboard").json() == []
    assert public.get("/api/stats/leaderboard", {"period": "year"}).status_code == 400
    assert public.get("/api/stats/tables").json()[0]["rounds"] == 1


def test_stats_rebuild_equals_live(django_capture_on_commit_callbacks) -> None:
    import random

    from casino.dashboard.review import round_void_by_staff
    from casino.tables.play import play_round
    from tests.dashboard.conftest import make_player, make_table

    players = [make_player(f"p{i}") for i in range(2)]
    duel_players = [make_player(f"d{i}") for i in range(3)]
    rng = random.Random(3)
    classic, duel = make_table("classic"), make_table("duel_classic")
    with django_capture_on_commit_callbacks(execute=True):
        for i in range(5):
            play_round(classic, [players[i % 2]], rng)
            last = play_round(duel, duel_players, rng).round.id
    with django_capture_on_commit_callbacks(execute=True):
        round_void_by_staff(round_id=last, reason="test: void after settlement", user=None)
    assert not StatsContribution.objects.filter(round_id=last).exists()
    live = stats.rebuild(write=False)
    assert live["rows"] > 0 and live["missing"] == [] and live["extra"] == []
    StatsContribution.objects.all().delete()
    assert stats.rebuild(write=False)["missing"] != []
    stats.rebuild(write=True)
    assert stats.rebuild(write=False)["missing"] == []
