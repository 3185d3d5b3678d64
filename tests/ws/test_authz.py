"""The WebSocket rows of the authorization matrix (issue 9).

Roles: anonymous, the player who owns the personal table (alice), another player (bob), and
the staff roles reviewer, manager and auditor (staff users in the dashboard's groups).

- Connect: a personal table refuses everyone but its owner and staff (close 4404); a shared
  table lets everyone watch.
- ping and resume: everyone connected; the answers are that viewer's view, never a hidden card.
- Game commands: only the owner's are run; anonymous gets `not_authenticated` (401), other
  users `not_a_participant` (403) on a round and `permission_denied` (403) on a DEAL at
  someone else's personal table. A refused command changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import Group

from casino.client.leakcheck import message_leaks
from casino.tables import services as tables
from tests.api.conftest import Api, make_player
from tests.ws.common import answer, command, connect, open_socket, run, seated_table, world

pytestmark = pytest.mark.django_db(transaction=True)
Stack = Callable[[list[str]], None]
ROLES = ("anonymous", "owner", "other_player", "reviewer", "manager", "auditor")
STAFF = ("reviewer", "manager", "auditor")


def make_users() -> dict[str, Any]:
    users: dict[str, Any] = {
        "anonymous": None,
        "owner": make_player(),
        "other_player": make_player(),
    }
    for role in STAFF:
        user = make_player(staff=True, funds=0)
        user.groups.add(Group.objects.get(name=role))
        users[role] = user
    return users


def viewer(user: Any) -> str | None:
    return None if user is None else str(user.pk)


def test_connect_ping_and_resume_per_role(stack: Stack) -> None:
    users = make_users()
    owner = Api(users["owner"])
    personal = owner.post("/api/tables/personal/", {"ruleset": "classic"}).json()["id"]
    stack(["5S", "TH", "6C", "9D"])
    first = owner.post(f"/api/tables/{personal}/deal/", {"bets": ["1"]}).json()["round_id"]
    settled = owner.post(f"/api/rounds/{first}/stand/").json()
    assert settled["status"] == "settled"
    stack(["5S", "TH", "6C", "9D"])  # the open round: dealer hole TH hidden while in play
    current = owner.post(f"/api/tables/{personal}/deal/", {"bets": ["1"]}).json()["round_id"]
    shared = seated_table("duel_classic", 3, users["other_player"])
    may_watch_personal = {"owner", "reviewer", "manager", "auditor"}
    refused: dict[tuple[str, str], Any] = {}

    async def scenario() -> None:
        for role in ROLES:
            user = users[role]
            accepted, code, ws = await open_socket(personal, user)
            if role not in may_watch_personal:
                refused[(role, "personal")] = (accepted, code)
                continue
            hello = await ws.receive_json_from(timeout=10)
            assert hello["role"] == ("public" if user is None else "player")
            snapshot = await ws.receive_json_from(timeout=10)  # the open round, latest version
            assert snapshot["round_id"] == current
            assert snapshot["view"]["dealer"]["cards"][0] == {"hidden": True}, role
            own = role == "owner"
            assert ("my_options" in snapshot["view"]) is own, role  # staff: the public view
            await ws.send_json_to({"type": "resume", "rounds": {first: 0}})
            resumed: list[Any] = []
            await ws.send_json_to({"type": "ping"})
            assert (await answer(ws, resumed))["type"] == "pong"
            await ws.disconnect()
            # every version of the settled round, once; the open one was in the snapshot
            assert [(m["round_id"], m["version"]) for m in resumed] == [
                (first, v) for v in range(1, settled["version"] + 1)
            ], role
            assert message_leaks([snapshot, *resumed], viewer(user)) == [], role
            reveal = [m["events"] for m in resumed].index(["HoleCardRevealed"])
            holes = [m["view"]["dealer"]["cards"][:1] for m in resumed[:reveal]]
            assert holes.count([{"hidden": True}]) >= 3, role  # the hole card is never shown
            assert set(map(str, holes)) == {"[]", str([{"hidden": True}])}, role
            assert resumed[reveal]["view"]["dealer"]["cards"][0]["card"] == "TH"
        for role in ROLES:  # a shared table: everyone may watch
            ws, _ = await connect(shared.pk, users[role])
            await ws.send_json_to({"type": "ping"})
            assert (await answer(ws))["type"] == "pong"
            await ws.disconnect()

    run(scenario)
    assert refused == {
        ("anonymous", "personal"): (False, 4404),
        ("other_player", "personal"): (False, 4404),
    }


# For each command: the cards that make it legal for the owner, and its fields.
SETUPS: dict[str, tuple[list[str], dict[str, Any]]] = {
    "hit": (["5S", "TH", "6C", "9D"], {}),
    "stand": (["5S", "TH", "6C", "9D"], {}),
    "double": (["5S", "TH", "6C", "9D"], {}),
    "split": (["8S", "TH", "8C", "9D"], {}),
    "insurance": (["TS", "5H", "9C", "AD"], {"take": True}),
    "even_money": (["AS", "5H", "KC", "AD"], {"take": True}),
}


@pytest.mark.parametrize("kind", ["deal", *SETUPS])
def test_only_the_owner_may_play_each_command(kind: str, stack: Stack) -> None:
    cards, fields = SETUPS.get(kind, (["5S", "TH", "6C", "9D"], {}))
    stack(cards)
    users = make_users()
    owner = Api(users["owner"])
    personal = owner.post("/api/tables/personal/", {"ruleset": "classic"}).json()["id"]
    shared = seated_table("duel", 2, users["owner"], users["other_player"])
    if kind == "deal":
        round_id = None
        message: dict[str, Any] = {"bets": ["1"]}
    else:
        round_id = owner.post(f"/api/tables/{personal}/deal/", {"bets": ["1"]}).json()["round_id"]
        message = {"round_id": round_id, **fields}
    before = world()
    got: dict[tuple[str, str], Any] = {}

    async def scenario() -> None:
        for role in ROLES:
            if role == "owner":
                continue  # last: the one command that runs
            sockets = {"shared": shared.pk}
            if role in STAFF:
                sockets["personal"] = personal
            for where, table in sockets.items():
                ws, _ = await connect(table, users[role])
                reply = await command(ws, kind, **message)
                got[(role, where)] = (reply["type"], reply.get("code"), reply.get("status"))
                await ws.disconnect()
        assert await sync_to_async(world)() == before  # nobody else changed anything
        ws, _ = await connect(personal, users["owner"])
        reply = await command(ws, kind, **message)
        got[("owner", "personal")] = (reply["type"], reply.get("code"), reply.get("status"))
        if reply["type"] == "result":
            assert message_leaks(reply, viewer(users["owner"])) == []
        await ws.disconnect()

    run(scenario)
    expected: dict[tuple[str, str], tuple[str, str | None, int | None]]
    refused_round = ("error", "not_a_participant", 403)
    anonymous = ("error", "not_authenticated", 401)
    if kind == "deal":
        expected = {
            ("anonymous", "shared"): anonymous,
            # a duel has a fixed stake: DEAL is refused before the seat is looked at (as REST)
            ("other_player", "shared"): ("error", "action_not_allowed", 409),
            **{(role, "shared"): ("error", "action_not_allowed", 409) for role in STAFF},
            **{(role, "personal"): ("error", "permission_denied", 403) for role in STAFF},
        }
    else:
        expected = {
            ("anonymous", "shared"): anonymous,
            ("other_player", "shared"): refused_round,
            **{(role, where): refused_round for role in STAFF for where in ("shared", "personal")},
        }
    expected[("owner", "personal")] = ("result", None, None)
    assert got == expected


def test_a_duel_shows_nobody_a_hidden_card_and_takes_moves_only_from_its_players(
    stack: Stack,
) -> None:
    stack(["TS", "9H", "8C", "7D"])  # no blackjack: both hands stay in play
    users = make_users()
    table = seated_table("duel", 2, users["owner"], users["other_player"])
    for player in (users["owner"], users["other_player"]):
        tables.seat_ready(table=table, user=player)
    opened = tables.open_round_at(table)
    assert opened is not None  # a full duel table starts at once
    round_id = opened.id
    before = world()

    async def scenario() -> None:
        for role in ROLES:
            user = users[role]
            ws, got = await connect(table.pk, user)
            await ws.send_json_to({"type": "resume", "rounds": {round_id: 0}})
            await ws.send_json_to({"type": "ping"})
            await answer(ws, got)
            views = [m["view"] for m in got if m["type"] == "round"]
            assert views and views[-1]["phase"] == "dueling", role
            assert message_leaks(got, viewer(user)) == [], role
            for box in views[-1]["boxes"]:
                second = [h["cards"][1] for h in box["hands"]]
                if user is not None and box["player_id"] == str(user.pk):
                    assert all("card" in c for c in second), role  # a player sees their own
                else:
                    assert second == [{"hidden": True}] * len(second), (role, box)
            if role not in ("owner", "other_player"):
                reply = await command(ws, "stand", round_id=round_id)
                assert reply["code"] == (
                    "not_authenticated" if user is None else "not_a_participant"
                ), (role, reply)
            await ws.disconnect()

    run(scenario)
    assert world() == before
