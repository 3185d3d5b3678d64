"""docker-compose.yml cannot run here, so check it against the real entry points."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from celery.app.utils import find_app
from django.conf import settings
from django.core.management import get_commands

COMPOSE = Path(settings.BASE_DIR) / "docker-compose.yml"


def _compose() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(COMPOSE.read_text())
    return data


def _command_words(service: dict[str, Any]) -> list[str]:
    command = service["command"]
    return command if isinstance(command, list) else command.split()


def test_every_service_exists() -> None:
    assert set(_compose()["services"]) == {"postgres", "redis", "web", "worker", "beat"}


def test_postgres_has_a_healthcheck_and_apps_wait_for_it() -> None:
    services = _compose()["services"]
    assert "pg_isready" in " ".join(services["postgres"]["healthcheck"]["test"])
    for name in ("web", "worker", "beat"):
        assert services[name]["depends_on"]["postgres"]["condition"] == "service_healthy"


def test_app_services_share_the_env_file_example() -> None:
    services = _compose()["services"]
    example = (Path(settings.BASE_DIR) / ".env.example").read_text()
    for name in ("web", "worker", "beat"):
        assert services[name]["env_file"] == ".env"
    for key in (
        "DATABASE_URL",
        "REDIS_URL",
        "SECRET_KEY",
        "SEED_ENCRYPTION_KEYS",
        "RECEIPT_SIGNING_KEY",
        "LOG_SIGNING_KEY",
        "BEACON",
        "BEACON_RELAYS",
    ):
        assert f"{key}=" in example


def test_web_migrates_then_serves_with_real_management_commands() -> None:
    script = " ".join(_compose()["services"]["web"]["command"])
    commands = get_commands()
    invoked = [part.split()[0] for part in script.split("manage.py ")[1:]]
    assert invoked == ["migrate", "serve"]
    assert all(name in commands for name in invoked)


def test_worker_and_beat_run_the_real_celery_app() -> None:
    services = _compose()["services"]
    for name, subcommand in (("worker", "worker"), ("beat", "beat")):
        words = _command_words(services[name])
        assert words[:3] == ["celery", "-A", "casino"]
        assert words[3] == subcommand
        app = find_app(words[2])  # what `celery -A casino` loads
        assert app.main == "casino"
        app.loader.import_default_modules()  # what the worker and beat do at startup
        assert "casino.round_nudge" in app.tasks
