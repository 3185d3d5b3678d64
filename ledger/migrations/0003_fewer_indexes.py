"""Drop two indexes no query uses (cheaper inserts on the hot path).

SQLite rebuilds a table to alter it, which silently drops its triggers: the append-only
triggers are put back at the end. Any later migration that alters ledger_journalentry or
ledger_posting on SQLite must do the same (see docs/ledger.md).
"""

import importlib

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def reinstall_sqlite_triggers(apps, schema_editor):
    if schema_editor.connection.vendor != "sqlite":
        return
    guards = importlib.import_module("ledger.migrations.0002_database_guarantees")
    for sql in guards.SQLITE_REVERSE + guards.SQLITE_FORWARD:
        schema_editor.execute(sql, params=None)


class Migration(migrations.Migration):

    dependencies = [
        ('ledger', '0002_database_guarantees'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterField(
            model_name='journalentry',
            name='created_by',
            field=models.ForeignKey(blank=True, db_index=False, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL),
        ),
        migrations.AlterField(
            model_name='posting',
            name='account',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='postings', to='ledger.account'),
        ),
        migrations.RunPython(reinstall_sqlite_triggers, reinstall_sqlite_triggers),
    ]
