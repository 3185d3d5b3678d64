"""Secrets and unrevealed seeds never reach the logs, even with SQL logging on."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest
from django.conf import settings
from django.db import connection

from casino.engine.commands import PlaceBet
from casino.platform.errors import ApplicationError
from casino.rounds import money as roundmoney
from casino.rounds import services
from casino.tables.play import bot_players, play
from casino.tables.services import demo_table
from fairness.models import SeedChain
from fairness.seedcrypto import decrypt_secret
from fairness.services import server_seed_for

pytestmark = pytest.mark.django_db


def fail_once(real: Callable[..., Any]) -> Callable[..., Any]:
    calls: list[int] = []

    def wrapped(**kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("injected failure half way through the command")
        return real(**kwargs)

    return wrapped


def test_many_rounds_log_no_secret_and_no_unrevealed_seed(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="django.db.backends")
    connection.force_debug_cursor = True  # log every SQL statement, as DEBUG would
    try:
        _play_and_scan(caplog, monkeypatch)
    finally:
        connection.force_debug_cursor = False


def _play_and_scan(caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    for ruleset, players in (
        ("classic", 1),
        ("atlantic_city", 1),
        ("duel_classic", 2),
        ("duel", 3),
    ):
        play(ruleset=ruleset, rounds=5, players=players, seed=1)

    # A malfunction is logged with its traceback; it must not carry a seed either.
    player = bot_players(1)[0]
    table = demo_table("classic")
    broken = services.round_open(table=table, players=[player]).round.id
    monkeypatch.setattr(roundmoney, "post_legs", fail_once(roundmoney.post_legs))
    with pytest.raises(ApplicationError) as caught:  # the bet's ledger legs fail once
        services.round_command(round_id=broken, command=PlaceBet(str(player.pk), (table.min_bet,)))
    assert caught.value.code == "round_voided_malfunction"

    # One round stays open: its server seed is still secret.
    still_open = services.round_open(table=demo_table("duel_classic"), players=bot_players(2))
    open_seed = server_seed_for(
        chain_id=still_open.state.opened.chain_id, nonce=still_open.state.opened.nonce
    )
    secrets_ = [settings.SECRET_KEY, settings.RECEIPT_SIGNING_KEY, settings.LOG_SIGNING_KEY]
    secrets_ += [settings.LOCAL_BEACON_SEED] if settings.LOCAL_BEACON_SEED else []
    secrets_ += settings.SEED_ENCRYPTION_KEYS
    secrets_ += [decrypt_secret(chain.head_encrypted) for chain in SeedChain.objects.all()]

    text = "\n".join(f"{r.getMessage()} {r.exc_text or ''}" for r in caplog.records)
    assert "injected failure" in text  # the malfunction was logged ...
    assert "INSERT INTO" in text  # ... and so was the SQL
    assert open_seed not in text
    assert [s[:6] + "..." for s in secrets_ if s in text] == []
