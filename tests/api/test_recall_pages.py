"""Game recall pages: a keyset cursor, newest first, each round's outcome in words and net."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest

from casino.rounds import services
from casino.rounds.services import round_void
from tests.api.conftest import Api
from tests.api.test_auth_tables import assert_error
from tests.api.test_rounds import deal, personal

pytestmark = pytest.mark.django_db
Stack = Callable[[list[str]], None]

# Classic deal order: player, dealer (face down), player, dealer (face up).
BLACKJACK = ["AS", "9H", "KD", "8D"]  # 21 against 17: paid 3:2 at once
LOSS = ["TS", "TH", "6C", "9D"]  # 16 against 19, stand
WIN = ["TS", "9H", "TC", "8D"]  # 20 against 17, stand
PUSH = ["TS", "9H", "7C", "8D"]  # 17 against 17, stand


@pytest.fixture(autouse=True)
def clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """One second between commands, so every round opens at its own instant."""
    ticks = itertools.count(int(services.now_ms()), 1000)
    monkeypatch.setattr(services, "now_ms", lambda: next(ticks))


def play(api: Api, stack: Stack, table: int, cards: list[str], bet: str) -> str:
    stack(cards)
    body = deal(api, table, bet)
    if body["status"] == "open":
        done = api.post(f"/api/rounds/{body['round_id']}/stand/").json()
        assert done["status"] == "settled"
    return str(body["round_id"])


def summary(page: dict[str, Any]) -> list[tuple[str, str, str | None]]:
    return [(r["round_id"], r["outcome"], r["net"]) for r in page["results"]]


def follow(api: Api, url: str) -> dict[str, Any]:
    response = api.client.get(url)
    assert response.status_code == 200, response.content
    return dict(response.json())


def test_pages_newest_first_with_words_and_net_and_an_insert_between_fetches(
    api: Api, stack: Stack
) -> None:
    table = personal(api)
    blackjack = play(api, stack, table, BLACKJACK, "10")
    loss = play(api, stack, table, LOSS, "1")
    win = play(api, stack, table, WIN, "2.50")
    push = play(api, stack, table, PUSH, "1")
    stack(WIN)
    voided = deal(api, table, "3")["round_id"]
    round_void(round_id=voided, reason="shoe fault", evidence="tests")

    first = api.get("/api/me/rounds/", limit=2).json()
    assert summary(first) == [
        (voided, "voided: shoe fault", "0.000000"),
        (push, "push", "0.000000"),
    ]
    assert first["next"].startswith("http://testserver/api/me/rounds/?")
    assert "limit=2" in first["next"] and "cursor=" in first["next"]

    # A round played between two page fetches is newer: it is not on the later pages.
    stack(["TS", "9H", "6C", "8D"])
    open_round = deal(api, table, "1")["round_id"]

    second = follow(api, first["next"])
    assert summary(second) == [
        (win, "won 2.50 USDC", "2.500000"),
        (loss, "lost", "-1.000000"),
    ]
    third = follow(api, second["next"])
    assert summary(third) == [(blackjack, "won 15.00 USDC with blackjack", "15.000000")]
    assert third["next"] is None

    again = api.get("/api/me/rounds/", limit=2).json()
    assert summary(again) == [
        (open_round, "in play", None),
        (voided, "voided: shoe fault", "0.000000"),
    ]
    assert [r["round_id"] for r in api.get("/api/me/rounds/").json()["results"]] == [
        open_round,
        voided,
        push,
        win,
        loss,
        blackjack,
    ]
    settled = api.get("/api/me/rounds/", status="settled", limit=3).json()
    assert [r["round_id"] for r in settled["results"]] == [push, win, loss]
    assert [r["round_id"] for r in follow(api, settled["next"])["results"]] == [blackjack]
    assert api.get(f"/api/me/rounds/{win}/").json()["outcome"] == "won 2.50 USDC"


def test_a_page_boundary_between_rounds_that_opened_at_the_same_instant(
    api: Api, stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(services, "now_ms", lambda: 1_790_000_000_000)
    table = personal(api)
    played = {play(api, stack, table, PUSH, "1") for _ in range(5)}
    seen: list[str] = []
    page = api.get("/api/me/rounds/", limit=2).json()
    while True:
        seen += [r["round_id"] for r in page["results"]]
        if page["next"] is None:
            break
        page = follow(api, page["next"])
    assert len(seen) == 5 and set(seen) == played
    assert seen == sorted(seen, reverse=True)  # the same instant: by round id


def test_a_bad_cursor_is_a_400(api: Api) -> None:
    for cursor in ("x", "bm90LWpzb24", "WzEsMl0", "WyIyMDI2LTAxLTAxIiwiYSJd"):
        response = api.get("/api/me/rounds/", cursor=cursor)
        assert_error(response, 400, "invalid_input")
