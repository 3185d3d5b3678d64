"""Login/logout, tables (list, staff create, personal, sit, leave) and the one error shape."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import Group
from rest_framework.test import APIClient

from casino.models import Seat, Table
from casino.tables.services import demo_table, table_add
from tests.api.conftest import PASSWORD, Api, make_player

pytestmark = pytest.mark.django_db


def assert_error(response: Any, status: int, code: str) -> None:
    assert response.status_code == status, response.content
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "details"}
    assert body["error"]["code"] == code


def test_login_gives_a_session_and_a_token_and_logout_revokes_the_token() -> None:
    user = make_player()
    client = APIClient()
    response = client.post(
        "/api/auth/login/", {"username": user.username, "password": PASSWORD}, format="json"
    )
    assert response.status_code == 200
    token = response.json()["token"]
    assert client.get("/api/auth/me/").json()["username"] == user.username  # session cookie
    bearer = APIClient()
    bearer.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    assert bearer.get("/api/auth/me/").json()["id"] == user.pk
    assert bearer.post("/api/auth/logout/").status_code == 204
    assert_error(bearer.get("/api/auth/me/"), 401, "authentication_failed")


def test_wrong_password_and_anonymous_requests_are_401() -> None:
    user = make_player()
    client = APIClient()
    wrong = client.post(
        "/api/auth/login/", {"username": user.username, "password": "nope"}, format="json"
    )
    assert_error(wrong, 401, "authentication_failed")
    assert_error(client.get("/api/tables/"), 401, "not_authenticated")
    assert_error(
        client.post("/api/auth/login/", "[1]", content_type="application/json"),
        400,
        "invalid_input",
    )


def test_personal_table_is_created_once_and_seats_its_owner(api: Api) -> None:
    first = api.post("/api/tables/personal/", {"ruleset": "classic"}).json()
    again = api.post("/api/tables/personal/", {"ruleset": "classic"}).json()
    assert first["id"] == again["id"] and first["personal"] is True
    assert first["seated"] == [{"position": 0, "user_id": api.user.pk, "ready": False}]
    other = api.post("/api/tables/personal/", {"ruleset": "atlantic_city"}).json()
    assert other["id"] != first["id"] and other["ruleset"] == "atlantic_city"
    assert_error(api.post("/api/tables/personal/", {"ruleset": "duel"}), 400, "invalid_input")


def test_tables_list_shows_shared_tables_and_only_my_personal_ones(api: Api) -> None:
    shared = demo_table("duel")
    mine = api.post("/api/tables/personal/", {"ruleset": "classic"}).json()["id"]
    stranger = Api(make_player())
    theirs = stranger.post("/api/tables/personal/", {"ruleset": "classic"}).json()["id"]
    ids = {t["id"] for t in api.get("/api/tables/").json()}
    assert shared.pk in ids and mine in ids and theirs not in ids
    assert_error(api.post(f"/api/tables/{theirs}/sit/"), 403, "permission_denied")
    assert_error(api.get(f"/api/tables/{theirs}/"), 404, "not_found")


def test_staff_create_table_with_limits_and_validation() -> None:
    manager = make_player(staff=True)
    manager.groups.add(Group.objects.get(name="manager"))  # casino.add_table
    staff = Api(manager)
    body = {"name": "High", "ruleset": "duel_classic", "min_bet": "1", "max_bet": "100", "seats": 3}
    created = staff.post("/api/staff/tables/", body)
    assert created.status_code == 201, created.content
    table = created.json()
    assert (table["min_bet"], table["max_bet"], table["seats"]) == ("1.000000", "100.000000", 3)
    duel = staff.post("/api/staff/tables/", {"name": "D", "ruleset": "duel", "stake": "2"}).json()
    assert duel["stake"] == duel["min_bet"] == duel["max_bet"] == "2.000000"
    off_unit = staff.post("/api/staff/tables/", {**body, "min_bet": "1.001"})
    assert_error(off_unit, 400, "invalid_table")
    assert staff.post("/api/staff/tables/", {**body, "min_bet": "abc"}).status_code == 400
    too_many = staff.post("/api/staff/tables/", {**body, "seats": 8})
    assert_error(too_many, 400, "invalid_table")
    assert_error(Api(make_player()).post("/api/staff/tables/", body), 403, "permission_denied")


def test_sit_and_leave_a_shared_table_and_a_full_table_is_409() -> None:
    table = table_add(
        Table(name="t", ruleset="duel", min_bet=10**6, max_bet=10**6, stake=10**6, seats=2)
    )
    a, b, c = (Api(make_player()) for _ in range(3))
    assert a.post(f"/api/tables/{table.pk}/sit/").json()["seated"][0]["user_id"] == a.user.pk
    b.post(f"/api/tables/{table.pk}/sit/")
    assert_error(c.post(f"/api/tables/{table.pk}/sit/"), 409, "table_full")
    a.post(f"/api/tables/{table.pk}/leave/")
    assert c.post(f"/api/tables/{table.pk}/sit/").status_code == 200
    assert sorted(Seat.objects.filter(table=table).values_list("user_id", flat=True)) == sorted(
        [b.user.pk, c.user.pk]
    )


def test_every_post_needs_an_idempotency_key_and_a_reused_key_with_another_body_is_422(
    api: Api,
) -> None:
    no_key = api.client.post("/api/tables/personal/", {"ruleset": "classic"}, format="json")
    assert_error(no_key, 400, "idempotency_key_required")
    api.post("/api/tables/personal/", {"ruleset": "classic"}, key="same")
    replay = api.post("/api/tables/personal/", {"ruleset": "classic"}, key="same")
    assert replay["Idempotent-Replayed"] == "true"
    reused = api.post("/api/tables/personal/", {"ruleset": "atlantic_city"}, key="same")
    assert_error(reused, 422, "idempotency_key_reused")


def test_preferences_are_stored_and_returned(api: Api) -> None:
    assert api.get("/api/me/preferences/").json()["offer_insurance"] is True
    changed = api.patch(
        "/api/me/preferences/",
        {"safety_net": True, "felt": "blue", "left_handed": True, "audio": False},
    ).json()
    assert (changed["safety_net"], changed["felt"], changed["left_handed"], changed["audio"]) == (
        True,
        "blue",
        True,
        False,
    )
    assert_error(api.patch("/api/me/preferences/", {"felt": "plaid"}), 400, "invalid_input")
    assert_error(api.patch("/api/me/preferences/", {"audio": "loud"}), 400, "invalid_input")
