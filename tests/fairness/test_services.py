"""Seed chains, client seeds, signing keys and proofs through the services (database side)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from cryptography.fernet import Fernet
from django.db import connection, transaction
from django.test import override_settings
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from casino.eventstore.models import StoredEvent
from casino.platform.errors import ApplicationError, ConflictError
from fairness import services
from fairness.chain import hash_seed, seed_at, verify_position, verify_seed
from fairness.models import ClientSeed, SeedChain, SigningKey
from fairness.seedcrypto import decrypt_secret
from fairness.verify import KeyRing, load_engine_replay, verify_lines
from tests.fairness.factories import round_finish, round_open, round_play, user_create

pytestmark = pytest.mark.django_db


def issue(table_id: str = "t1") -> services.IssuedSeed:
    with transaction.atomic():
        return services.seed_issue(table_id=table_id)


def reveal(issued: services.IssuedSeed) -> str:
    with transaction.atomic():
        return services.seed_reveal(chain_id=issued.chain_id, nonce=issued.nonce)


def test_a_new_chain_publishes_its_terminal_as_an_event() -> None:
    chain = services.chain_create(table_id="t1", length=50)
    assert chain.status == "ready" and chain.next_index == 1
    event = StoredEvent.objects.get(stream_id=f"seedchain-{chain.pk}")
    assert event.type == "SeedChainCreated"
    assert event.data == {"chain_id": str(chain.pk), "table_id": "t1", "length": 50,
                          "terminal": chain.terminal}  # fmt: skip
    head = decrypt_secret(chain.head_encrypted)
    assert head not in chain.head_encrypted
    assert verify_position(head, 50, chain.terminal)


def test_seeds_are_handed_out_in_order_and_each_reveal_opens_the_next() -> None:
    services.chain_create(table_id="t1", length=20)
    first = issue()
    assert (first.nonce, first.commitment) == (1, first.chain.terminal)
    assert verify_seed(first.server_seed, first.commitment)
    with pytest.raises(ConflictError) as refused:
        issue()
    assert refused.value.code == "previous_round_open"
    assert reveal(first) == first.server_seed
    second = issue()
    assert second.nonce == 2 and second.commitment == first.server_seed
    assert verify_position(second.server_seed, 2, first.chain.terminal)
    assert services.server_seed_for(chain_id=second.chain_id, nonce=2) == second.server_seed


def test_a_table_without_a_chain_is_refused_and_no_chain_is_made_for_its_round() -> None:
    with pytest.raises(ConflictError) as refused:
        issue("fresh")
    assert refused.value.code == "no_chain" and refused.value.extra == {"table_id": "fresh"}
    assert not SeedChain.objects.filter(table_id="fresh").exists()
    assert not StoredEvent.objects.filter(type="SeedChainCreated").exists()


def test_chain_create_joins_the_callers_transaction() -> None:
    with pytest.raises(RuntimeError), transaction.atomic():
        chain = services.chain_create(table_id="t-rollback", length=5)
        raise RuntimeError("the table's creation failed")
    assert not SeedChain.objects.filter(pk=chain.pk).exists()
    assert not StoredEvent.objects.filter(stream_id=f"seedchain-{chain.pk}").exists()


@pytest.mark.parametrize(("length", "refill_at"), [(2, 0), (3, 0), (3, 1), (3, 1000), (5, 2)])
def test_the_next_chain_is_published_before_the_last_seed_is_issued(
    monkeypatch: pytest.MonkeyPatch, length: int, refill_at: int
) -> None:
    monkeypatch.setattr(services, "REFILL_AT", refill_at)
    monkeypatch.setattr(services, "CHAIN_LENGTH", length)
    first = services.chain_create(table_id="t-roll", length=length)
    for k in range(1, length):
        reveal(issue("t-roll"))
        assert SeedChain.objects.get(pk=first.pk).next_index == k + 1
    # The chain's last seed is next: the chain after it exists already, terminal published.
    (following,) = SeedChain.objects.filter(table_id="t-roll", status="ready")
    assert StoredEvent.objects.get(stream_id=f"seedchain-{following.pk}").data["terminal"] == (
        following.terminal
    )
    last = issue("t-roll")
    assert (last.chain.pk, last.nonce) == (first.pk, length)
    reveal(last)
    assert services.next_commitment(table_id="t-roll") == {
        "table_id": "t-roll", "chain_id": str(following.pk), "nonce": 1,
        "commitment": following.terminal, "terminal": following.terminal,
        "chain_length": length,
    }  # fmt: skip
    after = issue("t-roll")
    assert (after.chain.pk, after.nonce, after.commitment) == (following.pk, 1, following.terminal)


def test_seed_issue_needs_the_callers_transaction() -> None:
    connection.in_atomic_block  # noqa: B018 - pytest-django wraps the test in one
    with pytest.raises(transaction.TransactionManagementError):
        _outside_atomic(services.seed_issue, table_id="t1")


def _outside_atomic(function: Any, **kwargs: Any) -> Any:
    saved = connection.in_atomic_block
    connection.in_atomic_block = False
    try:
        return function(**kwargs)
    finally:
        connection.in_atomic_block = saved


def test_a_new_chain_is_prepared_before_the_current_runs_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(services, "REFILL_AT", 2)
    monkeypatch.setattr(services, "CHAIN_LENGTH", 4)
    services.chain_create(table_id="t1", length=4)
    seeds = []
    for _ in range(4):
        issued = issue()
        seeds.append(issued)
        reveal(issued)
    chains = list(SeedChain.objects.filter(table_id="t1").order_by("id"))
    assert [c.status for c in chains] == ["exhausted", "ready"]
    assert SeedChain.objects.filter(table_id="t1", status="ready").count() == 1
    following = issue()  # the prepared chain takes over; its first commitment is its terminal
    assert following.chain.pk == chains[1].pk and following.nonce == 1
    assert following.commitment == chains[1].terminal
    assert [s.nonce for s in seeds] == [1, 2, 3, 4]


def test_the_refill_task_prepares_chains_for_low_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    from fairness.tasks import chains_refill

    monkeypatch.setattr(services, "REFILL_AT", 0)  # seed_issue itself prepares nothing yet
    monkeypatch.setattr(services, "CHAIN_LENGTH", 8)
    services.chain_create(table_id="low", length=6)
    services.chain_create(table_id="high", length=8)
    issue("low")
    issue("high")
    monkeypatch.setattr(services, "REFILL_AT", 5)  # low now has 5 left, high 7
    assert chains_refill.apply().get() == {"prepared": 1}
    assert SeedChain.objects.filter(table_id="low", status="ready").count() == 1
    assert SeedChain.objects.filter(table_id="high", status="ready").count() == 0


def test_the_database_never_holds_an_unrevealed_seed_in_clear() -> None:
    services.chain_create(table_id="t1", length=300)
    issued = issue()
    head = decrypt_secret(issued.chain.head_encrypted)
    # The head, the issued seed and every later seed are secret until their rounds end.
    unrevealed = {head, issued.server_seed} | {seed_at(head, 300, k) for k in (2, 150, 299)}
    dump = _raw_dump()
    for secret in unrevealed:
        assert secret not in dump
    assert issued.chain.terminal in dump  # the scan does see public values
    reveal(issued)
    assert head not in _raw_dump()


def _raw_dump() -> str:
    """Every row of every table, as text, read with raw SQL."""
    rows = []
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names():
            cursor.execute(f'SELECT * FROM "{table}"')
            rows.extend(repr(row) for row in cursor.fetchall())
    return "\n".join(rows)


def test_rotating_the_seed_key_keeps_every_chain_readable() -> None:
    chain = services.chain_create(table_id="t1", length=10)
    head = decrypt_secret(chain.head_encrypted)
    new_key = Fernet.generate_key().decode()
    from django.conf import settings

    with override_settings(SEED_ENCRYPTION_KEYS=[new_key, *settings.SEED_ENCRYPTION_KEYS]):
        assert services.seed_keys_rotate() == 1
    chain.refresh_from_db()
    with override_settings(SEED_ENCRYPTION_KEYS=[new_key]):
        assert decrypt_secret(chain.head_encrypted) == head
    other = [Fernet.generate_key().decode()]
    with override_settings(SEED_ENCRYPTION_KEYS=other), pytest.raises(ApplicationError) as failed:
        decrypt_secret(chain.head_encrypted)
    assert failed.value.code == "seed_key_mismatch"


def test_client_seeds_default_to_random_and_change_between_rounds() -> None:
    user = user_create()
    first = services.client_seed_get(user=user)
    assert 1 <= len(first) <= 64 and services.client_seed_get(user=user) == first
    assert services.client_seed_get(user=user_create()) != first
    services.client_seed_set(user=user, seed="my.own-Seed_1")
    assert ClientSeed.objects.get(user=user).seed == "my.own-Seed_1"


@pytest.mark.parametrize("bad", ["", "x" * 65, "has space", "pipe|d", "ünï", "semi;colon"])
def test_bad_client_seeds_are_refused(bad: str) -> None:
    with pytest.raises(ApplicationError) as refused:
        services.client_seed_set(user=user_create(), seed=bad)
    assert refused.value.code == "invalid_client_seed" and refused.value.status_code == 400


def test_a_client_seed_cannot_change_during_a_round(monkeypatch: pytest.MonkeyPatch) -> None:
    user = user_create()
    before = services.client_seed_get(user=user)
    monkeypatch.setattr(services, "_round_in_progress", lambda u: u.pk == user.pk)
    with pytest.raises(ConflictError) as refused:
        services.client_seed_set(user=user, seed="new")
    assert refused.value.code == "round_in_progress"
    assert services.client_seed_get(user=user) == before
    services.register_round_in_progress_check(lambda u: False)
    assert services.client_seed_set(user=user, seed="new").seed == "new"


def test_a_finished_round_gets_a_signed_proof_that_verifies() -> None:
    proofs = [round_play(table_id="t9", round_id=f"round-{n}", client_seeds=["alice", "bob"])
              for n in range(3)]  # fmt: skip
    lines = [p.bundle_line for p in proofs]
    reports = list(verify_lines(lines, KeyRing(), load_engine_replay()))
    assert [r.ok for r in reports] == [True, True, True], [r.failures for r in reports]
    assert all(r.replayed for r in reports)
    assert [p.nonce for p in proofs] == [1, 2, 3]
    assert proofs[1].receipt["commitment"] == proofs[0].receipt["server_seed"]
    assert services.round_proof_create(round_id="round-0", events=[]) == proofs[0]  # idempotent


def test_a_first_proof_is_written_without_a_lookup_and_never_twice() -> None:
    from django.db import IntegrityError, connection, transaction
    from django.test.utils import CaptureQueriesContext

    proof = round_play(table_id="t8", round_id="r-first", client_seeds=["alice"])
    stored = [
        {**e.stored_body(), "hash": e.hash}
        for e in StoredEvent.objects.filter(stream_id="r-first").order_by("version")
    ]
    proof.delete()
    with CaptureQueriesContext(connection) as queries:
        again = services.round_proof_create(round_id="r-first", events=stored, first=True)
    assert not any("SELECT" in q["sql"] and "fairness_roundproof" in q["sql"] for q in queries)
    assert again.bundle_line == proof.bundle_line  # the same stream, the same signed proof
    with pytest.raises(IntegrityError), transaction.atomic():  # "first" with a proof there
        services.round_proof_create(round_id="r-first", events=stored, first=True)
    assert services.round_proof_create(round_id="r-first", events=stored) == again


def test_a_proof_needs_the_finished_round() -> None:
    opened = round_open(table_id="t1", round_id="r-open", client_seeds=["alice"])
    stored = [
        {**e.stored_body(), "hash": e.hash} for e in StoredEvent.objects.filter(stream_id="r-open")
    ]
    with pytest.raises(ApplicationError) as refused:
        services.round_proof_create(round_id="r-open", events=stored)
    assert refused.value.code == "round_not_finished"
    assert round_finish(round_id="r-open", opened=opened).round_id == "r-open"


def test_signing_keys_stay_listed_after_rotation() -> None:
    from fairness.selectors import signing_keys

    round_play(table_id="t1", round_id="r-old-key", client_seeds=["alice"])
    old = SigningKey.objects.get()
    with override_settings(RECEIPT_SIGNING_KEY="ab" * 32):
        proof = round_play(table_id="t1", round_id="r-new-key", client_seeds=["alice"])
        listed = {k["key_id"]: k["current"] for k in signing_keys()}
    assert proof.key_id != old.key_id
    assert listed == {old.key_id: False, proof.key_id: True}
    assert hash_seed(proof.receipt["server_seed"]) == proof.receipt["commitment"]


def test_the_rotation_command_reports_what_it_did() -> None:
    from io import StringIO

    from django.core.management import call_command

    services.chain_create(table_id="t1", length=5)
    out = StringIO()
    call_command("fairness_rotate_seed_keys", stdout=out)
    assert out.getvalue().strip() == "re-encrypted 1 chain head(s) under the newest key"


def test_the_admin_lists_chains_without_their_heads() -> None:
    from django.contrib.auth import get_user_model
    from django.test import Client

    chain = services.chain_create(table_id="t-admin", length=5)
    staff = get_user_model().objects.create_superuser(username="boss")
    client = Client()
    client.force_login(staff)
    page = client.get(f"/admin/fairness/seedchain/{chain.pk}/change/")
    assert page.status_code == 200
    assert chain.terminal in page.content.decode()
    assert chain.head_encrypted not in page.content.decode()


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.sampled_from(["round", "refill", "round", "round"]), min_size=1, max_size=14))
def test_any_sequence_of_rounds_and_refills_keeps_the_chain_rules(
    monkeypatch: pytest.MonkeyPatch, steps: list[str]
) -> None:
    from fairness.tasks import chains_refill

    monkeypatch.setattr(services, "REFILL_AT", 1)
    monkeypatch.setattr(services, "CHAIN_LENGTH", 3)
    table = f"prop-{uuid.uuid4().hex[:8]}"
    services.chain_create(table_id=table, length=3)  # the table's first chain, at its creation
    previous: dict[int, str] = {}  # chain pk -> last revealed seed
    for step in steps:
        if step == "refill":
            chains_refill.apply()
            continue
        served = services.next_commitment(table_id=table)  # public before the round opens
        issued = issue(table)
        chain = issued.chain
        assert served is not None
        assert (served["chain_id"], served["nonce"]) == (issued.chain_id, issued.nonce)
        assert served["commitment"] == issued.commitment
        expected_commitment = previous.get(chain.pk, chain.terminal)
        assert issued.commitment == expected_commitment
        assert verify_position(issued.server_seed, issued.nonce, chain.terminal)
        assert reveal(issued) == issued.server_seed
        previous[chain.pk] = issued.server_seed
        assert SeedChain.objects.filter(table_id=table, status="active").count() <= 1
        assert SeedChain.objects.filter(table_id=table, status="ready").count() <= 1
    rounds = steps.count("round")
    chains = SeedChain.objects.filter(table_id=table)
    assert sum(c.next_index - 1 for c in chains) == rounds


@pytest.mark.django_db(transaction=True)
def test_the_signing_key_row_is_remembered_only_once_committed_and_per_key() -> None:
    from django.conf import settings as django_settings
    from django.test.utils import CaptureQueriesContext

    services._forget_keys()
    with transaction.atomic():
        current = services.signing_key_current()
        assert services._recorded_keys == {}  # not before its transaction commits
    assert services._recorded_keys == {django_settings.RECEIPT_SIGNING_KEY: current}
    with CaptureQueriesContext(connection) as queries:
        assert services.signing_key_current() == current
    assert len(queries) == 0

    with override_settings(RECEIPT_SIGNING_KEY="ab" * 32):
        with pytest.raises(RuntimeError), transaction.atomic():
            services.signing_key_current()
            raise RuntimeError("the command failed")
        assert "ab" * 32 not in services._recorded_keys  # its row rolled back
        assert list(SigningKey.objects.values_list("key_id", flat=True)) == [current.key_id]
        rotated = services.signing_key_current()  # autocommit: recorded and remembered
        assert rotated.key_id != current.key_id
        assert services._recorded_keys["ab" * 32] == rotated
    assert set(SigningKey.objects.values_list("key_id", flat=True)) == {
        current.key_id,
        rotated.key_id,
    }
    services._forget_keys()
