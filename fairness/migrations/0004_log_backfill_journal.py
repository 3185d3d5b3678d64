"""The log's state row (size 0), and a journal_entry leaf queued for every journal entry
written before the transparency log existed, in id order, so the log and its journal chain
cover the whole journal (the sequencer gives them their indices on its next pass)."""

from django.db import migrations
from django.utils import timezone


def backfill(apps, schema_editor):  # type: ignore[no-untyped-def]
    from fairness.transparency import entry_time, journal_entry_hash  # noqa: PLC0415 - see above
    from fairness.canonical import canonical_text  # noqa: PLC0415 - the leaves' own encoding

    entries = apps.get_model("ledger", "JournalEntry")
    postings = apps.get_model("ledger", "Posting")
    pending = apps.get_model("fairness", "LogPending")
    apps.get_model("fairness", "LogState").objects.get_or_create(id=1)
    now = timezone.now()
    last = 0
    while True:
        rows = list(entries.objects.filter(id__gt=last).order_by("id")[:2000])
        if not rows:
            return
        legs: dict[int, dict[str, int]] = {}
        for entry_id, key, amount in postings.objects.filter(
            entry_id__gte=rows[0].id, entry_id__lte=rows[-1].id
        ).values_list("entry_id", "account__key", "amount"):
            legs.setdefault(entry_id, {})[key] = amount
        queued = []
        for entry in rows:
            digest = journal_entry_hash(
                entry_id=entry.id, kind=entry.kind, reference=entry.reference,
                created_at=entry.created_at, postings=legs.get(entry.id, {}),
            )  # fmt: skip
            leaf = {
                "kind": "journal_entry",
                "entry_id": entry.id,
                "entry_kind": entry.kind,
                "created_at": entry_time(entry.created_at),
                "sha256": digest,
            }
            queued.append(
                pending(kind="journal_entry", ref=str(entry.id), data=canonical_text(leaf),
                        queued_at=now)
            )  # fmt: skip
        pending.objects.bulk_create(queued)
        last = rows[-1].id


class Migration(migrations.Migration):
    dependencies = [
        ("fairness", "0003_transparency_log"),
        ("ledger", "0004_withdrawal_destination"),
    ]

    operations = [migrations.RunPython(backfill, migrations.RunPython.noop)]
