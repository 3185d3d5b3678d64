"""The verify page in a real headless Chromium (system browser, Playwright)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client

from fairness.models import RoundProof
from fairness.shoe import shoe_cards
from tests.chromium import chromium_page
from tests.fairness.factories import round_play


@pytest.mark.django_db
def test_the_page_is_a_template_with_local_scripts_only() -> None:
    response = Client().get("/fairness/verify/")
    assert response.status_code == 200
    html = response.content.decode()
    assert '<script type="module" src="/static/fairness/verify-page.js">' in html
    assert "http://" not in html and "https://" not in html  # no CDN


def tamper(proof: RoundProof) -> str:
    """Change the round's third dealt card in its events and receipt (the hashes now differ)."""
    line = json.loads(proof.bundle_line)
    dealt = [e for e in line["events"] if e["type"].endswith("CardDealt")][2]
    shoe = shoe_cards(line["receipt"]["server_seed"], line["receipt"]["client_material"],
                      line["receipt"]["nonce"], 3)  # fmt: skip
    dealt["data"]["card"] = "AS" if shoe[2] != "AS" else "KD"
    line["receipt"]["cards"][2]["card"] = dealt["data"]["card"]
    proof.bundle_line = json.dumps(line)
    proof.save(update_fields=["bundle_line"])
    return f"cards: position 2 dealt {dealt['data']['card']}, the shoe has {shoe[2]}"


@pytest.fixture
def browser_page(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    # Playwright's sync API runs an event loop in this thread; the ORM is not used meanwhile.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with chromium_page() as page:
        yield page


def verify_round_in_page(page: Any, base_url: str, round_id: str) -> tuple[str, str, list[str]]:
    page.goto(f"{base_url}/fairness/verify/")
    page.fill("#round-id", round_id)
    page.click("#fetch-round")
    page.wait_for_selector(
        '#verdict[data-state="ok"], #verdict[data-state="failed"]', timeout=60_000
    )
    verdict = page.locator("#verdict")
    failures = page.locator("#failures li").all_text_contents()
    return verdict.get_attribute("data-state") or "", verdict.inner_text(), failures


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_a_round_verifies_and_a_tampered_round_shows_the_failure(
    live_server: Any, browser_page: Any
) -> None:
    good = round_play(table_id="t1", round_id="round-good", client_seeds=["alice", "bob"])
    bad = round_play(table_id="t1", round_id="round-bad", client_seeds=["alice", "bob"])
    expected_failure = tamper(bad)
    good_cards = len(good.receipt["cards"])
    assert os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] == "true"

    state, text, failures = verify_round_in_page(browser_page, live_server.url, "round-good")
    assert (state, failures) == ("ok", [])
    assert f"Verified: round round-good is fair ({good_cards} cards match)" in text
    rows = browser_page.locator("#cards tbody tr.match").count()
    assert rows == good_cards
    assert browser_page.locator('#checks li[data-ok="true"]').count() == 6

    state, text, failures = verify_round_in_page(browser_page, live_server.url, "round-bad")
    assert state == "failed" and text.startswith("FAILED: round round-bad does not verify")
    assert expected_failure in failures
    assert any(f.startswith("event hash: version ") for f in failures)
    assert browser_page.locator("#cards tbody tr.mismatch").count() == 1


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_offline_seeds_and_a_pasted_line_verify_in_the_page(
    live_server: Any, browser_page: Any
) -> None:
    proof = round_play(table_id="t2", round_id="round-paste", client_seeds=["carol"])
    receipt = proof.receipt
    page = browser_page
    page.goto(f"{live_server.url}/fairness/verify/")
    page.fill("#server-seed", receipt["server_seed"])
    page.fill("#client-seed", receipt["client_material"])
    page.fill("#nonce", str(receipt["nonce"]))
    page.fill("#commitment", receipt["commitment"])
    page.fill("#count", "20")
    page.click("#compute-seeds")
    page.wait_for_selector('#verdict[data-state="ok"]', timeout=60_000)
    recomputed = page.locator("#cards tbody tr td:nth-child(5) .card").evaluate_all(
        "cells => cells.map((c) => c.dataset.card)"
    )
    assert page.locator("#checks li").all_inner_texts() == [
        "✓ The server seed you entered hashes (SHA-256) to the commitment you entered."
    ]
    assert recomputed == shoe_cards(receipt["server_seed"], receipt["client_material"],
                                    receipt["nonce"], 20)  # fmt: skip

    page.fill("#paste", proof.bundle_line)
    page.click("#verify-paste")
    page.wait_for_selector('#verdict[data-state="ok"]', timeout=60_000)
    page.fill("#paste", "{not json")
    page.click("#verify-paste")
    page.wait_for_selector('#verdict[data-state="failed"]', timeout=60_000)
    assert "not JSON" in page.locator("#failures li").first.inner_text()
