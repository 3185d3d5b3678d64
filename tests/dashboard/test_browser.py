"""A manager in a real headless Chromium: log in, open a flagged round, see the badges, void it."""

from __future__ import annotations

from typing import Any

import pytest
from django.apps import apps

from casino.dashboard import review
from casino.dashboard.roles import sync_role_groups
from casino.engine.commands import PlaceBet
from casino.engine.rules import USDC
from casino.models import Round
from casino.rounds import services
from tests.chromium import chromium_page
from tests.dashboard.conftest import OPEN_HAND, available, make_player, make_staff, make_table


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_manager_voids_a_flagged_round_in_chromium(live_server: Any, stack_shoe: Any) -> None:
    sync_role_groups(apps)  # a flushed transactional database: make sure the groups are there
    make_staff("manager", password="manager-pw")
    stack_shoe(OPEN_HAND)
    player = make_player("alice")
    funded = available(player)
    round_id = services.round_open(table=make_table(), players=[player]).round.id
    services.round_command(round_id=round_id, command=PlaceBet(str(player.pk), (10 * USDC,)))
    assert available(player) == funded - 10 * USDC
    review.round_flag(round_id=round_id, reason="player complaint")

    with chromium_page() as page:
        drive_the_void(page, live_server.url, round_id)

    assert Round.objects.get(id=round_id).status == "voided"
    assert available(player) == funded
    assert review.review_events(round_id)[-1].data["by"] == "manager"


def drive_the_void(page: Any, base_url: str, round_id: str) -> None:
    page.goto(f"{base_url}/admin/login/?next=/admin/casino/round/queue/")
    page.fill("#id_username", "manager")
    page.fill("#id_password", "manager-pw")
    page.click("input[type=submit]")
    page.wait_for_selector("#queue")
    page.click(f"#queue tr[data-round='{round_id}'] a")  # the link shows the id's first 8
    page.wait_for_selector("#badges")
    statuses = {
        b.get_attribute("data-badge"): b.get_attribute("data-status")
        for b in page.locator("#badges .badge").all()
    }
    assert statuses == {
        "hash_chain": "pass",
        "seed": "pending",
        "shoe": "pending",
        "replay": "pass",
        "receipt": "pending",
        "ledger": "pass",
    }
    assert "player complaint" in page.inner_text("#flag-reason")
    assert "5C" not in page.inner_text("#cards")  # the hole card stays hidden while open

    page.click("#void-link")
    page.fill("#id_reason", "customer complaint upheld")
    page.check("#id_confirm")
    page.click("#void-submit")
    page.wait_for_selector("#round-status")
    assert page.inner_text("#round-status") == "voided"
    assert "5C" in page.inner_text("#cards")  # revealed with the seed
