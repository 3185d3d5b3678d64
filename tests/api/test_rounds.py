"""Betting and every action over REST, with exact cards (stacked shoe) where it matters.

Classic deal order (seed 000): player, dealer (face down), player, dealer (face up).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from casino.eventstore.models import StoredEvent
from tests.api.conftest import Api, make_player
from tests.api.test_auth_tables import assert_error

pytestmark = pytest.mark.django_db
Stack = Callable[[list[str]], None]


def personal(api: Api, ruleset: str = "classic") -> int:
    return int(api.post("/api/tables/personal/", {"ruleset": ruleset}).json()["id"])


def deal(api: Api, table: int, *bets: str, mode: str = "bet") -> dict[str, Any]:
    response = api.post(f"/api/tables/{table}/deal/", {"mode": mode, "bets": list(bets)})
    assert response.status_code == 200, response.content
    return dict(response.json())


def available(api: Api) -> str:
    return str(api.get("/api/wallet/balance/").json()["available"])


def cards(hand: dict[str, Any]) -> list[str]:
    return [c["card"] for c in hand["cards"]]


def test_deal_then_stand_settles_with_exact_cards_and_hides_the_hole_card(
    api: Api, stack: Stack
) -> None:
    stack(["TS", "9H", "7C", "8D"])
    table = personal(api)
    body = deal(api, table, "1.00")
    view = body["view"]
    assert view["phase"] == "playing" and cards(view["boxes"][0]["hands"][0]) == ["TS", "7C"]
    assert view["dealer"]["cards"][0] == {"hidden": True} and view["server_seed"] is None
    done = api.post(f"/api/rounds/{body['round_id']}/stand/").json()
    assert done["status"] == "settled"
    assert done["view"]["settlement"]["hands"][0]["outcome"] == "push"
    assert [c["card"] for c in done["view"]["dealer"]["cards"]] == ["9H", "8D"]
    assert done["view"]["server_seed"] is not None


def test_hit_and_double_take_exact_cards(api: Api, stack: Stack) -> None:
    stack(["5S", "TH", "6C", "9D", "TC"])  # 11 vs 9 up: double gets TC, 21
    table = personal(api)
    round_id = deal(api, table, "2")["round_id"]
    doubled = api.post(f"/api/rounds/{round_id}/double/").json()["view"]
    hand = doubled["boxes"][0]["hands"][0]
    assert cards(hand) == ["5S", "6C", "TC"] and hand["doubled"] and hand["stake"] == "4.000000"
    assert doubled["settlement"]["hands"][0]["outcome"] == "win"
    stack(["5S", "TH", "6C", "9D", "2C", "TC"])
    round_id = deal(api, table, "1")["round_id"]
    hit = api.post(f"/api/rounds/{round_id}/hit/").json()["view"]
    assert cards(hit["boxes"][0]["hands"][0]) == ["5S", "6C", "2C"]


def test_split_makes_two_hands_with_a_second_stake(api: Api, stack: Stack) -> None:
    stack(["8S", "TH", "8C", "9D", "3C", "TD"])
    table = personal(api)
    round_id = deal(api, table, "1")["round_id"]
    view = api.post(f"/api/rounds/{round_id}/split/").json()["view"]
    hands = view["boxes"][0]["hands"]
    assert [cards(h) for h in hands] == [["8S", "3C"], ["8C", "TD"]], hands
    assert all(h["stake"] == "1.000000" and h["split"] for h in hands)


def test_insurance_take_with_dealer_ace_costs_half_the_bet(api: Api, stack: Stack) -> None:
    stack(["TS", "5H", "9C", "AD"])  # 19 vs ace up, hole 5: no dealer blackjack
    table = personal(api)
    before = available(api)
    body = deal(api, table, "2")
    assert body["view"]["phase"] == "insurance"
    view = api.post(f"/api/rounds/{body['round_id']}/insurance/", {"take": True}).json()["view"]
    assert view["boxes"][0]["insurance"] == "1.000000"
    assert view["phase"] == "playing" and view["dealer"]["blackjack"] is False
    assert before != available(api)


def test_insurance_decline_and_a_bad_amount_is_refused(api: Api, stack: Stack) -> None:
    stack(["TS", "5H", "9C", "AD"])
    table = personal(api)
    round_id = deal(api, table, "2")["round_id"]
    bad = api.post(f"/api/rounds/{round_id}/insurance/", {"take": True, "amount": "0.50"})
    assert bad.status_code == 400  # classic allows exactly half the bet
    view = api.post(f"/api/rounds/{round_id}/insurance/", {"take": False}).json()["view"]
    assert view["boxes"][0]["insurance_status"] == "declined"


def test_even_money_pays_one_to_one_at_once(api: Api, stack: Stack) -> None:
    stack(["AS", "5H", "KC", "AD"])
    table = personal(api)
    body = deal(api, table, "2")
    assert body["view"]["boxes"][0]["insurance_status"] == "even_money_offered"
    done = api.post(f"/api/rounds/{body['round_id']}/even-money/", {"take": True}).json()
    assert done["status"] == "settled"
    assert done["view"]["settlement"]["hands"][0]["gross_return"] == "4.000000"


def test_no_insurance_offer_when_the_player_disables_it(api: Api, stack: Stack) -> None:
    api.patch("/api/me/preferences/", {"offer_insurance": False})
    stack(["TS", "5H", "9C", "AD"])
    body = deal(api, personal(api), "1")
    assert body["view"]["phase"] == "playing"


def test_safety_net_asks_to_confirm_a_risky_hit(api: Api, stack: Stack) -> None:
    api.patch("/api/me/preferences/", {"safety_net": True})
    stack(["TS", "5H", "7C", "9D", "2C"])  # hard 17
    round_id = deal(api, personal(api), "1")["round_id"]
    assert_error(api.post(f"/api/rounds/{round_id}/hit/"), 400, "confirm_required")
    view = api.post(f"/api/rounds/{round_id}/hit/", {"confirm": True}).json()["view"]
    assert cards(view["boxes"][0]["hands"][0]) == ["TS", "7C", "2C"]


def test_rebet_and_double_bet_repeat_the_last_bet(api: Api, stack: Stack) -> None:
    stack(["TS", "9H", "7C", "8D"])
    table = personal(api, "atlantic_city")
    assert_error(api.post(f"/api/tables/{table}/deal/", {"mode": "rebet"}), 409, "no_previous_bet")
    first = deal(api, table, "1", "0.50")
    assert [b["bet"] for b in first["view"]["boxes"]] == ["1.000000", "0.500000"]
    for _ in first["view"]["boxes"]:
        state = api.get(f"/api/rounds/{first['round_id']}/").json()
        if state["status"] == "open":
            api.post(f"/api/rounds/{first['round_id']}/stand/")
    again = deal(api, table, mode="rebet")
    assert [b["bet"] for b in again["view"]["boxes"]] == ["1.000000", "0.500000"]
    while api.get(f"/api/rounds/{again['round_id']}/").json()["status"] == "open":
        api.post(f"/api/rounds/{again['round_id']}/stand/")
    doubled = deal(api, table, mode="double")
    assert [b["bet"] for b in doubled["view"]["boxes"]] == ["2.000000", "1.000000"]


def test_limits_chip_unit_and_insufficient_funds_change_nothing(stack: Stack) -> None:
    poor = Api(make_player(funds=1_000_000))
    table = personal(poor)
    before = StoredEvent.objects.count()
    assert_error(
        poor.post(f"/api/tables/{table}/deal/", {"bets": ["5"]}), 409, "insufficient_funds"
    )
    assert StoredEvent.objects.count() == before
    assert poor.get("/api/wallet/balance/").json()["available"] == "1.000000"
    below = poor.post(f"/api/tables/{table}/deal/", {"bets": ["0.05"]})
    assert_error(below, 400, "bet_below_minimum")
    off_unit = poor.post(f"/api/tables/{table}/deal/", {"bets": ["0.155"]})
    assert off_unit.status_code == 400
    assert poor.get("/api/wallet/balance/").json()["available"] == "1.000000"


def test_an_idempotent_retry_of_a_hit_draws_one_card_only(api: Api, stack: Stack) -> None:
    stack(["5S", "TH", "6C", "9D", "2C", "3C"])
    round_id = deal(api, personal(api), "1")["round_id"]
    first = api.post(f"/api/rounds/{round_id}/hit/", key="hit-1")
    again = api.post(f"/api/rounds/{round_id}/hit/", key="hit-1")
    assert again["Idempotent-Replayed"] == "true" and again.json() == first.json()
    state = api.get(f"/api/rounds/{round_id}/").json()
    assert cards(state["view"]["boxes"][0]["hands"][0]) == ["5S", "6C", "2C"]
    other = api.post(f"/api/rounds/{round_id}/hit/", {"confirm": True}, key="hit-1")
    assert_error(other, 422, "idempotency_key_reused")


def test_authorization_matrix_b_cannot_see_or_act_on_a_round_wallet_or_preferences(
    api: Api, stack: Stack
) -> None:
    stack(["5S", "TH", "6C", "9D"])
    table = personal(api)
    round_id = deal(api, table, "1")["round_id"]
    api.patch("/api/me/preferences/", {"felt": "red"})
    b = Api(make_player())
    assert_error(b.get(f"/api/rounds/{round_id}/"), 403, "not_a_participant")
    for action in ("hit", "stand", "double", "split"):
        assert_error(b.post(f"/api/rounds/{round_id}/{action}/"), 403, "not_a_participant")
    assert_error(b.get(f"/api/me/rounds/{round_id}/"), 403, "not_a_participant")
    assert_error(b.post(f"/api/tables/{table}/deal/", {"bets": ["1"]}), 403, "permission_denied")
    assert b.get("/api/me/rounds/").json() == {"next": None, "results": []}
    assert b.get("/api/me/preferences/").json()["felt"] == "green"
    assert b.get("/api/wallet/balance/").json()["available"] == "1000.000000"
    assert_error(b.get("/api/rounds/not-a-uuid/"), 404, "not_found")


def test_recall_lists_my_last_rounds_with_proof_and_resume_shows_the_open_one(
    api: Api, stack: Stack
) -> None:
    stack(["TS", "9H", "7C", "8D"])
    table = personal(api)
    for _ in range(11):
        round_id = deal(api, table, "0.10")["round_id"]
        api.post(f"/api/rounds/{round_id}/stand/")
    open_round = deal(api, table, "0.10")["round_id"]
    page = api.get("/api/me/rounds/", status="settled").json()
    recalled = page["results"]
    assert len(recalled) == 10 and page["next"] is not None
    first = recalled[0]
    assert first["proof"]["signature"] and first["proof_url"].endswith(first["round_id"])
    assert first["verify_url"] == f"/fairness/verify/?round={first['round_id']}"
    assert first["view"]["server_seed"] is not None
    assert (first["outcome"], first["net"]) == ("push", "0.000000")
    current = api.get("/api/me/rounds/current/").json()
    assert [r["round_id"] for r in current] == [open_round]
    assert current[0]["view"]["dealer"]["cards"][0] == {"hidden": True}


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    body=st.one_of(
        st.none(),
        st.integers(),
        st.text(max_size=20),
        st.lists(st.integers(), max_size=3),
        st.dictionaries(
            st.sampled_from(["bets", "mode", "take", "box", "amount", "confirm", "ready"]),
            st.one_of(
                st.none(),
                st.booleans(),
                st.integers(),
                st.floats(allow_nan=False, allow_infinity=False),
                st.text(max_size=12),
                st.lists(st.one_of(st.text(max_size=8), st.integers()), max_size=5),
            ),
            max_size=4,
        ),
    ),
    path=st.sampled_from(["deal", "hit", "insurance", "even-money", "ready", "personal"]),
)
def test_no_malformed_input_is_ever_a_500(body: Any, path: str) -> None:
    api = Api(make_player(funds=0))
    url = {
        "deal": "/api/tables/1/deal/",
        "ready": "/api/tables/1/ready/",
        "personal": "/api/tables/personal/",
    }.get(path, f"/api/rounds/00000000-0000-0000-0000-000000000000/{path}/")
    response = api.client.post(url, body, format="json", HTTP_IDEMPOTENCY_KEY="fuzz")
    assert response.status_code < 500, response.content
    assert "error" in response.json() or response.status_code == 200


def test_a_body_nested_too_deeply_is_a_400_not_a_500() -> None:
    """DRF's JSON parser raised RecursionError on it (a 500); the parser turns it into a 400."""
    api = Api(make_player(funds=0))
    body = b'{"bets": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    response = api.client.post(
        "/api/tables/personal/",
        body,
        content_type="application/json",
        HTTP_IDEMPOTENCY_KEY="deep",
    )
    assert response.status_code == 400, response.content
    assert response.json()["error"]["code"] == "malformed_request"
