"""The table's Fairness panel: before you bet it shows the next round's nonce and commitment
and lets you set your own client seed; the round you then play opens with exactly that
commitment and shuffles with your seed (its public receipt says so). A seed the server refuses,
or one changed mid-round, shows the server's words and changes nothing."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.site.conftest import Browser, Site, click, personal_table, sign_in

pytestmark = pytest.mark.browser

OPEN_HAND = ["9H", "5C", "7D", "TS"]  # player 9, 7 = 16 against a ten up: the round waits


def set_seed(page: Any, seed: str) -> None:
    page.fill("#client-seed", seed)
    click(page, "Set seed")
    page.wait_for_function(
        "document.querySelector('#seed-status').textContent !== ''"
        " || !document.querySelector('#error').hidden"
    )


def test_the_round_uses_the_commitment_shown_and_the_seed_you_set(
    site: Site, browser: Browser
) -> None:
    page = browser.page()
    sign_in(page, site, site.extra_user())
    table = personal_table(page, "classic")
    page.wait_for_function("document.querySelector('#client-seed').value !== ''")
    page.locator("#fairness summary").click()
    page.wait_for_function("document.querySelector('#next-nonce').textContent !== '…'")
    nonce, commitment = page.inner_text("#next-nonce"), page.inner_text("#next-commitment")
    public = httpx.get(f"{site.url}/api/fairness/commitment/", params={"table": str(table)})
    assert (nonce, commitment) == (str(public.json()["nonce"]), public.json()["commitment"])

    set_seed(page, "bad seed!")
    assert page.locator("#error").get_attribute("data-code") == "invalid_client_seed"
    set_seed(page, "my-lucky.seed_7")
    assert page.inner_text("#seed-status") == "Your next round uses client seed my-lucky.seed_7."
    assert page.locator("#error").is_hidden()

    site.stack(OPEN_HAND)
    click(page, "Chip 1 USDC")
    click(page, "Deal")
    page.wait_for_function("!document.querySelector('#stand').disabled")
    round_id = page.evaluate("window.__site.state.round.round_id")
    set_seed(page, "another-seed")  # the round in play keeps the seed it opened with
    assert page.locator("#error").get_attribute("data-code") == "round_in_progress"
    assert page.inner_text("#seed-status") == ""
    click(page, "Stand")
    page.wait_for_selector("#verify-link")

    receipt = httpx.get(f"{site.url}/api/fairness/rounds/{round_id}/").json()["receipt"]
    assert (receipt["nonce"], receipt["commitment"]) == (int(nonce), commitment)
    assert receipt["client_material"] == "my-lucky.seed_7"
    page.reload()
    page.wait_for_function("document.querySelector('#client-seed').value !== ''")
    assert page.input_value("#client-seed") == "my-lucky.seed_7"
    # The two refusals are the browser's own network log lines.
    browser.errors[:] = [e for e in browser.errors if "400" not in e and "409" not in e]
