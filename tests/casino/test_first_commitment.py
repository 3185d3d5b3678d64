"""The first commitment is public before anyone can bet (fairness-v1 section 1).

Every table is created with its first seed chain, in the same transaction, whichever way it
is created; a round only ever uses a chain whose terminal was published earlier; and the
next chain is published before the current chain's last seed is issued. So the commitment
a round opens with could always be read (GET /api/fairness/commitment) before it opened.
"""

from __future__ import annotations

import importlib
import random
from io import StringIO
from typing import Any

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection
from django.test import Client
from rest_framework.test import APIClient

from casino.dashboard.tables import table_new_versions
from casino.engine.rules import RULESETS
from casino.eventstore.models import StoredEvent
from casino.models import Round, Table, TableStatus
from casino.platform.errors import ConflictError
from casino.rounds.services import round_open
from casino.tables import services as tables
from casino.tables.play import play_round
from fairness import services as fairness_services
from fairness.models import SeedChain
from tests.casino.conftest import make_player

pytestmark = pytest.mark.django_db


def commitment(table_id: Any) -> dict[str, Any]:
    """What anyone reads before betting: 200 and the next round's commitment."""
    response = APIClient().get("/api/fairness/commitment", {"table": str(table_id)})
    assert response.status_code == 200, response.content
    body: dict[str, Any] = response.json()
    return body


def published(chain_id: Any) -> StoredEvent:
    """The chain's SeedChainCreated event (its terminal, public)."""
    return StoredEvent.objects.get(stream_id=f"seedchain-{chain_id}", type="SeedChainCreated")


def assert_fresh(table: Table) -> dict[str, Any]:
    """A table just created: one prepared chain, its terminal published, served at once."""
    (chain,) = SeedChain.objects.filter(table_id=str(table.pk))
    assert chain.status == "ready" and chain.next_index == 1
    assert published(chain.pk).data == {
        "chain_id": str(chain.pk), "table_id": str(table.pk), "length": chain.length,
        "terminal": chain.terminal,
    }  # fmt: skip
    served = commitment(table.pk)
    assert served == {
        "table_id": str(table.pk), "chain_id": str(chain.pk), "nonce": 1,
        "commitment": chain.terminal, "terminal": chain.terminal, "chain_length": chain.length,
    }  # fmt: skip
    return served


def opened_with(round_id: str) -> tuple[str, int, str]:
    event = StoredEvent.objects.filter(stream_id=round_id).order_by("version").first()
    assert event is not None and event.type == "RoundOpened"
    return event.data["chain_id"], event.data["nonce"], event.data["commitment"]


@pytest.mark.parametrize("ruleset", list(RULESETS))
def test_table_create_gives_every_rule_set_a_commitment_at_once(ruleset: str) -> None:
    rules = RULESETS[ruleset]
    table = tables.table_create(
        name=f"new {ruleset}",
        ruleset=ruleset,
        min_bet=rules.default_min_bet,
        max_bet=min(rules.default_max_bet, rules.max_table_bet),
    )
    assert_fresh(table)


def test_a_table_that_fails_to_be_created_leaves_no_chain() -> None:
    with pytest.raises(ZeroDivisionError), pytest.MonkeyPatch.context() as patch:
        patch.setattr(fairness_services, "_publish_terminal", lambda chain: 1 / 0)
        tables.table_create(name="broken", ruleset="classic", min_bet=10**6, max_bet=10**8)
    assert not Table.objects.filter(name="broken").exists()
    assert not SeedChain.objects.exists()


def test_the_personal_table_api_answers_the_commitment_before_the_first_deal() -> None:
    player = make_player("solo")
    api = APIClient()
    api.force_authenticate(player)
    made = api.post(
        "/api/tables/personal/", {"ruleset": "classic"}, format="json", HTTP_IDEMPOTENCY_KEY="p1"
    )
    assert made.status_code == 200, made.content
    table = Table.objects.get(pk=made.json()["id"])
    served = assert_fresh(table)
    dealt = api.post(
        f"/api/tables/{table.pk}/deal/",
        {"mode": "bet", "bets": ["1.00"]},
        format="json",
        HTTP_IDEMPOTENCY_KEY="d1",
    )
    assert dealt.status_code == 200, dealt.content
    assert opened_with(dealt.json()["round_id"]) == (
        served["chain_id"], served["nonce"], served["commitment"]
    )  # fmt: skip


@pytest.mark.parametrize("ruleset", ["duel", "duel_classic"])
def test_the_staff_table_api_answers_the_commitment_at_once(ruleset: str) -> None:
    staff = get_user_model().objects.create_superuser(username=f"boss-{ruleset}")
    api = APIClient()
    api.force_authenticate(staff)
    made = api.post(
        "/api/staff/tables/",
        {"name": "fresh", "ruleset": ruleset, "max_bet": "500"},
        format="json",
        HTTP_IDEMPOTENCY_KEY="t1",
    )
    assert made.status_code == 201, made.content
    assert_fresh(Table.objects.get(pk=made.json()["id"]))


