"""Duel (seed 004) timer expiry between two browser contexts: one player stands, the other
does nothing; the page counts the 30 s timer down, and when it ends the server stands the
idle hand and both pages show the reveal and the outcome with the exact cards. The timer is
the rule set's own 30 s (it is part of the rules a round's ruleset_hash records), so this
test waits it out."""

from __future__ import annotations

from typing import Any

import pytest

from tests.site.conftest import Browser, Site, click, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def shown(page: Any, selector: str) -> list[str]:
    return list(page.locator(f"{selector} .card").evaluate_all("e => e.map(c => c.dataset.card)"))


def test_the_timer_stands_an_idle_hand(site: Site, browser: Browser) -> None:
    a, b = browser.page(), browser.page()
    for page in (a, b):
        sign_in(page, site, site.extra_user())
    a.wait_for_selector("#tables section[data-ruleset='duel'] li.table-entry")
    entry = a.locator("#tables section[data-ruleset='duel'] li.table-entry").first
    table = entry.get_attribute("data-table-id")
    ids = {}
    for page in (a, b):
        page.goto(f"{site.url}/play/{table}/")
        page.wait_for_selector("#table[data-socket='open']")
        ids[page] = page.evaluate("document.body.dataset.playerId")
        click(page, "Sit")
        page.wait_for_selector("#ready:not([hidden])")
    click(a, "Ready")
    b.wait_for_selector(f"#seats li:text('Player {ids[a]} — ready')")
    # Seat order: a's first card, b's first, a's second (hidden), b's second (hidden).
    # a: TS 9H = 19; b: 9C 5D = 14, left standing by the timer.
    site.stack(["TS", "9C", "9H", "5D"])
    click(b, "Ready")
    for page in (a, b):
        page.wait_for_selector("#table[data-state='dueling']")
        page.wait_for_function("!document.querySelector('#stand').disabled")
    click(a, "Stand")
    a.wait_for_selector("#status:text('You stood: waiting for the reveal.')")
    first = int(b.get_attribute("#timer", "data-seconds"))
    assert 20 <= first <= 30 and b.inner_text("#timer") == f"Timer {first} s"
    b.wait_for_function(f"Number(document.querySelector('#timer').dataset.seconds) < {first}")
    later = int(b.get_attribute("#timer", "data-seconds"))
    assert later < first and b.inner_text("#timer") == f"Timer {later} s"
    assert b.inner_text("#status") == "Hit or stand before the timer ends."
    box_a, box_b = f"#boxes .box[data-player='{ids[a]}']", f"#boxes .box[data-player='{ids[b]}']"
    assert shown(b, box_a) == ["TS", "hidden"]
    for page in (a, b):  # b never acts: the server stands the hand when the 30 s end
        page.wait_for_selector("#verify-link", timeout=45_000)
        assert shown(page, box_a) == ["TS", "9H"]
        assert shown(page, box_b) == ["9C", "5D"]
        assert page.inner_text(f"{box_a} .total") == "19"
        assert page.inner_text(f"{box_b} .total") == "14"
        assert page.inner_text(f"{box_a} .outcome") == "won +0.47 USDC"
        assert page.inner_text(f"{box_b} .outcome") == "lost -0.50 USDC"
        assert page.locator("#timer").is_hidden()
    assert (
        a.inner_text("#result-text")
        == "Winners: You. Pot 1.00 USDC, fee 0.03 USDC, paid 0.97 USDC."
    )
    assert b.inner_text("#result-text") == (
        f"Winners: Player {ids[a]}. Pot 1.00 USDC, fee 0.03 USDC, paid 0.97 USDC."
    )
    assert b.locator("#hit").is_hidden() or b.locator("#hit").is_disabled()  # no play left
    for page in (a, b):
        click(page, "Leave")
        page.wait_for_selector("#sit:not([hidden])")
