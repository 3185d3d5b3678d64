"""One representation of money (docs/api.md, "Money"): USDC as a decimal string with exactly 6
places in every response, REST and WebSocket, error details included; never a JSON number."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.test import Client

from tests.api.conftest import Api, make_player
from tests.ws.common import command, connect, drain, run

pytestmark = pytest.mark.django_db(transaction=True)
Stack = Callable[[list[str]], None]

USDC = re.compile(r"-?(0|[1-9][0-9]*)\.[0-9]{6}")
# Every key that carries an amount somewhere in the API (as a list: settlement.insurance).
MONEY_KEYS = frozenset(
    {
        "bet",
        "insurance",
        "stake",
        "gross_return",
        "fee",
        "reversed_fee",
        "amount",
        "min_bet",
        "max_bet",
        "chip_unit",
        "needed",
        "available",
        "balance",
        "net",
        "pending_withdrawal",
        "receivable",
        "handle",
        "players_net",
    }
)


def walk(value: Any, path: str = "$") -> Iterator[tuple[str, str | None, Any]]:
    """(path, key, value) of every value in a JSON document."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield f"{path}.{key}", key, item
            yield from walk(item, f"{path}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield f"{path}[{i}]", None, item
            yield from walk(item, f"{path}[{i}]")


def money_problems(document: Any) -> list[str]:
    """Every amount that is not a 6-place string (the fairness proof of a recalled round keeps
    its integer micro-USDC: its format is the verifier's, docs/fairness.md)."""
    problems = []
    for path, key, value in walk(document):
        if ".proof." in f"{path}.":
            continue
        if isinstance(value, float) and key != "published_at":  # a timestamp, in seconds
            problems.append(f"{path}: a JSON float {value!r}")
        if key in MONEY_KEYS and isinstance(value, int | float) and not isinstance(value, bool):
            problems.append(f"{path}: money as a JSON number {value!r}")
        if key in MONEY_KEYS and isinstance(value, str) and not USDC.fullmatch(value):
            problems.append(f"{path}: money not printed with 6 places {value!r}")
    return problems


def personal(api: Api, ruleset: str = "classic") -> int:
    return int(api.post("/api/tables/personal/", {"ruleset": ruleset}).json()["id"])


def test_a_round_view_prints_every_amount_with_six_places(api: Api, stack: Stack) -> None:
    stack(["5S", "TH", "6C", "9D", "TC"])  # 11 against a 9 up: hit, double or stand
    table = personal(api)
    body = api.post(f"/api/tables/{table}/deal/", {"bets": ["10"]}).json()
    view = body["view"]
    box = view["boxes"][0]
    assert (box["bet"], box["insurance"], box["hands"][0]["stake"]) == (
        "10.000000",
        "0.000000",
        "10.000000",
    )
    assert set(view["options"]) == {"min_bet", "max_bet", "chip_unit", "stake"}
    assert all(USDC.fullmatch(v) for v in view["options"].values())
    assert view["actions"] == ["hit", "stand", "double"]
    doubled = api.post(f"/api/rounds/{body['round_id']}/double/").json()["view"]
    assert doubled["boxes"][0]["hands"][0]["stake"] == "20.000000"
    assert doubled["actions"] == []
    result = doubled["settlement"]["hands"][0]
    assert (result["outcome"], result["stake"], result["gross_return"]) == (
        "win",
        "20.000000",
        "40.000000",
    )  # 21 against the dealer's 19
    assert doubled["settlement"]["fee"] == "0.000000"
    again = api.get(f"/api/rounds/{body['round_id']}/").json()
    assert again["view"] == doubled


def test_the_wallet_balance_and_a_table_are_six_place_strings() -> None:
    api = Api(make_player(funds=100_000_000))
    assert api.get("/api/wallet/balance/").json() == {
        "currency": "USDC",
        "available": "100.000000",
        "pending_withdrawal": "0.000000",
        "receivable": "0.000000",
    }
    table = api.get(f"/api/tables/{personal(api)}/").json()
    assert all(USDC.fullmatch(table[k]) for k in ("min_bet", "max_bet", "stake", "chip_unit"))


def test_insufficient_funds_details_are_usdc_strings(stack: Stack) -> None:
    api = Api(make_player(funds=5_000_000))
    table = personal(api)
    refused = api.post(f"/api/tables/{table}/deal/", {"bets": ["10"]})
    assert refused.status_code == 409
    assert refused.json()["error"]["code"] == "insufficient_funds"
    assert refused.json()["error"]["details"] == {"needed": "10.000000", "available": "5.000000"}
    # The ledger's own refusal (a DOUBLE the balance cannot cover) answers the same way.
    stack(["5S", "TH", "6C", "9D", "TC"])
    round_id = api.post(f"/api/tables/{table}/deal/", {"bets": ["4.5"]}).json()["round_id"]
    short = api.post(f"/api/rounds/{round_id}/double/")
    assert short.status_code == 409
    assert short.json()["error"]["details"] == {"needed": "4.500000", "available": "0.500000"}


def test_a_bet_above_the_maximum_says_the_limit_in_usdc(api: Api) -> None:
    table = personal(api)
    refused = api.post(f"/api/tables/{table}/deal/", {"bets": ["100000"]}).json()["error"]
    assert refused["code"] == "bet_above_maximum"
    # prose reads the limit as a player does (83b7f60); no amount is a JSON number
    assert refused["message"] == "the table maximum is 1000.00 USDC", refused["message"]
    assert money_problems(refused) == []


def test_no_money_is_a_json_number_in_any_answer_of_a_played_round(api: Api, stack: Stack) -> None:
    """REST and WebSocket, the player's and a spectator's: every JSON document of a round."""
    stack(["5S", "TH", "6C", "9D", "2C", "8C", "5S", "TH", "6C", "9D", "2C", "8C"])
    table = personal(api)
    seen: list[Any] = []
    seen.append(api.get("/api/wallet/balance/").json())
    seen.append(api.get("/api/tables/").json())
    dealt = api.post(f"/api/tables/{table}/deal/", {"bets": ["1.5"]}).json()
    round_id = dealt["round_id"]
    seen += [dealt, api.get(f"/api/rounds/{round_id}/").json()]
    seen.append(api.post(f"/api/rounds/{round_id}/hit/").json())
    seen.append(api.post(f"/api/rounds/{round_id}/hit/").json())  # 21: settled
    seen.append(api.get(f"/api/rounds/{round_id}/").json())
    seen.append(api.get(f"/api/me/rounds/{round_id}/").json())
    seen.append(api.get("/api/me/rounds/current/").json())
    seen.append(api.get("/api/wallet/entries/").json())
    seen.append(api.get("/api/wallet/balance/").json())
    stats = [
        Client().get(f"/api/stats/{path}/").json()
        for path in ("leaderboard", "biggest-wins", "tables")
    ]
    assert all(stats), stats  # the settled round is in every one of them
    seen += stats
    assert dealt["view"]["boxes"][0]["bet"] == "1.500000"
    staff = make_player(staff=True)

    async def scenario() -> None:
        ws, got = await connect(table, api.user)
        seen.extend(got)
        pushed: list[Any] = []
        result = await command(ws, "deal", bets=["1.5"], pushed=pushed)
        ws_round = result["round"]["round_id"]
        seen.append(result)
        for _ in range(2):
            seen.append(await command(ws, "hit", round_id=ws_round, pushed=pushed))
        pushed.extend(await drain(ws))
        await ws.disconnect()
        # A new socket (the player's, then a staff spectator's) resumes both rounds from the
        # start: every version again, rebuilt from the event store.
        for user in (api.user, staff):
            again, got = await connect(table, user)
            seen.extend(got)
            await again.send_json_to({"type": "resume", "rounds": {round_id: 0, ws_round: 0}})
            resumed = [await again.receive_json_from(timeout=10), *await drain(again)]
            assert len(resumed) >= 6
            seen.extend(resumed)
            await again.disconnect()
        seen.extend(pushed)
        assert any(m["type"] == "round" for m in pushed)
        assert result["round"]["view"]["boxes"][0]["bet"] == "1.500000"

    run(scenario)
    problems = [problem for document in seen for problem in money_problems(document)]
    assert problems == []
    amounts = [v for doc in seen for _, k, v in walk(doc) if k in MONEY_KEYS]
    assert len(amounts) > 50  # the walk did find the money


def test_a_spectator_sees_no_actions_and_strings(api: Api, stack: Stack) -> None:
    stack(["5S", "TH", "6C", "9D"])
    table = personal(api)
    round_id = api.post(f"/api/tables/{table}/deal/", {"bets": ["1"]}).json()["round_id"]
    staff = Api(make_player(staff=True))
    shown = staff.get(f"/api/rounds/{round_id}/").json()["view"]
    assert shown["actions"] == [] and shown["boxes"][0]["bet"] == "1.000000"
    assert money_problems(shown) == []


def test_the_schema_documents_the_round_view_and_its_money(client: Client) -> None:
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    components = schema["components"]["schemas"]
    view = components["RoundView"]
    assert {"boxes", "phase", "actions", "options", "dealer", "settlement"} <= set(
        view["properties"]
    )
    assert "additionalProperties" not in components["RoundOut"]["properties"]["view"]
    # a shared table's view carries `beacon` (docs/api.md, "Shared tables wait for the beacon")
    assert view["properties"]["beacon"]["allOf"][0]["$ref"].endswith("/RoundBeacon")
    beacon = components["RoundBeacon"]["properties"]
    assert set(beacon) == {"name", "public_key", "round", "round_time"}
    phase = view["properties"]["phase"]
    assert "beacon" in components[phase["$ref"].rsplit("/", 1)[1]]["enum"]
    box = components["RoundBox"]["properties"]
    assert box["bet"]["type"] == "string" and "pattern" in box["bet"]
    items = components["RoundView"]["properties"]["actions"]["items"]
    enum = components[items["$ref"].rsplit("/", 1)[1]]["enum"] if "$ref" in items else items["enum"]
    assert set(enum) == {"deal", "insurance", "even_money", "hit", "stand", "double", "split"}
    described = [
        p.get("description", "")
        for c in components.values()
        for p in c.get("properties", {}).values()
    ]
    for operation in (op for path in schema["paths"].values() for op in path.values()):
        described.append(operation.get("description", ""))
    assert not [d for d in described if re.search(r"seed 0\d\d", d, re.IGNORECASE)]
