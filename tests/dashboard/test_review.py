"""Round review page, voiding, and the review queue flows."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from casino.dashboard import review
from casino.dashboard.models import RoundReview
from casino.engine.commands import PlaceBet, Stand
from casino.eventstore.models import StoredEvent
from casino.models import Round
from casino.rounds import services
from fairness.chain import hash_seed
from ledger.models import JournalEntry
from ledger.selectors import wallet_balances
from ledger.services import withdrawal_request
from tests.dashboard.conftest import (
    HOLE_CARD,
    available,
    finish,
    login,
    make_player,
    make_table,
)

pytestmark = pytest.mark.django_db


def review_url(round_id: str) -> str:
    return reverse("admin:round_review", args=[round_id])


def void_url(round_id: str) -> str:
    return reverse("admin:round_void", args=[round_id])


def without_csrf_tokens(page: str) -> str:
    """The page without its random CSRF tokens (mixed-case letters and digits: a token may
    hold "5C" by chance)."""
    return re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", page)


def test_hole_card_hidden_on_an_open_round_unless_permitted(open_round, staff) -> None:
    round_id, _ = open_round
    page = without_csrf_tokens(login(staff["manager"]).get(review_url(round_id)).content.decode())
    assert "TS" in page and "9H" in page
    assert HOLE_CARD not in page  # neither in the cards table nor in the timeline
    from django.contrib.auth.models import Permission

    staff["manager"].user_permissions.add(Permission.objects.get(codename="view_hole_card"))
    manager = type(staff["manager"]).objects.get(pk=staff["manager"].pk)
    assert HOLE_CARD in login(manager).get(review_url(round_id)).content.decode()


def test_hole_card_shows_once_the_round_is_settled(open_round, staff) -> None:
    round_id, player = open_round
    finish(round_id, player)
    page = login(staff["reviewer"]).get(review_url(round_id)).content.decode()
    assert HOLE_CARD in page
    assert f"/api/fairness/rounds/{round_id}" in page


def test_badges_pass_for_a_fair_settled_round(fair_round, staff) -> None:
    response = login(staff["reviewer"]).get(review_url(fair_round))
    badges = {b.key: b.status for b in response.context["badges"]}
    assert badges == {
        k: "pass" for k in ("hash_chain", "seed", "shoe", "replay", "receipt", "ledger")
    }


def test_stacked_cards_fail_the_shoe_badge(open_round, staff) -> None:
    round_id, player = open_round  # dealt from a stacked shoe, not the committed one
    finish(round_id, player)
    response = login(staff["reviewer"]).get(review_url(round_id))
    badges = {b.key: b.status for b in response.context["badges"]}
    assert badges["shoe"] == "fail" and badges["hash_chain"] == "pass"


def test_badges_fail_when_the_receipt_is_gone(fair_round, staff) -> None:
    from fairness.models import RoundProof

    round_id = fair_round
    RoundProof.objects.filter(round_id=round_id).delete()
    response = login(staff["auditor"]).get(review_url(round_id))
    badges = {b.key: b.status for b in response.context["badges"]}
    assert badges["receipt"] == "fail" and badges["hash_chain"] == "pass"


def test_open_round_badges_wait_for_the_seed(open_round, staff) -> None:
    round_id, _ = open_round
    response = login(staff["reviewer"]).get(review_url(round_id))
    badges = {b.key: b.status for b in response.context["badges"]}
    assert badges["hash_chain"] == badges["ledger"] == badges["replay"] == "pass"
    assert badges["seed"] == badges["shoe"] == badges["receipt"] == "pending"


def test_void_refused_without_the_permission(open_round, staff) -> None:
    round_id, _player = open_round
    for role in ("reviewer", "auditor", "player"):
        client = login(staff[role])
        response = client.post(void_url(round_id), {"reason": "test", "confirm": "on"})
        assert response.status_code in (302, 403), role
        if response.status_code == 302:  # a non-staff user is sent to the admin login
            assert "/login/" in response["Location"]
    assert Round.objects.get(id=round_id).status == "open"
    assert not StoredEvent.objects.filter(stream_id=round_id, type="RoundVoided").exists()


def test_void_needs_reason_and_confirmation(open_round, staff) -> None:
    round_id, _ = open_round
    client = login(staff["manager"])
    assert client.get(void_url(round_id)).status_code == 200
    for data in ({"reason": "dealer error"}, {"reason": "", "confirm": "on"}):
        assert client.post(void_url(round_id), data).status_code == 200  # form shown again
    assert Round.objects.get(id=round_id).status == "open"


def test_manager_void_produces_event_reversal_and_seed(open_round, staff) -> None:
    round_id, player = open_round
    before_bet = available(player) + 10 * 1_000_000
    client = login(staff["manager"])
    response = client.post(void_url(round_id), {"reason": "dealer error", "confirm": "on"})
    assert response.status_code == 302
    voided = StoredEvent.objects.get(stream_id=round_id, type="RoundVoided")
    assert voided.data["reason"] == "dealer error"
    assert "manager" in voided.data["evidence"]
    seed = StoredEvent.objects.get(stream_id=round_id, type="ServerSeedRevealed").data[
        "server_seed"
    ]
    assert hash_seed(seed) == Round.objects.get(id=round_id).commitment
    assert JournalEntry.objects.filter(reference=f"round:{round_id}", kind="void_reversal").exists()
    assert available(player) == before_bet
    action = review.review_events(round_id)[-1]
    assert (action.type, action.data["by"], action.data["reason"]) == (
        "VoidRequested",
        "manager",
        "dealer error",
    )
    assert Round.objects.get(id=round_id).status == "voided"


def test_flag_and_review_flow_records_events_with_who(open_round, staff) -> None:
    round_id, player = open_round
    finish(round_id, player)
    reviewer = login(staff["reviewer"])
    reviewer.post(reverse("admin:round_flag", args=[round_id]), {"reason": "odd timing"})
    row = Round.objects.get(id=round_id)
    assert row.flagged and row.flag_reason == "odd timing"
    queue = reviewer.get(reverse("admin:casino_round_queue"))
    assert round_id in queue.content.decode()
    reviewer.post(reverse("admin:round_reviewed", args=[round_id]), {"notes": "checked the logs"})
    assert not RoundReview.objects.get(round_id=round_id).pending
    assert round_id not in reviewer.get(reverse("admin:casino_round_queue")).content.decode()
    events = review.review_events(round_id)
    assert [(e.type, e.data["by"]) for e in events] == [
        ("RoundFlagged", "reviewer"),
        ("RoundReviewed", "reviewer"),
    ]
    assert events[1].data["notes"] == "checked the logs"
    assert all(e.recorded_at is not None for e in events)


def test_auditor_cannot_flag_or_review(open_round, staff) -> None:
    round_id, _ = open_round
    auditor = login(staff["auditor"])
    assert (
        auditor.post(reverse("admin:round_flag", args=[round_id]), {"reason": "x"}).status_code
        == 403
    )
    assert (
        auditor.post(reverse("admin:round_reviewed", args=[round_id]), {"notes": "x"}).status_code
        == 403
    )
    assert review.review_events(round_id) == []


def test_review_projection_rebuilds_from_events(open_round, staff) -> None:
    round_id, _ = open_round
    review.round_flag(round_id=round_id, reason="first", user=staff["reviewer"])
    review.round_review_mark(round_id=round_id, notes="fine", user=staff["manager"])
    review.round_flag(round_id=round_id, reason="second", user=staff["reviewer"])
    live = RoundReview.objects.get(round_id=round_id)
    RoundReview.objects.all().delete()
    rebuilt = review.project(round_id, review.review_events(round_id))
    assert (rebuilt.pending, rebuilt.reasons, rebuilt.reviewed_by, rebuilt.notes) == (
        live.pending,
        live.reasons,
        live.reviewed_by,
        live.notes,
    )
    assert rebuilt.pending and rebuilt.reasons == ["first", "second"]


def test_mark_reviewed_from_a_stale_tab_keeps_the_void(open_round, staff) -> None:
    """A reviewer's page still shows "Mark reviewed" after a manager voided the round: the
    post is refused with the reason, and the item still says who voided it and why."""
    round_id, _ = open_round
    review.round_flag(round_id=round_id, reason="odd timing", user=staff["reviewer"])
    login(staff["manager"]).post(void_url(round_id), {"reason": "dealer error", "confirm": "on"})
    reviewer = login(staff["reviewer"])
    response = reviewer.post(
        reverse("admin:round_reviewed", args=[round_id]), {"notes": "looked fine"}
    )
    assert response.status_code == 409
    page = response.content.decode()
    assert (
        "Not marked reviewed: this round&#x27;s review item is already closed "
        "(voided by manager)." in page
    )
    row = RoundReview.objects.get(round_id=round_id)
    assert (row.resolution, row.reviewed_by, row.notes) == ("voided", "manager", "dealer error")
    assert [e.type for e in review.review_events(round_id)] == ["RoundFlagged", "VoidRequested"]


def test_mark_reviewed_twice_records_one_review(open_round, staff) -> None:
    round_id, _ = open_round
    review.round_flag(round_id=round_id, reason="odd timing", user=staff["reviewer"])
    url = reverse("admin:round_reviewed", args=[round_id])
    assert login(staff["reviewer"]).post(url, {"notes": "checked"}).status_code == 302
    second = login(staff["manager"]).post(url, {"notes": "me too"})
    assert second.status_code == 409
    assert "already closed (reviewed by reviewer)" in second.content.decode()
    row = RoundReview.objects.get(round_id=round_id)
    assert (row.reviewed_by, row.notes) == ("reviewer", "checked")


def test_a_second_void_from_another_tab_is_refused_in_words(open_round, staff) -> None:
    """Two tabs on the void page: the second submit refunds nothing more, and says why in
    words (it said "already_voided: the round is already void" over the form again)."""
    round_id, player = open_round
    before_bet = available(player) + 10 * 1_000_000
    manager = login(staff["manager"])
    data = {"reason": "dealer error", "confirm": "on"}
    assert manager.post(void_url(round_id), data).status_code == 302
    second = manager.post(void_url(round_id), data)
    assert second.status_code == 409
    page = second.content.decode()
    assert "Not voided: the round is already void." in page
    assert "already_voided" not in page
    assert 'id="already-voided"' in page and 'id="void-form"' not in page
    assert available(player) == before_bet
    assert (
        JournalEntry.objects.filter(reference=f"round:{round_id}", kind="void_reversal").count()
        == 1
    )
    assert 'id="void-form"' not in manager.get(void_url(round_id)).content.decode()


def test_void_of_a_win_already_withdrawn_names_what_the_player_owes(stack_shoe, staff) -> None:
    """alice wins 10 USDC (19 against a dealer bust), asks to withdraw everything, then the
    round is voided: the stake comes back and the payout is reversed exactly, the 10 USDC she
    no longer has go to her receivable, and the manager is told so (before, the message
    spoke of "stakes refunded" only)."""
    stack_shoe(("TH", "6C", "9D", "TS", "8S", "2H", "3D", "8C"))
    alice = make_player("alice")
    round_id = services.round_open(table=make_table(), players=[alice]).round.id
    services.round_command(round_id=round_id, command=PlaceBet(str(alice.pk), (10 * 1_000_000,)))
    services.round_command(round_id=round_id, command=Stand(str(alice.pk)))
    assert available(alice) == 110 * 1_000_000
    withdrawal_request(
        user=alice,
        amount_micro=110 * 1_000_000,
        idempotency_key="all",
        network="base",
        address="0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
    )
    response = login(staff["manager"]).post(
        void_url(round_id), {"reason": "dealer error", "confirm": "on"}, follow=True
    )
    assert (
        "Round voided: 10.00 USDC of stakes refunded, every payout reversed; server seed "
        "revealed; its review-queue item is closed. alice could not pay back 10.00 USDC of "
        "winnings: they now owe it (Receivables)." in response.content.decode()
    )
    assert wallet_balances(user_id=alice.pk) == {
        "player_available": 0,
        "pending_withdrawal": 110 * 1_000_000,
        "receivable": -10 * 1_000_000,
    }
