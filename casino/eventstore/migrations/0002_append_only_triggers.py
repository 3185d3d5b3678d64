"""Make the event table append-only in the database itself.

PostgreSQL: row triggers reject UPDATE and DELETE, a statement trigger rejects TRUNCATE.
SQLite: triggers reject UPDATE and DELETE. Only a superuser can bypass them (see
docs/operations.md; the project's `flush` command does, for test teardown); production roles
also get INSERT/SELECT only (REVOKE).
"""

from django.db import migrations

TABLE = "eventstore_storedevent"

POSTGRES_UP = f"""
CREATE OR REPLACE FUNCTION eventstore_reject_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '{TABLE} is append-only: % rejected', TG_OP
        USING ERRCODE = 'insufficient_privilege',
              HINT = 'Events are immutable: append a correcting event instead.';
END;
$$;
CREATE TRIGGER eventstore_no_update_delete BEFORE UPDATE OR DELETE ON {TABLE}
    FOR EACH ROW EXECUTE FUNCTION eventstore_reject_change();
CREATE TRIGGER eventstore_no_truncate BEFORE TRUNCATE ON {TABLE}
    FOR EACH STATEMENT EXECUTE FUNCTION eventstore_reject_change();
"""

POSTGRES_DOWN = f"""
DROP TRIGGER IF EXISTS eventstore_no_truncate ON {TABLE};
DROP TRIGGER IF EXISTS eventstore_no_update_delete ON {TABLE};
DROP FUNCTION IF EXISTS eventstore_reject_change();
"""

SQLITE_UP = [
    f"""CREATE TRIGGER eventstore_no_update BEFORE UPDATE ON {TABLE}
    BEGIN SELECT RAISE(ABORT, '{TABLE} is append-only: UPDATE rejected'); END""",
    f"""CREATE TRIGGER eventstore_no_delete BEFORE DELETE ON {TABLE}
    BEGIN SELECT RAISE(ABORT, '{TABLE} is append-only: DELETE rejected'); END""",
]

SQLITE_DOWN = [
    "DROP TRIGGER IF EXISTS eventstore_no_update",
    "DROP TRIGGER IF EXISTS eventstore_no_delete",
]


def _run(statements_by_vendor):
    def run(apps, schema_editor):
        statements = statements_by_vendor.get(schema_editor.connection.vendor)
        if statements is None:
            raise RuntimeError(f"no append-only triggers for {schema_editor.connection.vendor}")
        for statement in statements:
            schema_editor.execute(statement, params=None)

    return run


class Migration(migrations.Migration):
    dependencies = [("eventstore", "0001_initial")]

    operations = [
        migrations.RunPython(
            _run({"postgresql": [POSTGRES_UP], "sqlite": SQLITE_UP}),
            _run({"postgresql": [POSTGRES_DOWN], "sqlite": SQLITE_DOWN}),
        )
    ]
