"""The fairness API: keys, client seed, commitment, round proofs; bad input is a clear 4xx."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import override_settings
from rest_framework.test import APIClient

from fairness import services
from fairness.chain import hash_seed
from fairness.verify import KeyRing, verify_round
from tests.fairness.factories import round_finish, round_open, round_play, user_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def client() -> APIClient:
    return APIClient()


def error(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.content
    body: dict[str, Any] = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "details"}
    assert body["error"]["code"] == code, body
    return body["error"]


def test_keys_list_the_current_key_and_keep_old_ones(client: APIClient) -> None:
    first = client.get("/api/fairness/keys").json()["keys"]
    assert len(first) == 1 and first[0]["current"] and first[0]["algorithm"] == "Ed25519"
    round_play(table_id="t1", round_id="r1", client_seeds=["alice"])  # records the key
    with override_settings(RECEIPT_SIGNING_KEY="cd" * 32):
        keys = client.get("/api/fairness/keys/").json()["keys"]
    assert keys[0]["key_id"] == first[0]["key_id"]
    assert [k["current"] for k in keys] == [False, True]


def test_client_seed_needs_a_login(client: APIClient) -> None:
    error(client.get("/api/fairness/client-seed"), 401, "not_authenticated")
    error(client.put("/api/fairness/client-seed", {"client_seed": "a"}), 401, "not_authenticated")


def test_client_seed_get_and_put(client: APIClient) -> None:
    client.force_authenticate(user_create())
    seed = client.get("/api/fairness/client-seed").json()["client_seed"]
    assert 1 <= len(seed) <= 64
    response = client.put(
        "/api/fairness/client-seed", {"client_seed": "Lucky_7.x-y"}, format="json"
    )
    assert response.status_code == 200 and response.json() == {"client_seed": "Lucky_7.x-y"}
    assert client.get("/api/fairness/client-seed").json() == {"client_seed": "Lucky_7.x-y"}


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"client_seed": "bad seed!"}, "invalid_client_seed"),
        ({"client_seed": "x" * 65}, "invalid_client_seed"),
        ({"client_seed": "a|b"}, "invalid_client_seed"),
        ({"client_seed": ""}, "invalid_input"),
        ({}, "invalid_input"),
        ({"client_seed": 12}, "invalid_input"),
    ],
)
def test_bad_client_seeds_get_a_clear_400(
    client: APIClient, body: dict[str, Any], code: str
) -> None:
    client.force_authenticate(user_create())
    error(client.put("/api/fairness/client-seed", body, format="json"), 400, code)


def test_client_seed_change_during_a_round_is_a_409(
    client: APIClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    client.force_authenticate(user_create())
    monkeypatch.setattr(services, "_round_in_progress", lambda user: True)
    err = error(
        client.put("/api/fairness/client-seed", {"client_seed": "abc"}, format="json"),
        409,
        "round_in_progress",
    )
    assert "during a round" in err["message"]


def test_commitment_is_the_terminal_then_each_revealed_seed(client: APIClient) -> None:
    unknown = error(client.get("/api/fairness/commitment?table=t1"), 404, "unknown_table")
    assert unknown["details"] == {"table": "t1"}
    chain = services.chain_create(table_id="t1", length=30)
    first = client.get("/api/fairness/commitment", {"table": "t1"}).json()
    assert first == {
        "table_id": "t1", "chain_id": str(chain.pk), "nonce": 1, "commitment": chain.terminal,
        "terminal": chain.terminal, "chain_length": 30,
    }  # fmt: skip
    opened = round_open(table_id="t1", round_id="r1", client_seeds=["alice"])
    err = error(client.get("/api/fairness/commitment?table=t1"), 409, "round_in_progress")
    assert opened["issued"].server_seed not in str(err)
    proof = round_finish(round_id="r1", opened=opened)
    second = client.get("/api/fairness/commitment?table=t1").json()
    assert second["nonce"] == 2 and second["commitment"] == proof.receipt["server_seed"]


@pytest.mark.parametrize("query", ["", "?table=", "?table=has%20space", "?table=" + "x" * 65])
def test_commitment_with_a_bad_table_is_a_400(client: APIClient, query: str) -> None:
    error(client.get("/api/fairness/commitment" + query), 400, "invalid_table")


def test_round_proof_unknown_pending_and_ready(client: APIClient) -> None:
    error(client.get("/api/fairness/rounds/nope"), 404, "unknown_round")
    error(client.get("/api/fairness/rounds/" + "x" * 65), 400, "invalid_round_id")
    error(client.get("/api/fairness/rounds/bad%20id"), 400, "invalid_round_id")
    error(client.get("/api/fairness/rounds/a/b"), 400, "invalid_round_id")
    error(client.get("/api/fairness/rounds/"), 400, "invalid_round_id")
    opened = round_open(table_id="t1", round_id="r1", client_seeds=["alice", "bob"])
    pending = client.get("/api/fairness/rounds/r1")
    err = error(pending, 409, "proof_not_ready")
    assert err["details"]["commitment"] == opened["issued"].commitment
    assert opened["issued"].server_seed not in pending.content.decode()
    round_finish(round_id="r1", opened=opened)
    proof = client.get("/api/fairness/rounds/r1").json()
    assert hash_seed(proof["receipt"]["server_seed"]) == proof["receipt"]["commitment"]
    keys = client.get("/api/fairness/keys").json()
    report = verify_round(proof["bundle"], KeyRing.from_keys_document(keys))
    assert report.ok, report.failures


def test_the_schema_lists_every_fairness_operation(client: APIClient) -> None:
    schema = client.get("/api/schema/", {"format": "json"}).json()
    ops = {op["operationId"] for path in schema["paths"].values() for op in path.values()}
    assert {"fairness_keys", "fairness_client_seed_get", "fairness_client_seed_set",
            "fairness_commitment", "fairness_round_proof"} <= ops  # fmt: skip
