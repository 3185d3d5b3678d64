"""What the OpenAPI schema promises every client, so that Schemathesis (and any generated
client) sends an Idempotency-Key with every money-moving POST and knows every error shape."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

# POSTs that move no money and need no key: logging in and out, and a witness's cosignature
# (kept once per witness and size: a repeat is answered 200, nothing written twice).
NO_KEY = {"auth_login", "auth_logout", "log_cosign"}


@pytest.fixture(scope="module")
def schema(django_db_blocker: Any) -> dict[str, Any]:
    with django_db_blocker.unblock():
        response = Client().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    return dict(response.json())


def operations(schema: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (path, method, op)
        for path, item in schema["paths"].items()
        for method, op in item.items()
        if method in ("get", "post", "put", "patch", "delete")
    ]


def test_every_post_but_login_and_logout_requires_an_idempotency_key(
    schema: dict[str, Any],
) -> None:
    missing = [
        f"POST {path}"
        for path, method, op in operations(schema)
        if method == "post"
        and op["operationId"] not in NO_KEY
        and not any(
            p["in"] == "header" and p["name"] == "Idempotency-Key" and p.get("required")
            for p in op.get("parameters", [])
        )
    ]
    assert missing == []


def test_every_error_answer_is_the_one_error_shape(schema: dict[str, Any]) -> None:
    wrong = [
        f"{method.upper()} {path} {status}"
        for path, method, op in operations(schema)
        for status, answer in op["responses"].items()
        if int(status) >= 400
        and answer["content"]["application/json"]["schema"]
        != {"$ref": "#/components/schemas/ApiError"}
    ]
    assert wrong == []
    authenticated = [op for _, _, op in operations(schema) if {} not in op.get("security", [{}])]
    assert authenticated and all("401" in op["responses"] for op in authenticated)


def test_each_round_action_says_what_it_does(schema: dict[str, Any]) -> None:
    """Each action's endpoint is built from its command's definition: its own operation id,
    description and request body (none for the actions without input)."""
    actions = {
        op["operationId"]: op
        for path, method, op in operations(schema)
        if method == "post" and path.startswith("/api/rounds/")
    }
    assert sorted(actions) == [
        "rounds_double", "rounds_even_money", "rounds_hit",
        "rounds_insurance", "rounds_split", "rounds_stand",
    ]  # fmt: skip
    assert actions["rounds_stand"]["description"] == "Take no more cards."
    assert actions["rounds_hit"]["description"].startswith("Draw a card. With the safety net on")
    assert len({op["description"] for op in actions.values()}) == 6
    with_body = {name for name, op in actions.items() if "requestBody" in op}
    assert with_body == {"rounds_hit", "rounds_insurance", "rounds_even_money"}


def test_every_operation_says_what_it_does(schema: dict[str, Any]) -> None:
    """A description of its own for every operation: none empty, and none shared with another
    path's (a view without a docstring of its own publishes its base class's)."""
    paths_of: dict[str, set[str]] = {}
    for path, _, op in operations(schema):
        paths_of.setdefault(op.get("description", "").strip(), set()).add(path)
    assert "" not in paths_of, sorted(paths_of.get("", ()))
    shared = {text[:60]: sorted(paths) for text, paths in paths_of.items() if len(paths) > 1}
    assert shared == {}
