"""Every link works: for a signed-in player, each href on the verify page (after it verified
one of their rounds), the history page and the rules pages answers 200, or redirects to a
page that does. The verify page's hands of that round are the cards the table showed."""

from __future__ import annotations

import pytest

from tests.site.conftest import Browser, Site, click, finish_round, personal_table, sign_in

pytestmark = pytest.mark.browser

HREFS = "() => [...document.querySelectorAll('a[href]')].map((a) => a.href)"


def test_every_link_answers_200(site: Site, browser: Browser) -> None:
    page = browser.page()
    sign_in(page, site, site.user())
    personal_table(page, "classic")
    click(page, "Chip 1 USDC")
    click(page, "Deal")  # a fair shoe: the proof verifies
    page.wait_for_function("!window.__site.state.busy")
    finish_round(page)
    round_id = page.evaluate("window.__site.state.round.round_id")
    table_cards = page.locator("#boxes .box.mine .card").evaluate_all(
        "e => e.map((c) => c.dataset.card)"
    )
    dealer_cards = page.locator("#dealer-hand .card").evaluate_all(
        "e => e.map((c) => c.dataset.card)"
    )
    links: dict[str, str] = {}  # href -> the page it was found on

    page.goto(f"{site.url}/play/history/")
    page.wait_for_selector(f"li.round[data-round='{round_id}']")
    links.update(dict.fromkeys(page.evaluate(HREFS), "/play/history/"))
    assert f"{site.url}/fairness/verify/" in links  # the history links the verify page itself

    page.goto(f"{site.url}/fairness/verify/?round={round_id}")
    page.wait_for_selector('#verdict[data-state="ok"]', timeout=60_000)
    assert (
        page.locator("#hands li[data-who='dealer'] .card").evaluate_all(
            "e => e.map((c) => c.dataset.card)"
        )
        == dealer_cards
    )
    mine = page.locator("#hands li").nth(1)
    assert mine.locator(".who").inner_text() == "Box 1, hand 1"
    assert mine.locator(".card").evaluate_all("e => e.map((c) => c.dataset.card)") == table_cards
    links.update(dict.fromkeys(page.evaluate(HREFS), "/fairness/verify/"))
    assert f"{site.url}/play/rules/classic/" in links  # the round's own rules

    page.goto(f"{site.url}/play/rules/")
    rules = [h for h in page.evaluate(HREFS) if h.startswith(f"{site.url}/play/rules/")]
    assert len(set(rules)) >= 5  # the index itself and the four rule sets
    links.update(dict.fromkeys(page.evaluate(HREFS), "/play/rules/"))
    for href in sorted(set(rules)):
        page.goto(href)
        links.update(dict.fromkeys(page.evaluate(HREFS), href))

    checked = sorted(h for h in links if h.startswith(("http://", "https://")))
    assert all(h.startswith(site.url) for h in checked), checked  # nothing leaves the site
    broken = []
    for href in checked:
        response = page.request.get(href)  # the context's session; redirects followed
        if response.status != 200:
            broken.append(f"{href} (on {links[href]}): {response.status}")
    assert broken == []
    assert len(checked) >= 12, checked
