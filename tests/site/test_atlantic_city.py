"""Atlantic City (seed 002) in a real Chromium: three boxes, each with its own bet, one left
empty, played to the end by clicking only with stacked cards; the RTP on the rules page."""

from __future__ import annotations

from typing import Any

import pytest

from tests.site.conftest import Browser, Site, button, click, enabled, personal_table, sign_in

pytestmark = pytest.mark.browser


def cards(page: Any, selector: str) -> list[str]:
    """The cards shown under `selector`, as codes ("hidden" for a face-down card)."""
    return list(page.locator(f"{selector} .card").evaluate_all("e => e.map(c => c.dataset.card)"))


def test_three_boxes_one_left_empty_played_by_clicking(site: Site, browser: Browser) -> None:
    page = browser.page()
    sign_in(page, site, site.extra_user())
    personal_table(page, "atlantic_city")
    for name in ("Centre box", "Right box", "Left box"):
        assert button(page, name).is_visible()
    assert not enabled(page, "Deal")
    click(page, "Centre box")
    click(page, "Chip 5 USDC")
    click(page, "Left box")
    click(page, "Chip 1 USDC")
    click(page, "Chip 1 USDC")
    assert page.inner_text("#bet-total") == "7.00 USDC"
    assert "0.00 USDC" in button(page, "Right box").inner_text()  # the empty box
    assert "2.00 USDC" in button(page, "Left box").inner_text()
    # Dealing order: centre, left, dealer up, centre, left, dealer hole; then the draws.
    # Centre TS 9H = 19; left 5C 6D = 11, doubled onto KH = 21; dealer 7S TD = 17.
    site.stack(["TS", "5C", "7S", "9H", "6D", "TD", "KH"])
    click(page, "Deal")
    page.wait_for_function("!document.querySelector('#stand').disabled")
    boxes = page.locator("#boxes .box.mine")
    assert boxes.count() == 2  # the right box stayed empty: no box dealt
    centre, left = boxes.nth(0), boxes.nth(1)
    assert centre.get_attribute("data-box") == "0" and left.get_attribute("data-box") == "2"
    assert "Centre box: bet 5.00 USDC" in centre.inner_text()
    assert "Left box: bet 2.00 USDC" in left.inner_text()
    assert cards(page, "#boxes .box[data-box='0']") == ["TS", "9H"]
    assert cards(page, "#boxes .box[data-box='2']") == ["5C", "6D"]
    assert cards(page, "#dealer-hand") == ["7S", "hidden"]
    assert centre.locator(".hand.in-turn").count() == 1  # the centre box plays first
    click(page, "Stand")
    page.wait_for_function(
        "document.querySelector(\"#boxes .box[data-box='2'] .hand.in-turn\")"
        " && !document.querySelector('#double').disabled"
    )
    click(page, "Double")
    page.wait_for_selector("#verify-link")
    assert cards(page, "#boxes .box[data-box='2']") == ["5C", "6D", "KH"]
    assert cards(page, "#dealer-hand") == ["7S", "TD"]
    assert "17" in page.inner_text("#dealer-hand")
    assert "19" in centre.inner_text() and "won +5.00 USDC" in centre.inner_text()
    assert "21" in left.inner_text() and "won +4.00 USDC" in left.inner_text()
    assert "you won 9.00 USDC" in page.inner_text("#result-text")
    assert page.get_by_role("link", name="Verify").is_visible()
    page.wait_for_selector("#balance:text('1,009.00 USDC')")


def test_the_rules_page_shows_the_rtp(site: Site, browser: Browser) -> None:
    page = browser.page()
    sign_in(page, site, site.extra_user())
    page.goto(f"{site.url}/play/rules/atlantic_city/")
    text = page.inner_text("main")
    assert "RTP" in text and "99.51%" in text
    assert "three" in text.lower()
