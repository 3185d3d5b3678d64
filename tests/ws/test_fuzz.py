"""Hostile frames on `/ws/tables/<id>/` (issue 9): each gets a clear error or a documented close,
the socket keeps working after an error, and nothing changes (events, rounds, balances).

Setting: alice and bob each have a classic personal table with a round in play; alice and bob
sit at a shared duel_classic table whose round waits for bob's bet; carol sits nowhere.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from casino.client.leakcheck import message_leaks
from casino.live.consumers import MAX_MESSAGE_BYTES, MESSAGE_TYPES
from tests.api.conftest import Api, make_player
from tests.ws.common import answer, connect, run, seated_table, send_frame, world

pytestmark = pytest.mark.django_db(transaction=True)
Stack = Callable[[list[str]], None]


@dataclass
class Scene:
    alice: Any
    bob: Any
    carol: Any
    alice_table: int
    alice_round: str
    bob_round: str
    shared_table: int
    shared_round: str


@pytest.fixture
def scene(stack: Stack) -> Scene:
    stack(["5S", "TH", "6C", "9D"])  # 11 against 9 up: a hand in play, no insurance step
    alice, bob, carol = make_player(), make_player(), make_player()
    a, b = Api(alice), Api(bob)
    rounds = []
    for api in (a, b):
        table = api.post("/api/tables/personal/", {"ruleset": "classic"}).json()["id"]
        dealt = api.post(f"/api/tables/{table}/deal/", {"bets": ["1"]}).json()
        assert dealt["view"]["phase"] == "playing"
        rounds.append((table, dealt["round_id"]))
    shared = seated_table("duel_classic", 3, alice, bob)
    opened = a.post(f"/api/tables/{shared.pk}/deal/", {"bets": ["1"]}).json()
    assert opened["view"]["phase"] == "betting"
    return Scene(
        alice=alice,
        bob=bob,
        carol=carol,
        alice_table=rounds[0][0],
        alice_round=rounds[0][1],
        bob_round=rounds[1][1],
        shared_table=shared.pk,
        shared_round=opened["round_id"],
    )


CLOSED = "closed"


def cases(s: Scene) -> list[tuple[str, str, Any, Any]]:
    """(who, table, frame, expected code / CLOSED). A frame is text (str) or binary (bytes)."""
    mine, theirs, shared, ghost = s.alice_round, s.bob_round, s.shared_round, str(uuid.uuid4())

    def cmd(**fields: Any) -> str:
        return json.dumps({"id": f"f-{uuid.uuid4().hex[:8]}", **fields})

    alice_here = [
        ("not json", "malformed_message"),
        ("", "malformed_message"),
        ('{"type": "ping"', "malformed_message"),
        ("[1, 2]", "malformed_message"),
        ("42", "malformed_message"),
        ('"ping"', "malformed_message"),
        ("null", "malformed_message"),
        ("[" * 2000 + "]" * 2000, "malformed_message"),  # nesting deeper than the parser's stack
        ('{"a":' * 600 + "1" + "}" * 600, "unknown_message"),  # deep but parsed: no type
        (b'{"type": "ping"}', "malformed_message"),  # binary frames are not accepted
        (b"\x00\xff", "malformed_message"),
        ("{}", "unknown_message"),
        ('{"type": "PING"}', "unknown_message"),
        ('{"type": ["ping"]}', "unknown_message"),
        ('{"type": null}', "unknown_message"),
        (json.dumps({"type": "void_round", "round_id": mine}), "unknown_message"),
        ('{"type": "resume", "rounds": []}', "invalid_resume"),
        ('{"type": "resume"}', "invalid_resume"),
        (json.dumps({"type": "resume", "rounds": {mine: "3"}}), "invalid_resume"),
        (json.dumps({"type": "resume", "rounds": {mine: True}}), "invalid_resume"),
        (json.dumps({"type": "resume", "rounds": {mine: -1}}), "invalid_resume"),
        (json.dumps({"type": "resume", "rounds": {mine: 1.5}}), "invalid_resume"),
        (json.dumps({"type": "resume", "rounds": {"x\u0000": 1}}), "invalid_resume"),
        (json.dumps({"type": "hit", "round_id": mine}), "idempotency_key_required"),
        (json.dumps({"type": "hit", "id": "", "round_id": mine}), "idempotency_key_required"),
        (json.dumps({"type": "hit", "id": 7, "round_id": mine}), "idempotency_key_invalid"),
        (json.dumps({"type": "hit", "id": {"a": 1}, "round_id": mine}), "idempotency_key_invalid"),
        (json.dumps({"type": "hit", "id": "a b", "round_id": mine}), "idempotency_key_invalid"),
        (json.dumps({"type": "hit", "id": "x" * 101, "round_id": mine}), "idempotency_key_invalid"),
        (
            json.dumps({"type": "stand", "id": "k\u0000", "round_id": mine}),
            "idempotency_key_invalid",
        ),
        (cmd(type="stand"), "not_found"),
        (cmd(type="stand", round_id=5), "not_found"),
        (cmd(type="stand", round_id="../../admin"), "not_found"),
        (cmd(type="stand", round_id=mine.upper()), "not_found"),
        (cmd(type="stand", round_id=ghost), "not_found"),
        (cmd(type="hit", round_id=mine, confirm="maybe"), "invalid_input"),
        (cmd(type="hit", round_id=mine, confirm=[True]), "invalid_input"),
        (cmd(type="insurance", round_id=mine), "invalid_input"),
        (cmd(type="insurance", round_id=mine, take="x"), "invalid_input"),
        (cmd(type="insurance", round_id=mine, take=True, box=7), "invalid_input"),
        (cmd(type="insurance", round_id=mine, take=True, amount="abc"), "amount_malformed"),
        (cmd(type="insurance", round_id=mine, take=True, amount=0.5), "amount_not_string"),
        (cmd(type="even_money", round_id=mine, take=None), "invalid_input"),
        (cmd(type="deal", bets="1.00"), "invalid_input"),
        (cmd(type="deal", bets=[]), "invalid_input"),
        (cmd(type="deal", mode="triple", bets=["1"]), "invalid_input"),
        (cmd(type="deal", bets=["1"] * 4), "invalid_input"),
        (cmd(type="deal", bets=["-1"]), "amount_negative"),
        (cmd(type="deal", bets=[{"amount": "1"}]), "amount_not_string"),
        ('{"type": "deal", "id": "inf-1", "bets": [1e400]}', "amount_not_string"),
        (cmd(type="deal", bets=["99999999999999"]), "amount_too_large"),
        (cmd(type="deal", bets=["1"]), "action_not_allowed"),  # valid, but betting is closed
        (cmd(type="split", round_id=mine), "action_not_allowed"),  # 5 and 6: no pair
        (cmd(type="hit", round_id=theirs), "not_a_participant"),  # bob's round
        (cmd(type="stand", round_id=shared), "wrong_table"),  # alice plays it, at another table
        ("x" * (MAX_MESSAGE_BYTES + 1), CLOSED),
        (json.dumps({"type": "ping", "pad": "é" * (MAX_MESSAGE_BYTES // 2)}), CLOSED),
        (b"\x00" * (MAX_MESSAGE_BYTES + 1), CLOSED),
    ]
    out = [("alice", "alice_table", frame, code) for frame, code in alice_here]
    out += [
        ("alice", "shared_table", cmd(type="hit", round_id=mine), "wrong_table"),
        ("bob", "shared_table", cmd(type="stand", round_id=shared), "action_not_allowed"),
        ("carol", "shared_table", cmd(type="stand", round_id=shared), "not_a_participant"),
        ("carol", "shared_table", cmd(type="hit", round_id=mine), "not_a_participant"),
        ("carol", "shared_table", cmd(type="deal", bets=["1"]), "not_seated"),
        ("carol", "shared_table", cmd(type="stand", round_id=ghost), "not_found"),
        ("anonymous", "shared_table", cmd(type="stand", round_id=shared), "not_authenticated"),
        ("anonymous", "shared_table", cmd(type="deal", bets=["1"]), "not_authenticated"),
        ("anonymous", "shared_table", cmd(type="hit", round_id=mine), "not_authenticated"),
        ("anonymous", "shared_table", '{"type": "hit"}', "not_authenticated"),
        ("anonymous", "shared_table", "not json", "malformed_message"),
    ]
    return out


STATUS = {
    "not_authenticated": 401,
    "not_a_participant": 403,
    "wrong_table": 400,
    "not_found": 404,
    "action_not_allowed": 409,
    "not_seated": 409,
}


def test_every_hostile_frame_gets_a_clear_error_or_a_documented_close(scene: Scene) -> None:
    before = world()
    users = {"alice": scene.alice, "bob": scene.bob, "carol": scene.carol, "anonymous": None}
    tables = {"alice_table": scene.alice_table, "shared_table": scene.shared_table}
    wrong: list[Any] = []

    async def scenario() -> None:
        for who, where, frame, expected in cases(scene):
            ws, _ = await connect(tables[where], users[who])
            await send_frame(ws, frame)
            if expected == CLOSED:
                got = await ws.receive_output(timeout=10)
                if got != {"type": "websocket.close", "code": 4009}:
                    wrong.append((who, frame[:60], got))
                continue
            reply = await answer(ws)
            status = STATUS.get(expected, reply.get("status"))
            if (reply["type"], reply["code"], reply["status"]) != ("error", expected, status):
                wrong.append((who, where, frame[:80], reply))
            elif not reply["message"] or reply["status"] >= 500:
                wrong.append((who, where, frame[:80], "no clear message", reply))
            await ws.send_json_to({"type": "ping"})  # still up: the error closed nothing
            if (await answer(ws))["type"] != "pong":
                wrong.append((who, frame[:60], "no pong after the error"))
            await ws.disconnect()

    run(scenario)
    assert wrong == [], "\n".join(map(repr, wrong))
    assert world() == before


def test_a_command_echoes_its_id_only_when_usable(scene: Scene) -> None:
    async def scenario() -> None:
        ws, _ = await connect(scene.alice_table, scene.alice)
        await ws.send_json_to({"type": "split", "id": "mine-1", "round_id": scene.alice_round})
        assert (await answer(ws))["id"] == "mine-1"
        await ws.send_json_to({"type": "split", "id": ["x"], "round_id": scene.alice_round})
        assert (await answer(ws))["id"] is None
        await ws.send_to(text_data="nope")
        assert (await answer(ws))["id"] is None
        await ws.disconnect()

    run(scenario)


# Generated junk. Valid-looking commands never carry alice's own round id (that would be a
# real move); they carry bob's round, the shared round, a random uuid or junk instead.
_scalar = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12)
_json = st.recursive(
    _scalar,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=10,
)
_ids = st.from_regex(r"[A-Za-z0-9._:\-]{1,20}", fullmatch=True) | _json
_amounts = st.sampled_from(["1", "0.5", "0", "-1", "1.0000001", "1e3", "", "10000"]) | _json


def _frames(rounds: list[str]) -> st.SearchStrategy[Any]:
    command = st.fixed_dictionaries(
        {"type": st.sampled_from(MESSAGE_TYPES)},
        optional={
            "id": _ids,
            "round_id": st.sampled_from(rounds) | _json,
            "confirm": _json,
            "take": st.booleans() | _json,
            "box": st.integers(-2, 4) | _json,
            "amount": _amounts,
            "bets": st.lists(_amounts, max_size=4) | _json,
            "mode": st.sampled_from(["bet", "rebet", "double"]) | _json,
            "rounds": st.dictionaries(st.sampled_from(rounds) | st.text(max_size=8), _json) | _json,
        },
    )
    return (
        command.map(json.dumps)
        | _json.map(json.dumps)
        | st.text(max_size=200)
        | st.binary(max_size=64)
    )


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_generated_junk_from_the_owner_changes_nothing_and_never_fails_the_server(
    scene: Scene, data: st.DataObject
) -> None:
    before = world()
    rounds = [scene.bob_round, scene.shared_round, str(uuid.uuid4())]
    frame = data.draw(_frames(rounds))

    size = len(frame.encode("utf-8", "surrogatepass") if isinstance(frame, str) else frame)

    async def scenario() -> None:
        ws, _ = await connect(scene.alice_table, scene.alice)
        await send_frame(ws, frame)
        if size > MAX_MESSAGE_BYTES:  # a frame over the limit closes the socket (documented)
            assert await ws.receive_output(timeout=10) == {"type": "websocket.close", "code": 4009}
            return
        await ws.send_json_to({"type": "ping"})
        replies = []
        while True:
            msg = await ws.receive_json_from(timeout=10)
            if msg["type"] == "pong":
                break
            replies.append(msg)
        await ws.disconnect()
        for msg in replies:
            assert msg["type"] in ("error", "round"), msg
            if msg["type"] == "error":
                assert msg["code"] and msg["message"] and 400 <= msg["status"] < 500, msg
        assert message_leaks(replies, str(scene.alice.pk)) == []

    run(scenario)
    assert world() == before
