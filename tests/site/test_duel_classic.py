"""Duel classic (seed 004's banked table) in two browser contexts: every seat bets in the
round's betting window, each seat plays in turn, the other seat's public cards show live, the
tie rules (17-19 lose, 20-21 push) and the blackjack pays (2.5:1, 2:1 against a dealer 21)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.site.conftest import Browser, Site, button, click, enabled, sign_in

pytestmark = pytest.mark.browser


def shown(page: Any, selector: str) -> list[str]:
    return list(page.locator(f"{selector} .card").evaluate_all("e => e.map(c => c.dataset.card)"))


def bet_and_deal(page: Any) -> None:
    """One chip of 1 USDC (kept from the last round when it is there), then Deal."""
    page.wait_for_selector("#betting:not([hidden])")
    if page.inner_text("#bet-total") != "1.00 USDC":
        if enabled(page, "Clear"):
            click(page, "Clear")
        click(page, "Chip 1 USDC")
    click(page, "Deal")


def play_round(a: Any, b: Any, site: Site, cards: list[str]) -> None:
    """a opens the round with its bet, b bets in the window; the deal is `cards`."""
    site.stack(cards)
    bet_and_deal(a)
    b.wait_for_selector("#status:text('Place your bet: the betting window is open.')")
    bet_and_deal(b)
    for page in (a, b):
        page.wait_for_selector("#table[data-state='playing'], #verify-link")


def outcome(page: Any, player: str) -> str:
    return str(page.inner_text(f"#boxes .box[data-player='{player}'] .outcome"))


def test_seats_play_in_turn_with_the_tie_rules_and_blackjack_pays(
    site: Site, browser: Browser
) -> None:
    a, b = browser.page(), browser.page()
    for page in (a, b):
        sign_in(page, site, site.extra_user())
    a.wait_for_selector("#tables section[data-ruleset='duel_classic'] li.table-entry")
    entry = a.locator("#tables section[data-ruleset='duel_classic'] li.table-entry").first
    table = entry.get_attribute("data-table-id")
    ids = {}
    for page in (a, b):
        page.goto(f"{site.url}/play/{table}/")
        page.wait_for_selector("#table[data-socket='open']")
        tie = page.inner_text("#tie-rules")
        assert "17–19 lose" in tie and "20–21 push" in tie, tie
        assert "2.5:1" in tie and "2:1 against a dealer 21" in tie, tie
        ids[page] = page.evaluate("document.body.dataset.playerId")
        click(page, "Sit")
        page.wait_for_selector("#leave:not([hidden])")
    box_a, box_b = (f"#boxes .box[data-player='{ids[p]}']" for p in (a, b))

    # Round 1. Dealing order: a, b, dealer up, a, b, dealer hole; then a's hit.
    # a: TS 5H (15) + 3C = 18; b: KS QH = 20; dealer 9C 9D = 18. A tie at 18 loses.
    site.stack(["TS", "KS", "9C", "5H", "QH", "9D", "3C"])
    bet_and_deal(a)
    b.wait_for_selector("#status:text('Place your bet: the betting window is open.')")
    for page in (a, b):  # a's bet, no card yet: no total (not "0") for the dealer or the box
        page.wait_for_selector(f"{box_a} h3:text('bet 1.00 USDC')")
        assert page.locator(f"{box_a} .card").count() == 0
        assert page.inner_text(f"{box_a} .total") == ""
        assert page.inner_text("#dealer-hand .total") == ""
    bet_and_deal(b)
    for page in (a, b):
        page.wait_for_selector("#table[data-state='playing'], #verify-link")
    a.wait_for_function("!document.querySelector('#hit').disabled")
    assert a.inner_text("#status") == "Your turn."
    b.wait_for_selector(f'#status:text("Player {ids[a]}\'s turn.")')
    assert not enabled(b, "Hit") and not enabled(b, "Stand")  # not b's turn
    assert shown(b, box_a) == ["TS", "5H"] and shown(b, "#dealer-hand") == ["9C", "hidden"]
    assert shown(a, box_b) == ["KS", "QH"]  # the other seat's cards are public
    click(a, "Hit")
    b.wait_for_function(f'document.querySelectorAll("{box_a} .card").length === 3')
    assert shown(b, box_a) == ["TS", "5H", "3C"]  # live in the other context
    click(a, "Stand")
    b.wait_for_function("!document.querySelector('#stand').disabled")
    a.wait_for_selector(f'#status:text("Player {ids[b]}\'s turn.")')
    assert not enabled(a, "Hit")
    click(b, "Stand")
    for page in (a, b):
        page.wait_for_selector("#verify-link")
        assert shown(page, "#dealer-hand") == ["9C", "9D"]
        assert outcome(page, ids[a]) == "lost -1.00 USDC"  # 18 against 18
        assert outcome(page, ids[b]) == "won +1.00 USDC"
    assert "you lost 1.00 USDC" in a.inner_text("#result-text")

    # Round 2. a: AS KH, blackjack; b: TS QS = 20; dealer 7C 3D + TH = 20.
    # b's 20 against 20 pushes; a's blackjack against a 20 returns 2.5 times the bet.
    play_round(a, b, site, ["AS", "TS", "7C", "KH", "QS", "3D", "TH"])
    b.wait_for_function("!document.querySelector('#stand').disabled")
    assert not enabled(a, "Hit")  # a blackjack waits for the dealer: b plays
    click(b, "Stand")
    for page in (a, b):
        page.wait_for_selector("#verify-link")
        assert shown(page, "#dealer-hand") == ["7C", "3D", "TH"]
        assert outcome(page, ids[b]) == "push 0.00 USDC"
        assert outcome(page, ids[a]) == "blackjack +1.50 USDC"  # 2.5:1 in total

    # Round 3. a: AS KH, blackjack; b: TS 9S = 19; dealer 7C 4D + KD = 21.
    # a's blackjack against a dealer 21 returns 2 times the bet; b's 19 loses.
    play_round(a, b, site, ["AS", "TS", "7C", "KH", "9S", "4D", "KD"])
    b.wait_for_function("!document.querySelector('#stand').disabled")
    click(b, "Stand")
    for page in (a, b):
        page.wait_for_selector("#verify-link")
        assert shown(page, "#dealer-hand") == ["7C", "4D", "KD"]
        assert outcome(page, ids[b]) == "lost -1.00 USDC"
        assert outcome(page, ids[a]) == "blackjack +1.00 USDC"  # 2:1 in total
    assert "you won 1.00 USDC" in a.inner_text("#result-text")
    for page in (a, b):
        click(page, "Leave")
        page.wait_for_selector("#sit:not([hidden])")
    assert button(a, "Sit").is_enabled()
