"""A duel in the browser at a table that reads the (local) beacon: once both seats are READY
the bets lock, the page says the cards wait for public randomness and counts down to the
beacon round's time, then the cards come and the round plays out; its verify link verifies
it with the beacon named. Its own server (`serve` with BEACON=local and no margin): the
session's site server deals shared tables without a beacon."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import base_env, manage, served
from tests.site.conftest import Browser, Site, button, click, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def beacon_site(tmp_path: Path) -> Iterator[Site]:
    env = base_env(
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}", BEACON="local", BEACON_MARGIN_S="0"
    )
    manage(env, "migrate", "--noinput", "-v0")
    manage(env, "seed_demo")
    for url in served(env):
        yield Site(url=url, stack_dir=tmp_path, env=env)


def test_the_table_says_the_cards_wait_for_the_beacon(beacon_site: Site, browser: Browser) -> None:
    a, b = browser.page(), browser.page()
    for page, name in ((a, "alice"), (b, "bob")):
        sign_in(page, beacon_site, name, "demo-password")
    a.wait_for_selector("#tables section[data-ruleset='duel'] li.table-entry")
    entry = a.locator("#tables section[data-ruleset='duel'] li.table-entry").first
    table = entry.get_attribute("data-table-id")
    for page in (a, b):
        page.goto(f"{beacon_site.url}/play/{table}/")
        page.wait_for_selector("#table[data-socket='open']")
        click(page, "Sit")
        page.wait_for_selector("#ready:not([hidden])")
    click(a, "Ready")
    click(b, "Ready")
    for page in (a, b):
        page.wait_for_selector("#table[data-state='beacon']")
        status = page.inner_text("#status")
        assert status.startswith("Bets locked. The cards wait for public randomness: ")
        assert "the operator's own beacon round " in status
        assert page.inner_text("#timer").startswith("Cards in ")
        assert page.locator("#boxes .card").count() == 0  # nothing dealt while it waits
    for page in (a, b):  # the beacon round comes within 3 s, the timer records it
        page.wait_for_selector("#table:not([data-state='beacon'])", timeout=15_000)
    for _ in range(150):  # each seat stands; the beacon's cards are live: a 21 stood already
        if all(page.locator("#verify-link").count() for page in (a, b)):
            break
        for page in (a, b):
            stand = button(page, "Stand")
            if stand.count() and stand.is_visible() and stand.is_enabled():
                stand.click()
        a.wait_for_timeout(100)  # the next view arrives over the socket
    for page in (a, b):
        page.wait_for_selector("#verify-link", timeout=15_000)
    a.click("#verify-link")
    a.wait_for_selector("#beacon-verdict[data-state='not-independent']", timeout=30_000)
    assert a.inner_text("#beacon-verdict").startswith("operator-run beacon: not independent")
    a.wait_for_selector("#verdict[data-state='ok']", timeout=30_000)
