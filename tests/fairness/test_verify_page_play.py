"""The verify page's proof of play in a real headless Chromium (system browser, Playwright):
the page says, in words, which play checks it ran on a round and what each found."""

from __future__ import annotations

import json
from typing import Any

import pytest

from fairness import services
from fairness.canonical import GENESIS, event_hash
from fairness.models import RoundProof
from fairness.receipt import receipt_from_events
from tests.fairness.factories import round_play

BODY = ("stream", "version", "type", "schema_version", "data", "recorded_at")


def overpaid(proof: RoundProof) -> tuple[str, int]:
    """The round's line with its first hand paid 0.01 USDC more, as the operator could write
    it: the chain recomputed, the receipt rebuilt and signed with the casino's own key (so the
    seed, card, chain and signature checks all pass). Returns the line and the settlement's
    version."""
    line = json.loads(proof.bundle_line)
    events = line["events"]
    settled = next(e for e in events if e["type"] == "RoundSettled")
    settled["data"]["hands"][0]["gross_return"] += 10_000
    prev = GENESIS
    for event in events:
        prev = event["hash"] = event_hash(prev, {k: event[k] for k in BODY})
    receipt = receipt_from_events(line["receipt"]["stream"], events)
    signature, key_id = services.receipt_sign(receipt=receipt)
    forged = {**line, "receipt": receipt, "signature": signature, "key_id": key_id}
    return json.dumps(forged), settled["version"]


def play_rows(page: Any) -> dict[str, tuple[str, str]]:
    """check id -> (state, text) of the page's proof-of-play list."""
    rows = page.locator("#play li")
    return {
        rows.nth(i).get_attribute("data-check"): (
            rows.nth(i).get_attribute("data-state"),
            rows.nth(i).inner_text(),
        )
        for i in range(rows.count())
    }


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_page_shows_the_play_checks_of_a_round_and_of_a_forged_one(
    live_server: Any, page: Any
) -> None:
    proof = round_play(table_id="t9", round_id="round-play", client_seeds=["alice", "bob"])
    hands = len(proof.receipt["payouts"]["hands"])
    page.goto(f"{live_server.url}/fairness/verify/")
    page.fill("#round-id", "round-play")
    page.click("#fetch-round")
    page.wait_for_selector(
        '#verdict[data-state="ok"], #verdict[data-state="failed"]', timeout=60_000
    )
    assert page.locator("#verdict").get_attribute("data-state") == "ok"
    assert (
        "The play, decided again here, is the rules' own." in page.locator("#verdict").inner_text()
    )
    assert (
        page.locator("#play-summary")
        .inner_text()
        .startswith("Play: the round was decided again here from the players' ")
    )
    rows = play_rows(page)
    assert rows["stream"] == (
        "checked",
        f"✓ Every recorded event is the one the rules derive, field by field — checked: "
        f"all {len(json.loads(proof.bundle_line)['events'])} events.",
    )
    assert rows["dealer"][0] == "checked" and rows["dealer"][1].startswith(
        "✓ The dealer turned the hole card first, drew below 17 and stood on 17, soft 17 too — "
        "checked: hole card turned"
    )
    assert rows["payouts"][0] == "checked" and rows["payouts"][1].startswith(
        f"✓ Every hand's outcome and payout is the one the rules give — checked: {hands} hands "
        "checked"  # and any blackjacks paid
    )
    assert rows["ties"][0] == "checked"  # two seats: duel_classic, whose ties 17-19 lose
    assert {state for state, _ in rows.values()} <= {"checked", "none in this round"}

    forged, version = overpaid(proof)
    page.fill("#paste", forged)
    page.click("#verify-paste")
    page.wait_for_selector('#verdict[data-state="failed"]', timeout=60_000)
    failures = page.locator("#failures li").all_text_contents()
    assert len(failures) == 1 and failures[0].startswith(
        f"play: version {version}: recorded RoundSettled {{"
    ), failures
    assert "hands[0].gross_return: recorded " in failures[0]
    rows = play_rows(page)
    assert rows["payouts"] == (
        "failed",
        "✗ Every hand's outcome and payout is the one the rules give — failed: "
        f"at version {version}.",
    )
    assert rows["dealer"][0] == rows["deal"][0] == "checked"
    assert rows["stream"][0] == rows["seed"][0] == "not checked"
    assert page.locator('#checks li[data-ok="true"]').count() == 6  # seed, cards, chain, ...

    page.fill("#paste", json.dumps(json.loads(proof.bundle_line)["receipt"]))
    page.click("#verify-paste")
    page.wait_for_selector('#verdict[data-state="failed"]', timeout=60_000)
    assert page.locator("#play-summary").inner_text() == (
        "Play: not run: a receipt alone has no events; paste the whole bundle line to check "
        "the play."
    )
