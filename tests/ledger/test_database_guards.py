"""What the database enforces by itself: append-only journal, balanced entries, CHECKs."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, IntegrityError, connection, transaction

from ledger import services
from ledger.models import AccountBalance, JournalEntry, Posting
from tests.ledger.factories import fund, make_user

USDC = 1_000_000


def _journal_with_one_entry() -> JournalEntry:
    user = make_user()
    fund(user, 5 * USDC)
    return JournalEntry.objects.filter(postings__account__owner=user).get()


@pytest.mark.django_db
@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE ledger_journalentry SET kind = 'bet' WHERE id = %s",
        "DELETE FROM ledger_journalentry WHERE id = %s",
        "UPDATE ledger_posting SET amount = amount + 1 WHERE entry_id = %s",
        "DELETE FROM ledger_posting WHERE entry_id = %s",
    ],
)
def test_raw_update_and_delete_fail(sql: str) -> None:
    entry = _journal_with_one_entry()
    with (
        pytest.raises(DatabaseError, match="append-only"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(sql, [entry.pk])
    assert Posting.objects.filter(entry=entry).count() == 2
    assert sorted(Posting.objects.filter(entry=entry).values_list("amount", flat=True)) == [
        -5 * USDC,
        5 * USDC,
    ]


@pytest.mark.django_db
def test_orm_update_and_delete_fail_too() -> None:
    entry = _journal_with_one_entry()
    with pytest.raises(DatabaseError), transaction.atomic():
        JournalEntry.objects.filter(pk=entry.pk).update(reference="forged")
    with pytest.raises(DatabaseError), transaction.atomic():
        Posting.objects.filter(entry=entry).delete()
    entry.refresh_from_db()
    assert entry.reference.startswith("deposit:")


@pytest.mark.django_db
@pytest.mark.parametrize("may_go_negative", [False, True])
def test_player_balance_cannot_go_negative_in_the_database(may_go_negative: bool) -> None:
    user = make_user()
    fund(user, USDC)
    row = AccountBalance.objects.get(account__key=f"player_available:{user.pk}")
    with pytest.raises(IntegrityError), transaction.atomic():
        AccountBalance.objects.filter(pk=row.pk).update(balance=-1, may_go_negative=may_go_negative)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_truncate_fails_on_postgres() -> None:
    _journal_with_one_entry()
    for table in ("ledger_posting", "ledger_journalentry"):
        with (
            pytest.raises(DatabaseError, match="append-only"),
            transaction.atomic(),
            connection.cursor() as cursor,
        ):
            cursor.execute(f"TRUNCATE {table} CASCADE")


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_unbalanced_entry_is_rejected_at_commit() -> None:
    user = make_user()
    fund(user, 5 * USDC)
    account_id = AccountBalance.objects.get(account__key=f"player_available:{user.pk}").pk
    before = JournalEntry.objects.count()
    with pytest.raises(IntegrityError, match="unbalanced"), transaction.atomic():
        entry = JournalEntry.objects.create(
            kind="deposit", reference="forged", idempotency_key="forged", fingerprint="x"
        )
        Posting.objects.create(entry=entry, account_id=account_id, amount=USDC)
        Posting.objects.create(entry=entry, account_id=account_id, amount=-USDC + 1)
    with pytest.raises(IntegrityError, match="unbalanced"), transaction.atomic():
        JournalEntry.objects.create(
            kind="deposit", reference="empty", idempotency_key="empty", fingerprint="x"
        )
    # A posting added later to an old, balanced entry unbalances it: also rejected.
    old = JournalEntry.objects.order_by("id").last()
    assert old is not None
    with pytest.raises(IntegrityError, match="unbalanced"), transaction.atomic():
        Posting.objects.create(entry=old, account_id=account_id, amount=1)
    assert JournalEntry.objects.count() == before


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_services_commit_under_the_deferred_check() -> None:
    user = make_user()
    fund(user, 5 * USDC)
    services.round_stake(round_ref="deferred", user=user, amount_micro=USDC, idempotency_key="b")
    services.round_settle(
        round_ref="deferred", returns=[(user, 2 * USDC)], house_banked=True, idempotency_key="s"
    )
    assert (
        AccountBalance.objects.get(account__key=f"player_available:{user.pk}").balance == 6 * USDC
    )
