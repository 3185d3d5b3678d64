"""History pages and their Verify links; the verify page reads ?round= and verifies at once;
a voided round reads as voided, a round in play as waiting for its proof; a dropped socket
resumes; the two performance figures of issue 23."""

from __future__ import annotations

import statistics
from typing import Any

import pytest

from tests.site.conftest import Browser, Site, button, click, finish_round, personal_table, sign_in

pytestmark = pytest.mark.browser


def fair_round_left_open(page: Any) -> str:
    """Deal fair rounds until one waits for the player; its id."""
    page.wait_for_function("window.__site.state.prefs !== null")  # the last bet is known
    playing = "['playing', 'insurance'].includes(document.querySelector('#table').dataset.state)"
    for _ in range(10):
        page.wait_for_function("!window.__site.state.busy")
        if page.evaluate(playing):  # the last deal's view came after the finished one's link
            return str(page.evaluate("window.__site.state.round.round_id"))
        if button(page, "Rebet & deal").is_visible():
            click(page, "Rebet & deal")
        else:
            click(page, "Chip 1 USDC")
            click(page, "Deal")
        page.wait_for_function(f"{playing} || !!document.querySelector('#verify-link')")
        if not page.locator("#verify-link").count():
            return str(page.evaluate("window.__site.state.round.round_id"))
    raise AssertionError("no round stayed open")


def test_history_verify_links_voided_and_in_play(site: Site, browser: Browser) -> None:
    page = browser.page()
    sign_in(page, site, site.user())
    table = personal_table(page, "classic")
    fair_round_left_open(page)
    finish_round(page)
    played = page.evaluate("window.__site.state.round.round_id")
    voided = fair_round_left_open(page)
    site.manage("void_round", voided, "--reason", "dealing shoe malfunction")
    page.goto(f"{site.url}/play/history/")
    page.wait_for_selector(f"li.round[data-round='{voided}']")
    first = page.locator("li.round").first
    assert first.get_attribute("data-round") == voided
    assert "voided: dealing shoe malfunction" in first.inner_text()
    settled = page.locator(f"li.round[data-round='{played}']")
    text = settled.inner_text()
    assert "Dealer:" in text and "You:" in text and "net " in text and "USDC" in text
    settled.get_by_role("link", name="Verify").click()
    page.wait_for_url(f"**/fairness/verify/?round={played}")
    page.wait_for_selector('#verdict[data-state="ok"]', timeout=60_000)
    assert page.input_value("#round-id") == played

    page.goto(f"{site.url}/fairness/verify/?round={voided}")
    page.wait_for_selector('#verdict[data-state="voided"]', timeout=60_000)
    verdict = page.inner_text("#verdict")
    assert "voided (dealing shoe malfunction)" in verdict and "is fair" not in verdict

    page.goto(f"{site.url}/play/{table}/")
    open_id = fair_round_left_open(page)
    page.goto(f"{site.url}/fairness/verify/?round={open_id}")
    page.wait_for_selector('#verdict[data-state="pending"]', timeout=60_000)
    assert "its proof comes when it ends" in page.inner_text("#verdict")
    # The 409 of the proof not yet published is the browser's own network log line.
    browser.errors[:] = [e for e in browser.errors if "409" not in e]


