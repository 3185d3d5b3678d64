"""Guarantees the database enforces by itself, whatever code (or person) writes to it.

- Journal entries and postings are append-only: PostgreSQL rejects UPDATE, DELETE and
  TRUNCATE; SQLite rejects UPDATE and DELETE (it has no TRUNCATE).
- PostgreSQL: a DEFERRABLE INITIALLY DEFERRED constraint trigger rejects, at commit, any entry
  whose postings do not sum to zero or that has fewer than two postings.
- CHECK (balance >= 0) for the account types that may not go negative is in 0001.
"""

from django.db import migrations

TABLES = ("ledger_journalentry", "ledger_posting")

POSTGRES_FORWARD = [
    """
    CREATE OR REPLACE FUNCTION ledger_reject_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        RAISE EXCEPTION 'ledger: % on % is not allowed: the journal is append-only', TG_OP, TG_TABLE_NAME
            USING ERRCODE = 'integrity_constraint_violation';
    END $$;
    """,
    """
    CREATE OR REPLACE FUNCTION ledger_check_entry_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
        entry bigint;
        total numeric;
        lines integer;
    BEGIN
        IF TG_TABLE_NAME = 'ledger_posting' THEN entry := NEW.entry_id; ELSE entry := NEW.id; END IF;
        SELECT coalesce(sum(amount), 0), count(*) INTO total, lines
          FROM ledger_posting WHERE entry_id = entry;
        IF total <> 0 OR lines < 2 THEN
            RAISE EXCEPTION 'ledger: journal entry % is unbalanced (sum %, % postings)', entry, total, lines
                USING ERRCODE = 'check_violation';
        END IF;
        RETURN NULL;
    END $$;
    """,
    *[
        stmt
        for table in TABLES
        for stmt in (
            f"CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table} "
            "FOR EACH ROW EXECUTE FUNCTION ledger_reject_change();",
            f"CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table} "
            "FOR EACH STATEMENT EXECUTE FUNCTION ledger_reject_change();",
            f"CREATE CONSTRAINT TRIGGER {table}_balanced AFTER INSERT ON {table} "
            "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ledger_check_entry_balanced();",
        )
    ],
]

POSTGRES_REVERSE = [
    *[
        f"DROP TRIGGER IF EXISTS {table}_{name} ON {table};"
        for table in TABLES
        for name in ("append_only", "no_truncate", "balanced")
    ],
    "DROP FUNCTION IF EXISTS ledger_check_entry_balanced();",
    "DROP FUNCTION IF EXISTS ledger_reject_change();",
]

SQLITE_FORWARD = [
    f"CREATE TRIGGER {table}_no_{op.lower()} BEFORE {op} ON {table} "
    f"BEGIN SELECT RAISE(ABORT, 'ledger: {op} on {table} is not allowed: the journal is append-only'); END;"
    for table in TABLES
    for op in ("UPDATE", "DELETE")
]

SQLITE_REVERSE = [
    f"DROP TRIGGER IF EXISTS {table}_no_{op.lower()};"
    for table in TABLES
    for op in ("UPDATE", "DELETE")
]


def _run(statements_by_vendor):
    def run(apps, schema_editor):
        for sql in statements_by_vendor.get(schema_editor.connection.vendor, []):
            schema_editor.execute(sql, params=None)

    return run


class Migration(migrations.Migration):
    dependencies = [("ledger", "0001_initial")]

    operations = [
        migrations.RunPython(
            _run({"postgresql": POSTGRES_FORWARD, "sqlite": SQLITE_FORWARD}),
            _run({"postgresql": POSTGRES_REVERSE, "sqlite": SQLITE_REVERSE}),
        )
    ]
