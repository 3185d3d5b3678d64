"""Duel (seed 004) between two browser contexts: Sit, Ready, the lobby countdown and the 30 s
timer to the reveal. Before the reveal each player sees their own two cards and only the
other's first card, in the DOM and in every WebSocket frame the page receives; after it, the
winners, the pot split and the fee."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.site.conftest import Browser, Site, button, click, sign_in

pytestmark = pytest.mark.browser

# Every text the timer line shows, recorded as it changes (the lobby countdown lasts 1 s here).
TIMER_LOG = """
window.__timerTexts = [];
new MutationObserver(() => {
  const el = document.getElementById("timer");
  if (el && !el.hidden && window.__timerTexts.at(-1) !== el.textContent) {
    window.__timerTexts.push(el.textContent);
  }
}).observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
"""


def duel_table(page: Any) -> int:
    page.wait_for_selector("#tables section[data-ruleset='duel'] li.table-entry")
    return int(
        page.locator("#tables section[data-ruleset='duel'] li.table-entry")
        .first.get_attribute("data-table-id")
    )  # fmt: skip


def frames_of(page: Any) -> list[str]:
    """Every WebSocket frame the page receives from now on, in order."""
    frames: list[str] = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda payload: frames.append(payload)))
    return frames


def before_reveal(frames: list[str]) -> list[str]:
    """The frames received before the first one carrying the settled round."""
    for i, frame in enumerate(frames):
        message = json.loads(frame)  # a pushed round, or a command's result carrying one
        view = message.get("view") or (message.get("round") or {}).get("view") or {}
        if view.get("settlement"):
            return frames[:i]
    raise AssertionError("no frame carried the reveal")


def shown(page: Any, selector: str) -> list[str]:
    return list(page.locator(f"{selector} .card").evaluate_all("e => e.map(c => c.dataset.card)"))


def test_a_duel_between_two_contexts(site: Site, browser: Browser) -> None:
    a, b = browser.page(), browser.page()
    frames = {}
    for page in (a, b):
        page.add_init_script(TIMER_LOG)
        sign_in(page, site, site.extra_user())
        frames[page] = frames_of(page)
    table = duel_table(a)
    ids = {}
    for page in (a, b):
        page.goto(f"{site.url}/play/{table}/")
        page.wait_for_selector("#table[data-socket='open']")
        assert "Stake 0.50 USDC per player" in page.inner_text("#limits")
        ids[page] = page.evaluate("document.body.dataset.playerId")
        click(page, "Sit")
        page.wait_for_selector("#ready:not([hidden])")
    assert b.inner_text("#status") == "Press Ready to start a duel."  # seated: no "Sit" asked
    click(a, "Ready")
    b.wait_for_selector(f"#seats li:text('Player {ids[a]} — ready')")
    assert a.inner_text("#status") == "Ready: the duel starts when every seat is."
    # Seats in order: a's first card, b's first, a's second (hidden), b's second (hidden),
    # then b's hit (hidden). a: TS 9H = 19; b: 9C 5D + 5S = 19: a tie, the pot is split.
    site.stack(["TS", "9C", "9H", "5D", "5S"])
    click(b, "Ready")
    for page in (a, b):
        page.wait_for_selector("#table[data-state='dueling']")
        page.wait_for_function("!document.querySelector('#stand').disabled")
        texts = page.evaluate("window.__timerTexts")
        assert any(t.startswith("The duel starts in") for t in texts), texts
        seconds = int(page.get_attribute("#timer", "data-seconds"))
        assert 25 <= seconds <= 30 and page.inner_text("#timer").startswith("Timer ")
        assert button(page, "Hit").is_visible() and button(page, "Stand").is_visible()
        assert not button(page, "Double").is_visible() and not button(page, "Split").is_visible()
    box_a, box_b = f"#boxes .box[data-player='{ids[a]}']", f"#boxes .box[data-player='{ids[b]}']"
    assert shown(a, box_a) == ["TS", "9H"] and shown(a, box_b) == ["9C", "hidden"]
    assert shown(b, box_b) == ["9C", "5D"] and shown(b, box_a) == ["TS", "hidden"]
    click(b, "Hit")
    b.wait_for_function(f'document.querySelectorAll("{box_b} .card").length === 3')
    assert shown(b, box_b) == ["9C", "5D", "5S"]
    a.wait_for_function(f'document.querySelectorAll("{box_b} .card").length === 3')
    assert shown(a, box_b) == ["9C", "hidden", "hidden"]  # a card was drawn, not which
    click(a, "Stand")
    a.wait_for_selector("#status:text('You stood: waiting for the reveal.')")
    assert "9H" not in b.inner_html("#boxes")
    assert "5D" not in a.inner_html("#boxes") and "5S" not in a.inner_html("#boxes")
    click(b, "Stand")
    for page in (a, b):
        page.wait_for_selector("#verify-link")
        assert shown(page, box_a) == ["TS", "9H"]
        assert shown(page, box_b) == ["9C", "5D", "5S"]
        result = page.inner_text("#result-text")
        assert "Pot 1.00 USDC, fee 0.03 USDC, split: each gets 0.485 USDC" in result, result
        assert "Winners: " in result and "You" in result
    assert f"Player {ids[b]}" in a.inner_text("#result-text")
    assert f"Player {ids[a]}" in b.inner_text("#result-text")

    hidden = {a: ('"5D"', '"5S"'), b: ('"9H"',)}
    for page in (a, b):
        early = before_reveal(frames[page])
        assert any('"TS"' in f and '"9C"' in f for f in early)  # the deal did come by socket
        leaks = [f for f in early for card in hidden[page] if card in f]
        assert leaks == [], leaks

    # Another duel: b draws to 24 and is told so, not that b stood; a's 19 wins the pot.
    site.stack(["TS", "9C", "9H", "5D", "KS"])
    for page in (a, b):
        page.wait_for_function("!document.querySelector('#ready').disabled")
        click(page, "Ready")
    b.wait_for_function("!document.querySelector('#hit').disabled")
    click(b, "Hit")
    b.wait_for_selector("#status:text('Bust (24): waiting for the reveal.')")
    a.wait_for_function("!document.querySelector('#stand').disabled")
    click(a, "Stand")
    b.wait_for_selector("#verify-link")
    assert f"Winners: Player {ids[a]}. Pot 1.00 USDC" in b.inner_text("#result-text")
