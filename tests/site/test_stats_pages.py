"""The public stats pages (/play/events/, /play/leaderboard/) print the stats API's USDC strings
as amounts: a blackjack on a 400 USDC bet reads "600.00 USDC" won, "400.00 USDC" staked."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest

from tests.site.conftest import Browser, Site, sign_in
from tests.site.stacked_serve import PASSWORD

pytestmark = pytest.mark.browser


def _blackjack(site: Site, username: str) -> tuple[int, str]:
    """Over the API, as a client would: the player's personal classic table, a stacked
    blackjack against a dealer's 9 up on a 400 USDC bet, and a public name; (table, round)."""
    login = httpx.post(
        f"{site.url}/api/auth/login/", json={"username": username, "password": PASSWORD}
    )
    client = httpx.Client(
        base_url=site.url, headers={"Authorization": f"Token {login.json()['token']}"}
    )

    def post(path: str, body: dict[str, Any]) -> Any:
        answer = client.post(path, json=body, headers={"Idempotency-Key": str(time.time_ns())})
        assert answer.status_code == 200, (path, answer.text)
        return answer.json()

    table = post("/api/tables/personal/", {"ruleset": "classic"})["id"]
    site.stack(["TH", "9C", "AS", "7D"])  # player T, A: blackjack; dealer 9, 7
    dealt = post(f"/api/tables/{table}/deal/", {"bets": ["400"]})
    assert dealt["status"] == "settled", dealt["view"]["phase"]
    assert dealt["view"]["settlement"]["hands"][0]["gross_return"] == "1000.000000"
    named = client.put("/api/stats/profile/", json={"display_name": f"Stats {username}"})
    assert named.status_code == 200, named.text
    return int(table), str(dealt["round_id"])


def _row(page: Any, table: str, first_cell: str) -> list[str]:
    rows = page.locator(f"#{table} tbody tr")
    for i in range(rows.count()):
        cells = [c.strip() for c in rows.nth(i).locator("td").all_inner_texts()]
        if cells and cells[0] == first_cell:
            return cells
    raise AssertionError(f"no row {first_cell!r} in #{table}")


def test_the_stats_pages_show_usdc_amounts(site: Site, browser: Browser) -> None:
    username = site.extra_user()
    table, round_id = _blackjack(site, username)
    name = f"Stats {username}"
    page = browser.page()

    page.goto(f"{site.url}/play/events/")
    page.wait_for_selector(f"#table-stats tbody tr >> text='{table}'")
    assert _row(page, "table-stats", str(table)) == [
        str(table), "Classic", "1", "400.00 USDC", "600.00 USDC", "0",
    ]  # fmt: skip
    won = _row(page, "wins", name)
    assert won[1:3] == ["Classic", "600.00 USDC"] and won[4] == "Verify"
    link = page.locator("#wins tbody tr", has_text=name).get_by_role("link", name="Verify")
    assert link.get_attribute("href") == f"/fairness/verify/?round={round_id}"

    page.goto(f"{site.url}/play/leaderboard/")
    page.wait_for_selector(f"#leaders tbody tr >> text='{name}'")
    cells = page.locator("#leaders tbody tr", has_text=name).locator("td").all_inner_texts()
    assert [c.strip() for c in cells[1:]] == [name, "1", "400.00 USDC", "600.00 USDC"]


def test_a_player_sets_their_public_name_on_the_leaderboard(site: Site, browser: Browser) -> None:
    """The form under the board: a name saved and shown on the board, a taken or reserved
    name refused with the server's words and nothing changed, then off the board entirely."""
    username = site.extra_user()
    _blackjack(site, username)  # on the board as "Stats <username>"
    other_user = site.extra_user()
    taken = f"Stats {other_user}"
    other = httpx.post(
        f"{site.url}/api/auth/login/", json={"username": other_user, "password": PASSWORD}
    ).json()["token"]
    named = httpx.put(
        f"{site.url}/api/stats/profile/",
        json={"display_name": taken},
        headers={"Authorization": f"Token {other}"},
    )
    assert named.status_code == 200, named.text
    page = browser.page()
    sign_in(page, site, username)
    page.goto(f"{site.url}/play/leaderboard/")
    page.wait_for_function("document.querySelector('#display-name').value !== ''")
    assert page.input_value("#display-name") == f"Stats {username}"

    def save(name: str) -> None:
        page.fill("#display-name", name)
        page.get_by_role("button", name="Save").click()
        page.wait_for_function(
            "document.querySelector('#public-name-status').textContent !== ''"
            " || !document.querySelector('#error').hidden"
        )

    save("Ace Of Tests")
    assert page.inner_text("#public-name-status") == "Saved: you appear as Ace Of Tests."
    page.wait_for_selector("#leaders tbody tr >> text='Ace Of Tests'")
    refusals = [(taken.upper(), "display_name_taken"), ("player-3", "display_name_reserved")]
    for refused, code in refusals:
        save(refused)
        assert page.locator("#error").get_attribute("data-code") == code
        assert page.inner_text("#public-name-status") == ""
    assert page.inner_text("#error") == (
        "player-<number> is how players without a name are shown: choose another name."
    )
    page.reload()
    page.wait_for_function("document.querySelector('#display-name').value !== ''")
    assert page.input_value("#display-name") == "Ace Of Tests"  # the refusals changed nothing
    page.check("#opt-out")
    save("Ace Of Tests")
    assert page.inner_text("#public-name-status") == "Saved: you are off the public stats."
    page.wait_for_function(
        "![...document.querySelectorAll('#leaders td')]"
        ".some((td) => td.textContent === 'Ace Of Tests')"
    )
    # The two refusals are the browser's own network log lines.
    browser.errors[:] = [e for e in browser.errors if "409" not in e and "400" not in e]
