"""No staff page or export shows a hidden card of a round still in play: the dealer's hole card
until HoleCardRevealed, a duel's hidden cards until CardsRevealed. Once the round ended (played
out or voided) every card shows.

Every staff role (and a superuser, like seed_demo's `staff`) against every page that renders
event data: the event log's list, search (by round id and by the hidden card's value) and
change pages, the round review page, the auditor's export and the round's proof. The hidden
cards are read from the event store; the shoe is stacked so that no other card of the round
has the same string, their suits (S, H) are not hex digits (hashes, ids), client seeds are
fixed lower-case words and CSRF tokens are cut, so a card string on a page is that card.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

import pytest
from django.contrib.auth.models import AbstractBaseUser, Permission
from django.test import Client
from django.urls import reverse

from casino.dashboard.roundpage import HIDDEN_CARD
from casino.engine.commands import PlaceBet, Stand
from casino.engine.rules import USDC
from casino.eventstore.models import StoredEvent
from casino.models import Round
from casino.rounds import services
from fairness.models import ClientSeed
from tests.dashboard.conftest import login, make_player, make_table

pytestmark = pytest.mark.django_db

STAFF_ROLES = ("reviewer", "manager", "auditor", "superuser")
EXPORTERS = {"auditor", "superuser"}
# Classic: player 9D, hole 5S, player 7C, dealer up TD; the player stands on 16 and the dealer
# draws 4H to 19. Duel: first cards 9D and 8C face up, second cards 5S and KH hidden.
CLASSIC_SHOE = ("9D", "5S", "7C", "TD", "4H", "2C", "3C", "8D")
DUEL_SHOE = ("9D", "8C", "5S", "KH", "2C", "3C", "4D", "6D")
CHANGELIST = "admin:eventstore_storedevent_changelist"


def _player(name: str) -> AbstractBaseUser:
    player = make_player(name)
    ClientSeed.objects.update_or_create(user=player, defaults={"seed": f"seed-{name}"})
    return player


def hidden_events(round_id: str) -> list[StoredEvent]:
    """The round's face-down cards as dealt, read from the event store."""
    events = StoredEvent.objects.filter(stream_id=round_id).order_by("version")
    return [
        e
        for e in events
        if (e.type == "DealerCardDealt" and e.data["hole"])
        or (e.type == "PlayerCardDealt" and e.data["hidden"])
    ]


class LiveRound:
    def __init__(self, round_id: str, players: Sequence[AbstractBaseUser]) -> None:
        self.round_id = round_id
        self.players = players
        self.hidden = hidden_events(round_id)
        self.cards = [e.data["card"] for e in self.hidden]

    def finish(self, how: str) -> None:
        if how == "void":
            services.round_void(round_id=self.round_id, reason="test: ended by a void")
        else:
            for player in self.players:
                services.round_command(round_id=self.round_id, command=Stand(str(player.pk)))
        assert Round.objects.get(id=self.round_id).status == (
            "voided" if how == "void" else "settled"
        )


@pytest.fixture
def classic_round(stack_shoe: Callable[[Sequence[str]], None]) -> LiveRound:
    stack_shoe(CLASSIC_SHOE)
    player = _player("alice")
    round_id = services.round_open(table=make_table(), players=[player]).round.id
    services.round_command(round_id=round_id, command=PlaceBet(str(player.pk), (10 * USDC,)))
    return LiveRound(round_id, [player])


@pytest.fixture
def duel_round(stack_shoe: Callable[[Sequence[str]], None]) -> LiveRound:
    stack_shoe(DUEL_SHOE)
    players = [_player("bob"), _player("carol")]
    round_id = services.round_open(table=make_table("duel"), players=players).round.id
    return LiveRound(round_id, players)


@pytest.fixture(params=["classic", "duel"])
def live_round(request: pytest.FixtureRequest) -> LiveRound:
    live: LiveRound = request.getfixturevalue(f"{request.param}_round")
    expected = ["5S"] if request.param == "classic" else ["5S", "KH"]
    assert live.cards == expected, live.cards
    assert Round.objects.get(id=live.round_id).status == "open"
    return live


def _clean(body: str, *echoed: str) -> str:
    """The page without its random CSRF tokens and without the search term it echoes."""
    body = re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", body)
    body = re.sub(r'"csrfToken": *"[^"]*"', "", body)
    for term in echoed:
        body = body.replace(f'value="{term}"', "").replace(f"q={term}", "")
    return body


def _get(client: Client, url: str, params: dict[str, str] | None = None) -> tuple[int, str]:
    response = client.get(url, params or {})
    if getattr(response, "streaming", False):
        content = b"".join(response.streaming_content)  # type: ignore[attr-defined]
    else:
        content = response.content
    return response.status_code, content.decode()