def test_history_says_each_hands_outcome_and_the_insurance(site: Site, browser: Browser) -> None:
    page = browser.page()
    sign_in(page, site, site.extra_user())
    personal_table(page, "classic")
    click(page, "Chip 5 USDC")
    # a pair of 8s against the dealer's 6 up, T in the hole: hand 1 8 3 doubles and draws TH
    # (21, won), hand 2 8 9 stands (17, lost); the dealer's 16 draws 2C (18)
    site.stack(["8S", "TD", "8C", "6D", "3H", "9S", "TH"])
    click(page, "Deal")
    for name in ("Split", "Double", "Stand"):
        page.wait_for_function(f"!document.querySelector('#{name.lower()}').disabled")
        click(page, name)
    page.wait_for_selector("#verify-link")
    split = page.evaluate("window.__site.state.round.round_id")
    site.stack(["TS", "KD", "9C", "AD"])  # 19 against the dealer's A up, K in the hole
    click(page, "Rebet & deal")
    page.wait_for_selector("#prompt[data-kind='insurance']")
    click(page, "Insurance")
    page.wait_for_function(f"window.__site.state.round.round_id !== '{split}'")
    page.wait_for_selector("#verify-link")
    insured = page.evaluate("window.__site.state.round.round_id")
    page.goto(f"{site.url}/play/history/")
    page.wait_for_selector(f"li.round[data-round='{insured}']")
    lines = page.locator(f"li.round[data-round='{split}'] li.hand-line").all_inner_texts()
    assert lines == [
        "You box 1 hand 1: 8♠ 3♥ 10♥ (21) — won",
        "You box 1 hand 2: 8♣ 9♠ (17) — lost",
        "Dealer: 10♦ 6♦ 2♣ (18)",
    ]
    lines = page.locator(f"li.round[data-round='{insured}'] li.hand-line").all_inner_texts()
    assert lines == [
        "You: 10♠ 9♣ (19) — lost",
        "Insurance (2.50 USDC): won +5.00 USDC",  # 2 to 1: the net of the round is 0.00
        "Dealer: K♦ A♦ (blackjack)",  # as the table page and the verify page say
    ]
    assert "net 0.00 USDC" in page.inner_text(f"li.round[data-round='{insured}']")


def test_resume_after_the_socket_drops_mid_round(site: Site, browser: Browser) -> None:
    page = browser.page()
    sign_in(page, site, site.user())
    personal_table(page, "classic")
    site.stack(["TS", "9D", "6C", "8D"])
    click(page, "Chip 1 USDC")
    click(page, "Deal")
    page.wait_for_function("!document.querySelector('#hit').disabled")
    page.evaluate("window.__site.dropSocket()")
    page.wait_for_selector("#table[data-socket='closed']")
    page.wait_for_selector("#table[data-socket='open']")
    click(page, "Hit")  # 16 + 2C: the round goes on over the new socket
    page.wait_for_function("document.querySelectorAll('#boxes .box.mine .card').length === 3")
    page.reload()
    page.wait_for_function("document.querySelectorAll('#boxes .box.mine .card').length === 3")
    click(page, "Stand")
    page.wait_for_selector("#verify-link")


PLAY_UNTIL_200 = """async () => {
  const site = window.__site;
  const has = (name) => (site.state.round?.view?.actions ?? []).includes(name);
  const over = () => Boolean(site.state.round?.view?.settlement || site.state.round?.view?.voided);
  const until = Date.now() + 120000;  // bounded: a refused deal must fail the test, not spin
  while (site.metrics.latencies.length < 200 && Date.now() < until) {
    if (over()) await site.send("deal", { mode: "rebet" });
    else if (has("insurance")) await site.send("insurance", { take: false, box: 0 });
    else if (has("even_money")) await site.send("even_money", { take: false, box: 0 });
    else if (has("stand")) await site.send("stand", {});
    else await new Promise((r) => setTimeout(r, 20));
  }
}"""


def test_performance_first_render_and_socket_to_dom(site: Site, browser: Browser) -> None:
    """First render of a table page (target 1 s) and WebSocket message to DOM update over at
    least 200 messages (target p99 50 ms), measured in the browser and printed."""
    page = browser.page()
    sign_in(page, site, site.user())
    table = personal_table(page, "classic")
    renders = []
    for _ in range(3):
        page.goto(f"{site.url}/play/{table}/")
        page.wait_for_selector("#table[data-socket='open']")
        renders.append(page.evaluate("window.__site.metrics.firstRender"))
    first_render = min(renders)
    click(page, "Chip 1 USDC")
    click(page, "Deal")
    page.wait_for_function("!window.__site.state.busy")
    page.evaluate(PLAY_UNTIL_200)  # the same send() the buttons call, without Playwright's clicks
    latencies = page.evaluate("window.__site.metrics.latencies")
    p99 = statistics.quantiles(latencies, n=100)[98]
    print(
        f"\nsite performance: first render {first_render:.0f} ms (best of 3, target 1000); "
        f"socket message to DOM p50 {statistics.median(latencies):.1f} ms, "
        f"p99 {p99:.1f} ms over {len(latencies)} messages (target 50)"
    )
    assert first_render <= 1000
    assert p99 <= 50
