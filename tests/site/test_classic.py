"""Classic (seed 000) in a real Chromium: sign in, play rounds to the end by clicking only."""

from __future__ import annotations

from typing import Any

import pytest

from tests.site.conftest import Browser, Site, personal_table, sign_in

pytestmark = pytest.mark.browser


def enabled(page: Any, name: str) -> bool:
    return bool(page.get_by_role("button", name=name, exact=True).is_enabled())


def click(page: Any, name: str) -> None:
    page.get_by_role("button", name=name, exact=True).click()


def test_sign_in_and_the_lobby(site: Site, browser: Browser) -> None:
    page = browser.page()
    page.goto(f"{site.url}/")
    assert page.url == f"{site.url}/play/"
    assert page.get_by_role("button", name="Sign in").is_visible()
    sign_in(page, site, site.user())
    assert page.inner_text("#wallet-available") == "1,000.00 USDC"
    assert page.get_by_role("button", name="Faucet").is_visible()
    page.wait_for_selector("#tables section[data-ruleset='duel'] li.table-entry")
    duel = page.inner_text("#tables section[data-ruleset='duel']")
    assert "stake" in duel and "seats taken" in duel
    classic = page.inner_text("#tables section[data-ruleset='classic']")
    assert " – " in classic  # min – max
    click(page, "Faucet")
    page.wait_for_selector("#wallet-available:text('1,100.00 USDC')")


def test_a_classic_round_played_by_clicking(site: Site, browser: Browser) -> None:
    page = browser.page()
    sign_in(page, site, site.user())
    personal_table(page, "classic")
    assert not enabled(page, "Deal")
    click(page, "Chip 5 USDC")
    assert enabled(page, "Deal")
    click(page, "X2")
    assert page.inner_text("#bet-total") == "10.00 USDC"
    click(page, "Clear")
    assert not enabled(page, "Deal")
    click(page, "Chip 1 USDC")
    # player TS 7C, dealer hole 9D, up 8D: 17 against 17 after the stand... dealer 17 stands
    site.stack(["TS", "9D", "7C", "8D"])
    click(page, "Deal")
    page.wait_for_selector("#actions:not([hidden])")
    assert enabled(page, "Hit") and enabled(page, "Stand") and enabled(page, "Double")
    assert not enabled(page, "Split")
    assert page.locator("#dealer-hand .card.back").count() == 1
    click(page, "Stand")
    page.wait_for_selector("#verify-link")
    assert "broke even" in page.inner_text("#result-text")
    assert page.get_by_role("link", name="Verify").is_visible()
    assert page.get_by_role("button", name="Rebet & deal").is_visible()
    assert page.get_by_role("button", name="Double bet & deal").is_visible()
    assert page.get_by_role("button", name="Change bet").is_visible()
