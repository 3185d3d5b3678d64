"""The classic table at 1366x768 and on a 390 px wide phone: every button of each stage of a
round (betting, playing, after the round) inside the screen's width, and no horizontal
scroll; a wrong password shows the server's message."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.site.conftest import Browser, Site, click, personal_table, sign_in

pytestmark = pytest.mark.browser

OUTSIDE = """() => {
  const width = document.documentElement.clientWidth;
  const out = [];
  for (const b of document.querySelectorAll("button")) {
    const r = b.getBoundingClientRect();
    if (!r.width && !r.height) continue; // hidden (display: none, or inside a hidden group)
    const name = b.getAttribute("aria-label") || b.textContent.trim();
    if (r.left < 0 || r.right > width + 0.5) out.push(`${name}: ${r.left}-${r.right}`);
  }
  return out;
}"""


def fits(page: Any, names: list[str]) -> None:
    """Each named button shown, every shown button inside the width, no horizontal scroll."""
    for name in names:
        target = page.get_by_role("button", name=name, exact=True)
        assert target.is_visible(), name
    assert page.evaluate(OUTSIDE) == []
    width = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert width[0] <= width[1], width


@pytest.mark.parametrize(("width", "height"), [(390, 844), (1366, 768)])
def test_the_classic_table_fits(site: Site, browser: Browser, width: int, height: int) -> None:
    page = browser.page(width=width, height=height)
    sign_in(page, site, site.extra_user())
    fits(page, ["Faucet", "Sign out"])
    personal_table(page, "classic")
    page.wait_for_function("window.__site.state.prefs !== null")
    chips = [f"Chip {v} USDC" for v in ("1", "5", "25", "100")]
    fits(page, [*chips, "Deal", "Clear", "X2"])  # Clear and X2 are shown, even when disabled
    page.locator("#fairness summary").click()  # the commitment: 64 hex digits, wrapped
    page.wait_for_function("document.querySelector('#next-nonce').textContent !== '…'")
    fits(page, ["Set seed"])
    click(page, "Chip 1 USDC")
    site.stack(["8S", "9D", "8H", "6C"])  # a pair of 8s: Split is offered too
    click(page, "Deal")
    page.wait_for_function("!document.querySelector('#split').disabled")
    fits(page, ["Hit", "Stand", "Double", "Split"])
    page.locator("#options summary").click()
    fits(page, ["Felt: green"])
    click(page, "Stand")
    page.wait_for_function(
        "!document.querySelector('#stand').disabled || !!document.querySelector('#verify-link')"
    )
    if not page.locator("#verify-link").count():
        click(page, "Stand")
    page.wait_for_selector("#verify-link")
    fits(page, ["Change bet", "Rebet & deal", "Double bet & deal"])
    assert page.get_by_role("link", name="Verify").is_visible()


def test_the_stats_pages_fit_a_phone(site: Site, browser: Browser) -> None:
    page = browser.page(width=390, height=844)
    sign_in(page, site, site.extra_user())
    table = personal_table(page, "classic")
    click(page, "Chip 1 USDC")
    site.stack(["TS", "9D", "AS", "7D"])  # a blackjack: a round in the tables' stats
    click(page, "Deal")
    page.wait_for_selector("#verify-link")
    page.goto(f"{site.url}/play/events/")
    page.wait_for_selector(f"#table-stats tbody tr >> text='{table}'")
    fits(page, [])  # six columns of amounts: the table scrolls inside the page, not the page
    page.goto(f"{site.url}/play/leaderboard/")
    page.wait_for_selector("#leaders tbody tr")
    fits(page, [])


def test_a_wrong_password_shows_the_servers_message(site: Site, browser: Browser) -> None:
    user = site.extra_user()
    answer = httpx.post(
        f"{site.url}/api/auth/login/", json={"username": user, "password": "not-it"}
    )
    message = answer.json()["error"]["message"]
    page = browser.page(width=390, height=844)
    page.goto(f"{site.url}/play/")
    page.get_by_label("Username").fill(user)
    page.get_by_label("Password").fill("not-it")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_selector("#error:not([hidden])")
    assert page.inner_text("#error") == message
    assert message and not message.startswith("HTTP ")  # the words, not a status code
    assert page.url == f"{site.url}/play/"
    # The 401 of the refused login is the browser's own network log line.
    browser.errors[:] = [e for e in browser.errors if "401" not in e]
