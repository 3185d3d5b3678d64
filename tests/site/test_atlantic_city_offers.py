"""Atlantic City (seed 002) insurance and splits in a real Chromium, with stacked cards: the
dealer's ace brings the insurance prompt before the peek (the hole card still face down, no
play until the answer), each answer's exact payout and balance; a pair splits once only."""

from __future__ import annotations

from typing import Any

import pytest

from tests.site.conftest import Browser, Site, button, click, enabled, personal_table, sign_in

pytestmark = pytest.mark.browser


def cards(page: Any, selector: str) -> list[str]:
    """The cards shown under `selector`, as codes ("hidden" for a face-down card)."""
    return list(page.locator(f"{selector} .card").evaluate_all("e => e.map(c => c.dataset.card)"))


def deal(page: Any, site: Site, stacked: list[str]) -> None:
    """The same bet again (or 5 USDC on the centre box the first time), dealing `stacked`."""
    site.stack(stacked)
    if button(page, "Rebet & deal").is_visible():
        click(page, "Rebet & deal")
    else:
        click(page, "Centre box")
        click(page, "Chip 5 USDC")
        click(page, "Deal")


def insurance_prompt(page: Any) -> None:
    """The prompt is up before the peek: the hole card face down, no play offered yet."""
    page.wait_for_selector("#prompt[data-kind='insurance']")
    assert page.inner_text("#prompt").startswith(
        "The dealer shows an ace. Insurance for the centre box? "
        "It costs half your bet and pays 2 to 1."
    )
    assert cards(page, "#dealer-hand") == ["AS", "hidden"]
    assert page.locator("#actions").is_hidden()


def test_insurance_taken_and_declined_with_the_payouts(site: Site, browser: Browser) -> None:
    page = browser.page()
    sign_in(page, site, site.extra_user())
    personal_table(page, "atlantic_city")
    centre = "#boxes .box[data-box='0']"
    # Dealing order: centre, dealer up, centre, dealer hole. Centre TS 9H = 19, dealer AS KD.
    deal(page, site, ["TS", "AS", "9H", "KD"])
    insurance_prompt(page)
    click(page, "Insurance")
    page.wait_for_selector("#verify-link")
    assert cards(page, "#dealer-hand") == ["AS", "KD"]  # the peek found a blackjack
    assert "Centre box: bet 5.00 USDC, insurance 2.50 USDC" in page.inner_text(centre)
    assert page.inner_text(f"{centre} .outcome") == "lost -5.00 USDC"
    # The insurance's 2.50 comes back with 5.00 (2 to 1): the round breaks even.
    assert "Round over: you broke even, 0.00 USDC." in page.inner_text("#result-text")
    page.wait_for_selector("#balance:text('1,000.00 USDC')")

    # Declined; dealer AS 5D has no blackjack, draws 2C (soft 18); 19 wins 5.00.
    deal(page, site, ["TS", "AS", "9H", "5D"])
    insurance_prompt(page)
    click(page, "No insurance")
    page.wait_for_function("!document.querySelector('#stand').disabled")
    assert cards(page, "#dealer-hand") == ["AS", "hidden"]  # no blackjack: the hole stays down
    click(page, "Stand")
    page.wait_for_selector("#verify-link")
    assert cards(page, "#dealer-hand") == ["AS", "5D", "2C"]
    assert page.inner_text(f"{centre} .outcome") == "won +5.00 USDC"
    assert "Round over: you won 5.00 USDC." in page.inner_text("#result-text")
    page.wait_for_selector("#balance:text('1,005.00 USDC')")

    # Taken, and no blackjack: the 2.50 is lost; TS KH = 20 beats the dealer's soft 17 (AS 6D).
    deal(page, site, ["TS", "AS", "KH", "6D"])
    insurance_prompt(page)
    click(page, "Insurance")
    page.wait_for_function("!document.querySelector('#stand').disabled")
    click(page, "Stand")
    page.wait_for_selector("#verify-link")
    assert cards(page, "#dealer-hand") == ["AS", "6D"]  # stands on soft 17
    assert page.inner_text(f"{centre} .outcome") == "won +5.00 USDC"
    assert "Round over: you won 2.50 USDC." in page.inner_text("#result-text")
    page.wait_for_selector("#balance:text('1,007.50 USDC')")


def test_a_pair_splits_once_only(site: Site, browser: Browser) -> None:
    page = browser.page()
    sign_in(page, site, site.extra_user())
    personal_table(page, "atlantic_city")
    click(page, "Centre box")
    click(page, "Chip 1 USDC")
    # Centre 8S 8H against the dealer's 6C (hole TD). The split deals 8D to the first hand (a
    # pair again: no second split) and 3S to the second, doubled onto 9C; the dealer draws 2C.
    site.stack(["8S", "6C", "8H", "TD", "8D", "3S", "9C"])
    click(page, "Deal")
    page.wait_for_function("!document.querySelector('#split').disabled")
    assert cards(page, "#boxes .box[data-box='0']") == ["8S", "8H"]
    click(page, "Split")
    page.wait_for_function("document.querySelectorAll('#boxes .box.mine .hand').length === 2")
    hands = page.locator("#boxes .box.mine .hand")
    page.wait_for_function("!document.querySelector('#stand').disabled")
    assert cards(page, "#boxes .box.mine .hand[data-hand='0']") == ["8S", "8D"]
    assert cards(page, "#boxes .box.mine .hand[data-hand='1']") == ["8H", "3S"]
    assert hands.nth(0).get_attribute("aria-current") == "true"
    assert enabled(page, "Hit") and enabled(page, "Stand") and enabled(page, "Double")
    assert not enabled(page, "Split")  # two hands at most: one split
    click(page, "Stand")
    page.wait_for_function(
        "document.querySelector(\".hand[data-hand='1']\").classList.contains('in-turn')"
        " && !document.querySelector('#double').disabled"
    )
    assert not enabled(page, "Split")
    click(page, "Double")
    page.wait_for_selector("#verify-link")
    assert cards(page, "#boxes .box.mine .hand[data-hand='0']") == ["8S", "8D"]
    assert cards(page, "#boxes .box.mine .hand[data-hand='1']") == ["8H", "3S", "9C"]
    assert cards(page, "#dealer-hand") == ["6C", "TD", "2C"]
    assert hands.nth(0).locator(".total").inner_text() == "16"
    assert hands.nth(1).locator(".total").inner_text() == "20"
    assert hands.nth(0).locator(".outcome").inner_text() == "lost -1.00 USDC"
    assert hands.nth(1).locator(".outcome").inner_text() == "won +2.00 USDC"  # doubled: 2 at stake
    assert "Round over: you won 1.00 USDC." in page.inner_text("#result-text")
    page.wait_for_selector("#balance:text('1,001.00 USDC')")
