"""GET /healthz reports the database, the channel layer, the broker, the timers and the
transparency log's merge delay."""

from __future__ import annotations

import pytest
from django.test import Client

from casino.platform import health


@pytest.mark.django_db
def test_healthz_is_200_when_everything_answers(client: Client) -> None:
    from casino.tables import timers

    timers.tick()  # the in-process timer swept the deadlines (tests/api/test_timer_health.py)
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert set(body["checks"]) == {
        "database", "channel_layer", "broker", "timers", "transparency_log",
    }  # fmt: skip
    assert body["checks"]["transparency_log"]["max_merge_delay_s"] == 10.0
    assert all(check["ok"] for check in body["checks"].values())


@pytest.mark.django_db
def test_healthz_is_503_and_names_the_broker_when_it_is_down(
    client: Client, monkeypatch: pytest.MonkeyPatch, settings: object
) -> None:
    from casino.celery import app

    settings.CELERY_TASK_ALWAYS_EAGER = False  # type: ignore[attr-defined]
    monkeypatch.setattr(app.conf, "broker_url", "redis://127.0.0.1:1/0")
    response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unhealthy"
    assert body["checks"]["broker"]["ok"] is False
    assert "Error" in body["checks"]["broker"]["error"]
    assert body["checks"]["database"]["ok"] is True


@pytest.mark.django_db
def test_healthz_is_503_when_the_database_fails(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken() -> dict[str, object]:
        raise RuntimeError("connection refused")

    monkeypatch.setitem(health.CHECKS, "database", broken)
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["checks"]["database"] == {
        "ok": False,
        "error": "RuntimeError: connection refused",
    }
