"""The verify page says whose cards are whose, in a real headless Chromium: the dealer's and
each box's hands (a split's two hands), or each duel seat's, every card written as a player
reads it ("10♠", read out "10 of spades"), each hand's total ("soft 12", "blackjack",
"bust (22)") and result; every check in words, its id kept in data-check; the round-id box
fits a whole round id on a phone and on a laptop."""

from __future__ import annotations

import hashlib
import json
import uuid
from typing import Any

import pytest
from django.test import Client

from casino.engine import commands as c
from casino.engine.decider import step
from casino.engine.events import Participant, RoundOptions
from fairness import services
from fairness.chain import hash_seed
from fairness.receipt import receipt_from_events
from fairness.sample import NOW_MS, play_out, round_start, stored_events
from fairness.shoe import FairShoe
from tests.fairness.factories import user_create

pytestmark = pytest.mark.django_db(transaction=True)


def seed(n: int) -> str:
    return hashlib.sha256(f"verify-page-{n}".encode()).hexdigest()


def played(
    ruleset: str, server_seed: str, players: list[str], bets: list[tuple[int, ...]]
) -> list[tuple[str, dict[str, Any]]]:
    """One round through the rule engine on the fair shoe of `server_seed` (client seeds
    alice, bob, ...; nonce 1): insurance declined, a first pair split, hit below 12."""
    clients = ["alice", "bob", "carol"][: len(players)]
    shoe = FairShoe(server_seed, "|".join(clients), 1)
    opening = c.OpenRound(
        f"round-{ruleset}", "t-hands", ruleset, "chain-hands", 1, hash_seed(server_seed),
        tuple(Participant(p, s) for p, s in zip(players, clients, strict=True)),
        RoundOptions(1_000_000, 100_000_000, stake=1_000_000 if ruleset == "duel" else 0),
    )  # fmt: skip
    events, state = step(None, opening, NOW_MS, shoe)
    for player, amounts in zip(players, bets, strict=False):
        more, state = step(state, c.PlaceBet(player, amounts), NOW_MS, shoe)
        events += more
    return play_out(events, state, shoe, server_seed, split_pairs=True)


def signed_line(events: list[tuple[str, dict[str, Any]]]) -> str:
    """The round's bundle line, its receipt signed with the casino's published key."""
    stream = f"round-{events[0][1]['round_id']}"
    stored = stored_events(stream, events, round_start(1))
    receipt = receipt_from_events(stream, stored)
    signature, key_id = services.receipt_sign(receipt=receipt)
    line = {"format": "fairness-v1-bundle", "receipt": receipt, "signature": signature}
    return json.dumps({**line, "key_id": key_id, "events": stored})


def verified(page: Any, line: str) -> dict[str, str]:
    """Paste `line`, wait for the verdict (it must be "ok"); the hands: who -> row text."""
    page.fill("#paste", line)
    page.click("#verify-paste")
    page.wait_for_selector(
        '#verdict[data-state="ok"], #verdict[data-state="failed"]', timeout=60_000
    )
    assert page.locator("#verdict").get_attribute("data-state") == "ok", page.inner_text("#result")
    rows = page.locator("#hands li")
    return {
        rows.nth(i).get_attribute("data-who"): rows.nth(i).inner_text() for i in range(rows.count())
    }


def sign_in(page: Any, live_server: Any, user: Any) -> None:
    """The browser's session is `user`'s (the verify page then knows its viewer)."""
    client = Client()
    client.force_login(user)
    cookie = client.cookies["sessionid"].value
    page.context.add_cookies([{"name": "sessionid", "value": cookie, "url": live_server.url}])


def test_classic_and_atlantic_city_hands_are_labelled_with_totals(
    live_server: Any, page: Any
) -> None:
    page.goto(f"{live_server.url}/fairness/verify/")
    # Classic deals the player, the dealer's hole card, the player, the dealer's up card.
    hands = verified(page, signed_line(played("classic", seed(11), ["7"], [(1_000_000,)])))
    assert hands == {
        "dealer": "Dealer: 3♦ 10♣ 5♦ — 18",
        "7/0/0": "Box 1, hand 1: 9♦ A♦ — soft 20 — won +1.00 USDC",
    }
    assert page.inner_text("#hands-rules") == "Played under the Classic rules."
    ace = page.locator("#hands li[data-who='7/0/0'] .card").nth(1)
    assert (ace.get_attribute("aria-label"), ace.get_attribute("data-card")) == (
        "ace of diamonds",
        "AD",
    )
    owners = [row.split("\t")[2] for row in page.locator("#cards tbody tr").all_inner_texts()]
    assert owners == ["Box 1", "Dealer (face down)", "Box 1", "Dealer", "Dealer"]
    dealt = page.locator("#cards tbody tr td:nth-child(4) .card").evaluate_all(
        "cells => cells.map((c) => [c.textContent, c.getAttribute('aria-label')])"
    )
    assert dealt[:2] == [["9♦", "9 of diamonds"], ["3♦", "3 of diamonds"]]

    # Centre box K♣ K♣ split into two hands of 20; the left box 19; the dealer busts.
    hands = verified(
        page, signed_line(played("atlantic_city", seed(0), ["7"], [(2_000_000, 0, 1_000_000)]))
    )
    assert hands == {
        "dealer": "Dealer: 5♠ Q♠ J♠ — bust (25)",
        "7/0/0": "Box 1 (centre), hand 1 (split): K♣ 10♣ — 20 — won +2.00 USDC",
        "7/0/1": "Box 1 (centre), hand 2 (split): K♣ Q♠ — 20 — won +2.00 USDC",
        "7/2/0": "Box 3 (left), hand 1: 9♦ K♦ — 19 — won +1.00 USDC",
    }
    link = page.get_by_role("link", name="the Atlantic City rules")
    assert link.get_attribute("href") == "/play/rules/atlantic_city/"