def test_the_admin_add_form_creates_the_table_with_its_chain() -> None:
    staff = get_user_model().objects.create_superuser(username="admin-boss")
    client = Client()
    client.force_login(staff)
    response = client.post(
        "/admin/casino/table/add/",
        {
            "name": "from admin", "ruleset": "atlantic_city", "min_bet": 1_000_000,
            "max_bet": 100_000_000, "chip_unit": 10_000, "stake": 0, "seats": 1, "owner": "",
        },
    )  # fmt: skip
    assert response.status_code == 302, response.content.decode()[:2000]
    assert_fresh(Table.objects.get(name="from admin"))


def test_a_new_table_version_has_its_commitment_at_once() -> None:
    old = tables.table_create(name="v", ruleset="duel_classic", min_bet=10**6, max_bet=10**8)
    (new,) = table_new_versions(tables=[old]).made
    assert new.version == 2
    assert_fresh(new)


def test_seed_demo_and_demo_tables_have_their_commitment_at_once(settings: Any) -> None:
    settings.DEBUG = True  # seed_demo refuses to run with DEBUG off
    call_command("seed_demo", stdout=StringIO())
    demo = list(Table.objects.filter(owner=None))
    assert sorted(t.ruleset for t in demo) == sorted(RULESETS)
    for table in demo:
        assert_fresh(table)
    call_command("seed_demo", stdout=StringIO())  # idempotent: no second table, no chain
    assert SeedChain.objects.count() == len(RULESETS)


def test_the_migration_gives_existing_open_tables_without_a_chain_their_first_one() -> None:
    migration = importlib.import_module("fairness.migrations.0002_first_chains_for_open_tables")
    # Tables made before tables came with chains: inserted bare, as the old code did.
    bare = Table.objects.create(name="old", ruleset="classic", min_bet=10**6, max_bet=10**8)
    closed = Table.objects.create(
        name="gone", ruleset="classic", min_bet=10**6, max_bet=10**8, status=TableStatus.CLOSED
    )
    served = tables.table_create(name="new", ruleset="classic", min_bet=10**6, max_bet=10**8)
    error = APIClient().get("/api/fairness/commitment", {"table": str(bare.pk)})
    assert error.status_code == 404 and error.json()["error"]["code"] == "unknown_table"

    class Editor:
        pass

    editor = Editor()
    editor.connection = connection  # type: ignore[attr-defined]
    migration.first_chains(apps, editor)
    assert_fresh(bare)
    assert_fresh(served)  # it had its chain: none added
    assert not SeedChain.objects.filter(table_id=str(closed.pk)).exists()
    migration.first_chains(apps, editor)  # again: nothing to do
    assert SeedChain.objects.count() == 2


def test_a_round_never_makes_its_own_chain() -> None:
    bare = Table.objects.create(name="bare", ruleset="classic", min_bet=10**6, max_bet=10**8)
    with pytest.raises(ConflictError) as refused:
        round_open(table=bare, players=[make_player("nobody")])
    assert refused.value.code == "no_chain"
    assert not SeedChain.objects.exists() and not Round.objects.exists()


@pytest.mark.parametrize("ruleset", list(RULESETS))
def test_every_round_opens_with_the_commitment_served_before_it_across_chain_rollovers(
    monkeypatch: pytest.MonkeyPatch, ruleset: str
) -> None:
    monkeypatch.setattr(fairness_services, "CHAIN_LENGTH", 3)
    monkeypatch.setattr(fairness_services, "REFILL_AT", 0)  # the tightest setting there is
    rules = RULESETS[ruleset]
    table = tables.table_create(
        name=f"rollover {ruleset}",
        ruleset=ruleset,
        min_bet=rules.default_min_bet,
        max_bet=min(rules.default_max_bet, rules.max_table_bet),
    )
    seated = max(rules.min_seats, min(2, rules.max_seats))  # shared tables: two players
    players = [make_player(f"{ruleset}-{i}") for i in range(seated)]
    first_served = assert_fresh(table)
    assert first_served["chain_length"] == 3
    rng = random.Random(7)
    seen: list[tuple[str, int]] = []
    for number in range(1, 8):  # chains 1, 2 and 3: seeds 1-3, 1-3, 1
        served = commitment(table.pk)
        chain = SeedChain.objects.get(pk=served["chain_id"])
        if served["nonce"] == chain.length:  # its last seed: the next chain is published
            (following,) = SeedChain.objects.filter(table_id=str(table.pk), status="ready")
            assert published(following.pk).data["terminal"] == following.terminal
        result = play_round(table, players, rng)
        assert result.state.finished
        assert opened_with(result.round.id) == (
            served["chain_id"], served["nonce"], served["commitment"]
        )  # fmt: skip
        row = Round.objects.get(pk=result.round.id)
        assert (row.chain_id, row.nonce, row.commitment) == opened_with(result.round.id)
        # The chain and its published terminal came before the round, in the event order too.
        event = published(served["chain_id"])
        opened = StoredEvent.objects.get(stream_id=result.round.id, version=1)
        assert event.position < opened.position
        assert chain.created_at < row.opened_at and event.recorded_at < opened.recorded_at
        if number == 1:
            assert served == first_served
        seen.append((served["chain_id"], served["nonce"]))
    assert [nonce for _, nonce in seen] == [1, 2, 3, 1, 2, 3, 1]
    chains = [chain_id for chain_id, _ in seen]
    assert len(set(chains)) == 3 and chains == sorted(chains, key=int)
    after = commitment(table.pk)  # the third chain goes on: the seed round 7 revealed
    assert (after["chain_id"], after["nonce"]) == (chains[-1], 2)
