"""A player's public name on the stats pages: printable letters, digits and a little
punctuation, never a default name (player-<id>) and never another player's, in any case; a
refusal changes nothing. Migration 0004 keeps a name two players shared with the first."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from casino.dashboard import stats
from casino.dashboard.models import PlayerProfile
from casino.platform.errors import ConflictError
from tests.casino.test_round_concurrency import in_parallel
from tests.dashboard.conftest import login, make_player

pytestmark = pytest.mark.django_db

PROFILE = "/api/stats/profile/"


def put(user: Any, body: dict[str, Any]) -> Any:
    return login(user).put(PROFILE, body, content_type="application/json")


def name_of(user: Any) -> str:
    return str(PlayerProfile.objects.get(user=user).display_name)


@pytest.mark.parametrize(
    "name", ["José", "Ann-Marie O'Neil", "李华", "x", "R2.D2", "under_score 7"]
)
def test_a_printable_name_is_kept_trimmed(name: str) -> None:
    player = make_player("named", funds=0)
    answer = put(player, {"display_name": f"  {name} "})
    assert answer.status_code == 200, answer.content
    assert answer.json() == {"display_name": name, "opt_out": False}
    assert name_of(player) == name


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("\u202eykcul", "display_name_invalid"),  # a right-to-left override
        ("Lu\u200bcky", "display_name_invalid"),  # a zero-width space
        ("tab\there", "display_name_invalid"),
        ("<script>", "display_name_invalid"),
        ("_x", "display_name_invalid"),
        ("x.", "display_name_invalid"),
        ("player-12", "display_name_reserved"),
        ("Player 3", "display_name_reserved"),
        ("PLAYER7", "display_name_reserved"),
    ],
)
def test_a_name_that_could_pass_for_another_is_refused(name: str, code: str) -> None:
    player = make_player("named", funds=0)
    assert put(player, {"display_name": "Before"}).status_code == 200
    answer = put(player, {"display_name": name, "opt_out": True})
    assert answer.status_code == 400, answer.content
    error = answer.json()["error"]
    assert (error["code"], error["details"]) == (code, {"display_name": name})
    profile = PlayerProfile.objects.get(user=player)
    assert (profile.display_name, profile.opt_out) == ("Before", False)  # nothing changed


def test_one_player_per_name_in_any_case() -> None:
    first, second = make_player("first", funds=0), make_player("second", funds=0)
    assert put(first, {"display_name": "Lucky"}).status_code == 200
    answer = put(second, {"display_name": "LUCKY"})
    assert answer.status_code == 409
    assert answer.json()["error"]["code"] == "display_name_taken"
    assert name_of(second) == ""
    assert put(first, {"display_name": "lucky"}).status_code == 200  # your own name, recased
    assert put(first, {"display_name": ""}).status_code == 200  # cleared: free again
    assert put(second, {"display_name": "Lucky"}).status_code == 200
    assert (name_of(first), name_of(second)) == ("", "Lucky")


def test_opt_out_is_a_json_boolean() -> None:
    player = make_player("named", funds=0)
    answer = put(player, {"opt_out": "yes"})
    assert answer.status_code == 400
    assert answer.json()["error"]["details"]["fields"] == {
        "opt_out": ["Must be a JSON boolean: true or false."]
    }
    assert PlayerProfile.objects.get(user=player).opt_out is False


BEFORE = [("dashboard", "0003_review_resolution_player_profiles")]
AFTER = [("dashboard", "0004_display_name_unique")]


@pytest.mark.django_db(transaction=True)
def test_the_migration_keeps_a_shared_name_with_its_first_player() -> None:
    users = [get_user_model().objects.create_user(username=f"m{i}") for i in range(4)]
    PlayerProfile.objects.all().delete()
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    try:
        old = executor.loader.project_state(BEFORE).apps.get_model("dashboard", "PlayerProfile")
        for user, name in zip(users, ["Lucky", "LUCKY", "Other", "lucky"], strict=True):
            old.objects.create(user_id=user.pk, display_name=name)
    finally:
        MigrationExecutor(connection).migrate(AFTER)
    names = dict(PlayerProfile.objects.values_list("user__username", "display_name"))
    assert names == {"m0": "Lucky", "m1": "", "m2": "Other", "m3": ""}


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_players_racing_for_one_name_leave_it_to_one() -> None:
    """Six players ask for one name at the same moment: the unique index lets one have it,
    the others get the 409."""
    players = [make_player(f"racer{i}", funds=0) for i in range(6)]
    results = in_parallel(
        [
            lambda p=p, name=name: stats.profile_update(user_id=p.pk, display_name=name)
            for p, name in zip(players, ["Lucky", "lUCKY"] * 3, strict=True)
        ]
    )
    won = [r for r in results if isinstance(r, PlayerProfile)]
    lost = [r for r in results if isinstance(r, ConflictError)]
    assert len(won) == 1 and len(lost) == 5, results
    assert {e.code for e in lost} == {"display_name_taken"}
    named = PlayerProfile.objects.exclude(display_name="")
    assert [n.lower() for n in named.values_list("display_name", flat=True)] == ["lucky"]
