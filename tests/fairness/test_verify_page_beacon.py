"""The verify page's beacon verdict (#beacon-verdict), in a real headless Chromium: a shared
table's round that waited for a beacon round says which beacon it was, and whether it is
independent of the casino, once the page's own code (verifier.js on beacon.js) has checked the
round's BLS signature, its randomness, that it is the first round after the lock and that the
shoe and the receipt used it; a forged beacon round fails it; a shared-table round without a
beacon says a seat could choose its cards."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from django.test import override_settings

from casino.engine.events import beacon_round_time
from casino.rounds.services import round_open
from casino.rounds.stream import round_load
from casino.tables.timers import tick
from fairness import beaconsource, services
from fairness.models import RoundProof
from fairness.sample import beacon_round_line
from tests.casino.conftest import make_player, make_table, stand_open_hands
from tests.chromium import chromium_page
from tests.fairness.rewrites import forge, play_round
from tests.fairness.test_js_beacon import Played, line_of, picker, play

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("fast_passwords"),
]

DONE = ", ".join(f'#verdict[data-state="{s}"]' for s in ("ok", "failed", "voided"))


def signed(line: dict[str, Any]) -> str:
    """The line with its receipt signed by the casino's published key (what the page trusts)."""
    signature, key_id = services.receipt_sign(receipt=line["receipt"])
    out = {**line, "signature": signature, "key_id": key_id}
    out.pop("public_key", None)
    return json.dumps(out)


def pasted(page: Any, live_server: Any, text: str) -> tuple[str, str, str]:
    """Paste a line on the verify page: (the verdict's state, the beacon's state and text)."""
    page.goto(f"{live_server.url}/fairness/verify/")
    page.fill("#paste", text)
    page.click("#verify-paste")
    page.wait_for_selector(DONE, timeout=60_000)
    beacon = page.locator("#beacon-verdict")
    return (
        page.locator("#verdict").get_attribute("data-state") or "",
        beacon.get_attribute("data-state") or "",
        beacon.inner_text(),
    )


def test_a_local_beacon_round_is_checked_and_named_not_independent(
    live_server: Any, page: Any
) -> None:
    line = beacon_round_line("duel_classic", seed=3)
    round_ = line["receipt"]["beacon"]["round"]
    key = line["receipt"]["beacon"]["public_key"]
    state, beacon, text = pasted(page, live_server, signed(line))
    assert state == "ok", page.inner_text("#result")
    assert beacon == "not-independent"
    assert text.startswith(
        f"operator-run beacon: not independent (local-beacon round {round_}, key {key[:16]}…"
    ), text
    assert "the shoe was shuffled with it" in text
    check = page.locator('#checks li[data-check="beacon"]')
    assert check.get_attribute("data-ok") == "true"
    assert page.locator('#play li[data-check="beacon"]').get_attribute("data-state") == "checked"

    voided = beacon_round_line("duel", seed=3, void=True)
    state, beacon, text = pasted(page, live_server, signed(voided))
    assert (state, beacon) == ("voided", "not-independent")
    assert "not recorded within 30 s: the round was voided, every stake refunded" in text


def test_a_tampered_beacon_round_fails_the_page(live_server: Any, page: Any) -> None:
    """The signature's byte flipped, the cards dealt from the material the table would make of
    it and the receipt signed by the casino's own key: only the BLS check can tell."""
    played = play("duel", 21, "local", "byte")
    round_ = next(d for t, d in played.pairs if t == "BeaconRecorded")["round"]
    state, beacon, text = pasted(page, live_server, signed(line_of(played)))
    assert (state, beacon) == ("failed", "failed")
    assert text.startswith(
        f"Beacon check FAILED: round {round_}'s signature does not verify under the beacon's "
        "public key "
    ), text
    failures = page.locator("#failures li").all_text_contents()
    assert failures[0].startswith(f"beacon: round {round_}'s signature does not verify")
    assert page.locator('#checks li[data-check="beacon"]').get_attribute("data-ok") == "false"

    earlier: Played = play("duel_classic", 22, "local", "earlier")
    state, beacon, text = pasted(page, live_server, signed(line_of(earlier)))
    assert (state, beacon) == ("failed", "failed")
    assert "is not after the lock: its time must be after the lock's " in text, text


def test_a_quicknet_round_is_independent(live_server: Any, page: Any) -> None:
    played = play("duel", 23, "quicknet", "none")
    round_ = next(d for t, d in played.pairs if t == "BeaconRecorded")["round"]
    state, beacon, text = pasted(page, live_server, signed(line_of(played)))
    assert (state, beacon) == ("ok", "independent"), page.inner_text("#result")
    assert text.startswith(f"drand quicknet round {round_}: independent. "), text


def test_a_shared_round_without_a_beacon_is_a_warning(live_server: Any, page: Any) -> None:
    events, shoe = play_round("duel", 5, picker(5), players=2)
    state, beacon, text = pasted(page, live_server, signed(forge(events, shoe)))
    assert (state, beacon) == ("ok", "warning")
    assert text.startswith("no beacon: a seat could choose its cards. ")
    events, shoe = play_round("classic", 6, picker(6))
    state, beacon, text = pasted(page, live_server, signed(forge(events, shoe)))
    assert (state, beacon) == ("ok", "none")


def test_a_round_played_on_the_local_beacon_is_verified_by_its_id(
    live_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A duel through the round service on the local beacon (no margin: the next round, at
    most 3 s away): the timer's sweep records the round once published and deals; the page
    fetches the round's proof by its id and checks its beacon. (The round is played before
    the browser opens: Playwright's loop in this thread would stop the service's pushes.)"""
    with override_settings(BEACON="local", BEACON_MARGIN_S=0, BEACON_WAIT_S=30):
        beaconsource.clear_caches()
        try:
            players = [make_player("ann"), make_player("bob")]
            round_id = round_open(table=make_table("duel"), players=players).round.id
            _, state = round_load(round_id=round_id)
            assert state is not None and state.opened.beacon is not None
            due = beacon_round_time(state.opened.beacon, state.beacon_round)
            time.sleep(max(0.0, due - time.time()) + 0.05)
            tick()  # the sweep records the published round, and the deal follows
            stand_open_hands(round_id)  # the beacon's cards are live: a 21 has stood already
        finally:
            beaconsource.clear_caches()
    round_ = RoundProof.objects.get(round_id=round_id).receipt["beacon"]["round"]
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with chromium_page() as page:
        page.goto(f"{live_server.url}/fairness/verify/?round={round_id}")
        page.wait_for_selector(DONE, timeout=60_000)
        verdict = page.locator("#verdict").get_attribute("data-state")
        beacon = page.locator("#beacon-verdict")
        state, text = beacon.get_attribute("data-state"), beacon.inner_text()
        result = page.inner_text("#result")
    assert verdict == "ok", result
    assert state == "not-independent"
    assert text.startswith(
        f"operator-run beacon: not independent (local-beacon round {round_}, key "
    )