def test_duel_seats_name_the_viewer(live_server: Any, page: Any) -> None:
    you, other = user_create(), user_create()
    ids = [str(you.pk), str(other.pk)]
    duel = signed_line(played("duel", seed(0), ids, []))
    seats = signed_line(played("duel_classic", seed(1), ids, [(1_000_000,), (2_000_000,)]))
    sign_in(page, live_server, you)
    page.goto(f"{live_server.url}/fairness/verify/")
    assert page.get_attribute("body", "data-player-id") == ids[0]
    hands = verified(page, duel)
    assert hands == {  # no dealer; the pot of 1.00 less the 3% fee goes to the 16
        f"{ids[0]}/0/0": "Seat 1 (you): J♥ 5♥ — 15 — lost -1.00 USDC",
        f"{ids[1]}/0/0": f"Seat 2 (player {ids[1]}): 9♣ 7♣ — 16 — won +0.94 USDC",
    }
    hands = verified(page, seats)
    assert hands == {
        "dealer": "Dealer: 4♥ K♠ 6♠ — 20",
        f"{ids[0]}/0/0": "Seat 1 (you), hand 1: A♠ 10♠ — blackjack — blackjack +1.50 USDC",
        f"{ids[1]}/0/0": f"Seat 2 (player {ids[1]}), hand 1: 7♦ Q♣ — 17 — lost -2.00 USDC",
    }
    page.context.clear_cookies()
    page.goto(f"{live_server.url}/fairness/verify/")
    hands = verified(page, duel)
    assert hands[f"{ids[0]}/0/0"] == f"Seat 1 (player {ids[0]}): J♥ 5♥ — 15 — lost -1.00 USDC"


CHECKS = {
    "signature": "✓ The receipt is signed by the casino's published key.",
    "eventChain": "✓ Every recorded event is linked to the one before it by its hash, up to the "
    "receipt's last event.",
    "seed": "✓ The server seed matches the commitment published before the round, and the round "
    "revealed it.",
    "clientMaterial": "✓ The players' client seeds, in seat order, are the ones locked in when "
    "betting closed.",
    "cards": "✓ Every card dealt is the card the shuffled shoe holds at its place, in order, none "
    "skipped.",
    "outcome": "✓ The receipt's outcome and payouts are the ones the round's events record.",
}


def test_every_check_reads_as_a_sentence(live_server: Any, page: Any) -> None:
    page.goto(f"{live_server.url}/fairness/verify/")
    verified(page, signed_line(played("classic", seed(11), ["7"], [(1_000_000,)])))
    rows = page.locator("#checks li")
    shown = {
        rows.nth(i).get_attribute("data-check"): rows.nth(i).inner_text()
        for i in range(rows.count())
    }
    assert shown == CHECKS
    play = page.locator("#play li").all_inner_texts()
    assert play[0].startswith(
        "✓ The round was played under its table's published rules (payouts, timeouts, fee "
        "schedule) — checked: classic version 1"
    ), play[0]
    dealer = (
        "✓ The dealer turned the hole card first, drew below 17 and stood on 17, soft 17 too — "
        "checked: "
    )
    assert any(text.startswith(dealer) for text in play), play
    for text in [*shown.values(), *play]:
        assert "_" not in text.split(":")[0], text  # no internal id in the words


@pytest.mark.parametrize("width", [390, 1366])
def test_the_round_id_box_fits_a_whole_id(live_server: Any, page: Any, width: int) -> None:
    page.set_viewport_size({"width": width, "height": 800})
    page.goto(f"{live_server.url}/fairness/verify/")
    page.fill("#round-id", str(uuid.uuid4()))
    scroll, client = page.evaluate(
        "() => { const el = document.getElementById('round-id');"
        " return [el.scrollWidth, el.clientWidth]; }"
    )
    assert scroll <= client, (scroll, client)
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