def pages(client: Client, live: LiveRound) -> dict[str, tuple[int, str, list[str]]]:
    """Every page that can show the round's event data as this client sees it, with the
    hidden cards that page would show once the round ended."""
    today = datetime.now(UTC).date().isoformat()
    urls = {
        "event list": (reverse(CHANGELIST), {}),
        "event search by round": (reverse(CHANGELIST), {"q": live.round_id}),
        "review page": (reverse("admin:round_review", args=[live.round_id]), {}),
        "export": ("/api/audit/export", {"since": today, "until": today}),
        "proof": (f"/api/fairness/rounds/{live.round_id}", {}),
    }
    out = {}
    for name, (url, params) in urls.items():
        status, body = _get(client, url, params)
        out[name] = (status, _clean(body), live.cards)
    for event in live.hidden:
        change = reverse("admin:eventstore_storedevent_change", args=[event.pk])
        status, body = _get(client, change)
        out[f"event {event.version} change page"] = (status, _clean(body), [event.data["card"]])
    for card in live.cards:
        status, body = _get(client, reverse(CHANGELIST), {"q": card})
        out[f"event search by {card}"] = (status, _clean(body, card), [card])
    return out


def _search_hits(client: Client, term: str) -> set[int]:
    response = client.get(reverse(CHANGELIST), {"q": term})
    return {e.pk for e in response.context["cl"].result_list}


@pytest.mark.parametrize("how", ["played", "void"])
@pytest.mark.parametrize("role", STAFF_ROLES)
def test_hidden_cards_show_on_no_staff_page_until_the_round_ends(
    role: str, how: str, live_round: LiveRound, staff: dict[str, Any]
) -> None:
    client = login(staff[role])
    live = pages(client, live_round)
    for name, (status, body, _) in live.items():
        if name == "export":
            assert status == (200 if role in EXPORTERS else 403), name
        elif name == "proof":
            assert status in (404, 409), (name, status)  # published once the round ended
        else:
            assert status == 200, (name, status)
        for card in live_round.cards:
            assert card not in body, f"{role} sees hidden {card} on the {name}"
    # The pages show the round, with the hidden cards masked where they would be.
    for name in ("event list", "event search by round", "review page"):
        assert live_round.round_id in live[name][1] and HIDDEN_CARD in live[name][1], name
    for event in live_round.hidden:
        change = live[f"event {event.version} change page"][1]
        assert HIDDEN_CARD in change and f"&quot;position&quot;: {event.data['position']}" in change
    for card, event in zip(live_round.cards, live_round.hidden, strict=True):
        assert event.pk not in _search_hits(client, card)

    live_round.finish(how)
    ended = pages(client, live_round)
    for name, (status, body, cards) in ended.items():
        if name == "export" and role not in EXPORTERS:
            assert status == 403
            continue
        assert status == 200, (name, status)
        for card in cards:
            assert card in body, f"{role} does not see {card} on the {name} once the round ended"
    for card, event in zip(live_round.cards, live_round.hidden, strict=True):
        assert event.pk in _search_hits(client, card)


def test_every_card_string_of_a_live_round_is_unique_to_its_position(live_round: LiveRound) -> None:
    """What makes the absence on a page meaningful: the hidden card's string belongs to it."""
    dealt = [
        e.data["card"]
        for e in StoredEvent.objects.filter(stream_id=live_round.round_id)
        if e.type in ("DealerCardDealt", "PlayerCardDealt")
    ]
    for card in live_round.cards:
        assert dealt.count(card) == 1


def test_a_by_name_grant_of_view_hole_card_shows_them_on_the_event_pages(
    live_round: LiveRound, staff: dict[str, Any]
) -> None:
    """The one exception the review page already had, applied on the event pages too."""
    manager = staff["manager"]
    client = login(manager)
    change = reverse("admin:eventstore_storedevent_change", args=[live_round.hidden[0].pk])
    assert live_round.cards[0] not in _clean(client.get(change).content.decode())
    manager.user_permissions.add(Permission.objects.get(codename="view_hole_card"))
    page = _clean(client.get(change).content.decode())
    assert live_round.cards[0] in page
    assert live_round.hidden[0].pk in _search_hits(client, live_round.cards[0])


def test_a_superuser_is_not_a_grant(live_round: LiveRound, staff: dict[str, Any]) -> None:
    client = login(staff["superuser"])
    page = _clean(
        client.get(reverse("admin:round_review", args=[live_round.round_id])).content.decode()
    )
    assert "hidden while the round is open" in page
    for card in live_round.cards:
        assert card not in page


def test_the_event_change_page_is_read_only(live_round: LiveRound, staff: dict[str, Any]) -> None:
    event = live_round.hidden[0]
    change = reverse("admin:eventstore_storedevent_change", args=[event.pk])
    for role in STAFF_ROLES:
        client = login(staff[role])
        page = client.get(change).content.decode()
        assert 'name="_save"' not in page and "<textarea" not in page
        response = client.post(change, {"data": '{"card": "AS"}', "type": "Tampered"})
        assert response.status_code == 403
    assert StoredEvent.objects.get(pk=event.pk).data == event.data
