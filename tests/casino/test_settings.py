"""Settings come from the environment: defaults, DATABASE_URL parsing, secrets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from casino import settings as project_settings
from casino.platform.secrets import load_secrets


def test_embedded_default_uses_sqlite_file() -> None:
    config = project_settings.database_config(None)
    assert config["ENGINE"] == "django.db.backends.sqlite3"
    assert config["NAME"].endswith("db.sqlite3")


def test_database_url_selects_postgresql_with_pool_and_no_persistent_connections() -> None:
    config = project_settings.database_config("postgres://casino:pw@db.internal:6543/games")
    assert config["ENGINE"] == "django.db.backends.postgresql"
    assert (config["NAME"], config["USER"], config["PASSWORD"]) == ("games", "casino", "pw")
    assert (config["HOST"], int(config["PORT"])) == ("db.internal", 6543)
    assert config["CONN_MAX_AGE"] == 0
    assert config["OPTIONS"]["pool"]["max_size"] >= 1
    # The server binds parameters; psycopg prepares a statement from its 5th run.
    assert config["OPTIONS"]["server_side_binding"] is True
    assert config["OPTIONS"]["prepare_threshold"] == 5


def test_server_binding_can_be_switched_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DB_SERVER_BINDING", "0")  # a transaction-mode PgBouncer < 1.21
    options = project_settings.database_config("postgres://casino:pw@db/games")["OPTIONS"]
    assert "server_side_binding" not in options and "prepare_threshold" not in options


def test_channel_layer_defaults_to_in_memory() -> None:
    layers = project_settings.channel_layers_config(None)
    assert layers["default"]["BACKEND"] == "channels.layers.InMemoryChannelLayer"


def test_redis_channel_layer_disables_socket_timeout_and_raises_pool_limit() -> None:
    layers = project_settings.channel_layers_config("redis://127.0.0.1:6379/0")
    host = layers["default"]["CONFIG"]["hosts"][0]
    assert layers["default"]["BACKEND"] == "channels_redis.core.RedisChannelLayer"
    assert host["address"] == "redis://127.0.0.1:6379/0"
    assert host["socket_timeout"] is None
    assert host["max_connections"] >= 1000


def test_demo_mode_generates_secrets_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("SECRET_KEY", "SEED_ENCRYPTION_KEYS", "RECEIPT_SIGNING_KEY", "LOG_SIGNING_KEY"):
        monkeypatch.delenv(name, raising=False)
    first = load_secrets(base_dir=tmp_path, debug=True)
    second = load_secrets(base_dir=tmp_path, debug=True)
    assert first == second
    assert len(first["RECEIPT_SIGNING_KEY"]) == 64
    stored = json.loads((tmp_path / ".local" / "secrets.json").read_text())
    assert stored == first
    assert (tmp_path / ".local" / "secrets.json").stat().st_mode & 0o077 == 0


def test_debug_off_refuses_missing_secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RECEIPT_SIGNING_KEY", raising=False)
    monkeypatch.setenv("SECRET_KEY", "a-real-secret-key-value-0123456789")
    monkeypatch.setenv("SEED_ENCRYPTION_KEYS", "x" * 44)
    with pytest.raises(ImproperlyConfigured, match="RECEIPT_SIGNING_KEY"):
        load_secrets(base_dir=tmp_path, debug=False)
    assert not (tmp_path / ".local").exists()


def test_debug_off_refuses_example_values(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SECRET_KEY", "change-me")
    monkeypatch.setenv("SEED_ENCRYPTION_KEYS", "x" * 44)
    monkeypatch.setenv("RECEIPT_SIGNING_KEY", "ab" * 32)
    monkeypatch.setenv("LOG_SIGNING_KEY", "cd" * 32)
    with pytest.raises(ImproperlyConfigured, match="SECRET_KEY"):
        load_secrets(base_dir=tmp_path, debug=False)


def test_environment_secrets_win_over_the_local_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SECRET_KEY", "from-the-environment-0123456789")
    values = load_secrets(base_dir=tmp_path, debug=True)
    assert values["SECRET_KEY"] == "from-the-environment-0123456789"


def test_a_sqlite_url_keeps_the_embedded_options(tmp_path: Path) -> None:
    config = project_settings.database_config(f"sqlite:///{tmp_path}/other.sqlite3")
    assert config["ENGINE"] == "django.db.backends.sqlite3"
    assert config["NAME"] == f"{tmp_path}/other.sqlite3"
    assert config["OPTIONS"]["transaction_mode"] == "IMMEDIATE"
    assert "journal_mode=WAL" in config["OPTIONS"]["init_command"]
