"""A real Celery worker runs the project's tasks against the test database."""

from __future__ import annotations

import subprocess

import pytest
from django.db import connection

from casino.rounds.tasks import ping


@pytest.mark.worker
@pytest.mark.postgres
def test_real_worker_answers_from_the_test_database(
    celery_worker_process: subprocess.Popen[bytes],
) -> None:
    result = ping.delay().get(timeout=30)
    assert result == {
        "pong": True,
        "vendor": "postgresql",
        "database": connection.settings_dict["NAME"],
    }


def test_tasks_are_eager_exactly_when_no_broker_is_configured(settings: object) -> None:
    assert settings.CELERY_TASK_ALWAYS_EAGER is (settings.REDIS_URL is None)  # type: ignore[attr-defined]


@pytest.mark.django_db
def test_eager_tasks_run_in_process() -> None:
    from casino.celery import app

    previous = app.conf.task_always_eager
    app.conf.task_always_eager = True
    try:
        assert ping.delay().get(timeout=5)["pong"] is True
    finally:
        app.conf.task_always_eager = previous
