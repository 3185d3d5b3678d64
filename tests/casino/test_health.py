"""GET /healthz reports the database, the channel layer, the broker, the timers, the
transparency log's merge delay and the beacon shared tables read."""

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
        "database", "channel_layer", "broker", "timers", "transparency_log", "beacon",
    }  # fmt: skip
    assert body["checks"]["transparency_log"]["max_merge_delay_s"] == 10.0
    assert body["checks"]["beacon"] == {"ok": True, "status": "off"}  # the suite's BEACON=off
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


@pytest.mark.django_db
def test_healthz_reports_the_local_beacon_as_not_independent(
    client: Client, settings: object
) -> None:
    from fairness import beaconsource

    settings.BEACON = "local"  # type: ignore[attr-defined]
    settings.LOCAL_BEACON_SEED = "tests/casino/test_health"  # type: ignore[attr-defined]
    beaconsource.clear_caches()
    beacon = client.get("/healthz").json()["checks"]["beacon"]
    assert beacon["ok"] is True and beacon["status"] == "ok"
    assert beacon["beacon"] == "local-beacon" and beacon["independent"] is False
    assert beacon["latest_round"] > 0


@pytest.mark.django_db
def test_healthz_is_503_when_the_beacon_is_unreachable(client: Client, settings: object) -> None:
    """Shared tables would void every round: /healthz says so."""
    import socket

    from fairness import beaconsource

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens there once closed
    settings.BEACON = "quicknet"  # type: ignore[attr-defined]
    settings.BEACON_RELAYS = [f"http://127.0.0.1:{port}"]  # type: ignore[attr-defined]
    beaconsource.clear_caches()
    try:
        response = client.get("/healthz")
    finally:
        beaconsource.clear_caches()
    assert response.status_code == 503
    beacon = response.json()["checks"]["beacon"]
    assert beacon["ok"] is False and beacon["status"] == "unreachable"
    assert f"127.0.0.1:{port}" in beacon["error"]
    assert response.json()["checks"]["database"]["ok"] is True
