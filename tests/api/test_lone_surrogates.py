"""A JSON string holding a lone surrogate escape (`"\\ud800"`) is refused at parse time (issue 21).

The standard library's parser takes `"\\ud800"` as a one-character string that is not Unicode
text: it cannot be written as UTF-8, so DRF's renderer failed while it echoed the value back
in an error (an HTML 500), and a retry with the same Idempotency-Key got the 500 again. Every
endpoint that takes a JSON body answers 400 `malformed_request` instead, before anything runs
or is recorded, and the WebSocket answers `malformed_message`.
"""

from __future__ import annotations

import io

import pytest
from drf_spectacular.generators import SchemaGenerator
from rest_framework.authtoken.models import Token
from rest_framework.exceptions import ParseError
from rest_framework.test import APIClient

from casino.api.plumbing import JSONParser, has_lone_surrogate
from casino.tables.services import demo_table
from ledger.models import IdempotencyRecord
from tests.api.conftest import make_player
from tests.ws.common import command, connect, run, world

pytestmark = pytest.mark.django_db

ROUND = "00000000-0000-4000-8000-000000000000"  # any well-formed id: the body is parsed first
LONE = "\\ud800"  # as written in the JSON text


def _operations() -> list[tuple[str, str, list[str]]]:
    """(method, path, body fields) of every operation whose schema has a request body."""
    schema = SchemaGenerator().get_schema(request=None, public=True)
    found = []
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            body = operation.get("requestBody")
            if body is None:
                continue
            ref = body["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
            fields = list(schema["components"]["schemas"][ref].get("properties", {}))
            found.append((method, path, fields))
    return sorted(found)


OPERATIONS = _operations()


def test_the_list_covers_the_endpoints_the_probe_found() -> None:
    paths = {path for _, path, _ in OPERATIONS}
    for expected in (
        "/api/wallet/withdrawals/",
        "/api/wallet/faucet/",
        "/api/tables/{table_id}/deal/",
        "/api/tables/personal/",
        "/api/me/preferences/",
        "/api/auth/login/",
        "/api/rounds/{round_id}/hit/",
    ):
        assert expected in paths


def _body(fields: list[str], value: str) -> bytes:
    """Every field of the body set to `value` (a JSON text), plus a list of it for `bets`."""
    parts = [f'"{name}": {f"[{value}]" if name == "bets" else value}' for name in fields]
    parts.append(f'"extra": {value}')
    return ("{" + ", ".join(parts) + "}").encode()


@pytest.mark.parametrize(("method", "path", "fields"), OPERATIONS, ids=lambda v: str(v))
def test_every_json_body_with_a_lone_surrogate_is_a_400_in_the_error_shape(
    method: str, path: str, fields: list[str]
) -> None:
    staff = make_player(staff=True)
    staff.is_superuser = True  # every staff operation is open to it
    staff.save()
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=staff).key}")
    url = path.replace("{table_id}", str(demo_table("duel_classic").pk)).replace(
        "{round_id}", ROUND
    )
    before = world()
    response = getattr(client, method)(
        url,
        data=_body(fields, f'"{LONE}"'),
        content_type="application/json",
        HTTP_IDEMPOTENCY_KEY="lone-1",
    )
    assert response.status_code == 400, response.content
    assert response["Content-Type"] == "application/json"
    error = response.json()["error"]
    assert error["code"] == "malformed_request"
    assert "surrogate" in error["message"]
    assert world() == before
    assert not IdempotencyRecord.objects.exists()


def test_a_lone_surrogate_anywhere_is_refused_a_pair_is_text() -> None:
    parser = JSONParser()
    for raw in (
        b'{"a": "\\ud800"}',
        b'{"\\udfff": 1}',  # in a key
        b'{"a": [1, {"b": ["x\\udc00y"]}]}',  # deep inside
        b'["\\ud83d"]',  # the first half of a pair, alone
    ):
        with pytest.raises(ParseError, match="surrogate"):
            parser.parse(io.BytesIO(raw), "application/json", {})
    assert parser.parse(io.BytesIO(b'{"a": "\\ud83d\\ude00"}'), "application/json", {}) == {
        "a": "\U0001f600"
    }
    with pytest.raises(ParseError, match="surrogate"):  # another charset: DRF's parser, checked
        parser.parse(
            io.BytesIO('{"a": "\\ud800"}'.encode("latin-1")),
            "application/json",
            {"encoding": "latin-1"},
        )
    assert has_lone_surrogate({"k": ["\ud800"]}) and not has_lone_surrogate({"k": ["ok", 1]})


def test_a_retry_with_the_same_key_after_the_refusal_runs() -> None:
    player = make_player(funds=0)
    client = APIClient()
    client.force_authenticate(player)
    refused = client.post(
        "/api/wallet/faucet/",
        data=f'{{"amount": "{LONE}"}}'.encode(),
        content_type="application/json",
        HTTP_IDEMPOTENCY_KEY="same-key",
    )
    assert refused.status_code == 400
    again = client.post(
        "/api/wallet/faucet/",
        data=b'{"amount": "1.00"}',
        content_type="application/json",
        HTTP_IDEMPOTENCY_KEY="same-key",
    )
    assert again.status_code == 201, again.content
    assert "Idempotent-Replayed" not in again


@pytest.mark.django_db(transaction=True)
def test_a_websocket_frame_with_a_lone_surrogate_is_a_malformed_message() -> None:
    player = make_player()
    table = demo_table("duel_classic")

    async def scenario() -> None:
        ws, _ = await connect(table.pk, player)
        for frame in (
            f'{{"type": "deal", "id": "s1", "bets": ["{LONE}"]}}',
            f'{{"type": "ping", "note": "{LONE}"}}',
            f'{{"type": "hit", "id": "{LONE}", "round_id": "{ROUND}"}}',
        ):
            await ws.send_to(text_data=frame)
            got = await ws.receive_json_from(timeout=10)
            assert got["type"] == "error" and got["code"] == "malformed_message", got
            assert "surrogate" in got["message"]
        pong = await command(ws, "ping")  # the socket stays open
        assert pong["type"] == "pong"
        await ws.disconnect()

    before = world()
    run(scenario)
    assert world() == before
