"""Production settings pass Django's deployment checks, and refuse to start without secrets."""

from __future__ import annotations

import base64
import os
import secrets
import subprocess
import sys
from pathlib import Path

from django.conf import settings

ROOT = Path(settings.BASE_DIR)


def production_env(**overrides: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(
        DEBUG="false",
        ALLOWED_HOSTS="casino.example",
        SECRET_KEY=secrets.token_urlsafe(50),
        SEED_ENCRYPTION_KEYS=base64.urlsafe_b64encode(secrets.token_bytes(32)).decode(),
        RECEIPT_SIGNING_KEY=secrets.token_hex(32),
        LOG_SIGNING_KEY=secrets.token_hex(32),
        BEACON="quicknet",  # production's (the suite's BEACON=off refuses to start here)
    )
    env.update(overrides)
    return env


def manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True
    )


def test_check_deploy_is_clean_under_production_settings() -> None:
    result = manage("check", "--deploy", "--fail-level", "WARNING", env=production_env())
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues (0 silenced)." in result.stdout


def test_production_refuses_to_start_with_an_example_secret() -> None:
    result = manage("check", env=production_env(SECRET_KEY="change-me"))
    assert result.returncode != 0
    assert "SECRET_KEY" in result.stderr and "example values" in result.stderr
