"""Every open table that has no usable seed chain gets its first one, terminal published.

Tables now get their first chain when they are created (`casino.tables.table_add`), and a
round never creates one: this gives the tables created before that change theirs, so each
one's next commitment is public (GET /api/fairness/commitment) before its next round opens.
A data migration rather than a startup or beat step: it runs once, in the deploy's
`migrate`, before the new code serves a request, so there is no window in which an open
table has no commitment. On a new database it finds no table and does nothing.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import migrations

from fairness.chain import DEFAULT_LENGTH, create_chain


def first_chains(apps: Any, schema_editor: Any) -> None:
    from casino.eventstore.store import NewEvent, append
    from fairness.seedcrypto import encrypt_secret

    Table = apps.get_model("casino", "Table")
    SeedChain = apps.get_model("fairness", "SeedChain")
    alias = schema_editor.connection.alias
    with_chain = set(
        SeedChain.objects.using(alias)
        .exclude(status="exhausted")
        .values_list("table_id", flat=True)
    )
    length = getattr(settings, "FAIRNESS_CHAIN_LENGTH", DEFAULT_LENGTH)
    open_tables = Table.objects.using(alias).filter(status="open").order_by("pk")
    for pk in open_tables.values_list("pk", flat=True):
        table_id = str(pk)
        if table_id in with_chain:
            continue
        chain = create_chain(length)
        row = SeedChain.objects.using(alias).create(
            table_id=table_id,
            length=length,
            terminal=chain.terminal,
            head_encrypted=encrypt_secret(chain.head),
            status="ready",
        )
        append(  # the terminal's event, as fairness.services._publish_terminal writes it
            stream_id=f"seedchain-{row.pk}",
            expected_version=0,
            events=[
                NewEvent(
                    "SeedChainCreated",
                    {
                        "chain_id": str(row.pk),
                        "table_id": table_id,
                        "length": length,
                        "terminal": chain.terminal,
                    },
                )
            ],
            using=alias,
        )


class Migration(migrations.Migration):
    atomic = True

    dependencies = [
        ("fairness", "0001_initial"),
        ("casino", "0002_round_open_by_table"),
        ("eventstore", "0002_append_only_triggers"),
    ]

    operations = [migrations.RunPython(first_chains, migrations.RunPython.noop, elidable=True)]
