"""A scratch database for a simulation run outside the test suite (CLI and bench).

With DATABASE_URL naming PostgreSQL, the run uses `<name>_sim` on the same server, dropped
and recreated; otherwise a temporary SQLite file. Either way it is migrated from scratch, so
a seed's run never depends on what an earlier process left behind. REDIS_URL is kept as it
is: with it the channel layer and the cache are Redis (timer nudges never reach the broker:
the simulation delivers them itself).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from urllib.parse import urlparse


def _postgres(url: str) -> tuple[str, str]:
    # only a PostgreSQL URL needs the driver
    import psycopg

    parsed = urlparse(url)
    name = f"{parsed.path.lstrip('/') or 'casino'}_sim"
    admin = parsed._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    return parsed._replace(path=f"/{name}").geturl(), f"PostgreSQL ({name})"


def scratch_database() -> str:
    """Point Django at a fresh database, set Django up and migrate; returns a description."""
    url = os.environ.get("DATABASE_URL", "")
    if url.startswith("postgres"):
        url, description = _postgres(url)
    else:
        path = Path(tempfile.mkdtemp(prefix="vopr-")) / "sim.sqlite3"
        url, description = f"sqlite:///{path}", f"SQLite ({path})"
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "casino.settings")
    # after django.setup(): these load the product
    import django

    django.setup()
    # after django.setup(): these load the product
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)
    redis = " + Redis" if os.environ.get("REDIS_URL") else ""
    return description + redis
