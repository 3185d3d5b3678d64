"""A scratch database for a benchmark that runs its timed part in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlparse


def scratch_database(name: str) -> tuple[str, str]:
    """(DATABASE_URL for the bench, a description).

    With DATABASE_URL on PostgreSQL: `<db>_<name>`, dropped and created anew. Otherwise a
    SQLite file in a new temporary folder (WAL mode, the embedded default).
    """
    base = os.environ.get("DATABASE_URL", "")
    if base.startswith("postgres"):
        parsed = urlparse(base)
        db = f"{parsed.path.lstrip('/') or 'casino'}_{name}"
        admin = parsed._replace(path="/postgres").geturl()
        for sql in (f"DROP DATABASE IF EXISTS {db}", f"CREATE DATABASE {db}"):
            subprocess.run(["psql", admin, "-qc", sql], check=True, capture_output=True)
        return parsed._replace(path=f"/{db}").geturl(), f"PostgreSQL ({db})"
    path = Path(tempfile.mkdtemp(prefix=f"{name}-")) / "bench.sqlite3"
    return f"sqlite:///{path}", "SQLite (WAL, temporary file)"


def migrated_scratch(name: str) -> tuple[dict[str, str], str]:
    """(environment for the bench's subprocesses, a description) of a migrated scratch database.

    Without REDIS_URL: the service path only, no publishing, eager tasks. Shared tables deal
    at once (BEACON=off, unless the caller's environment names a beacon): a beacon round waits
    seconds for its round, which `python -m bench beacon` measures on its own.
    """
    url, description = scratch_database(name)
    env = {
        "BEACON": "off",
        **os.environ,
        "DATABASE_URL": url,
        "DJANGO_SETTINGS_MODULE": "casino.settings",
    }
    env.pop("REDIS_URL", None)
    root = Path(__file__).resolve().parent.parent
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v0"], cwd=root, env=env, check=True
    )
    return env, description
