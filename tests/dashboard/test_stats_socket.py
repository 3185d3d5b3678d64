"""`/ws/stats/`: a finished round pings every stats subscriber after commit."""

from __future__ import annotations

import random

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from channels.testing import WebsocketCommunicator

from casino.routing import websocket_application
from casino.tables.play import play_round
from tests.dashboard.conftest import make_player, make_table

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_finished_round_announces_the_stats_change() -> None:
    async def scenario() -> None:
        ws = WebsocketCommunicator(
            websocket_application(), "/ws/stats/", headers=[(b"origin", b"http://testserver")]
        )
        connected, _ = await ws.connect()
        assert connected
        assert await ws.receive_nothing(timeout=0.1)

        def play() -> str:
            return play_round(make_table(), [make_player("ws")], random.Random(2)).round.id

        round_id = await sync_to_async(play)()
        message = await ws.receive_json_from(timeout=10)
        assert message["type"] == "stats.changed" and message["round_id"] == round_id
        await ws.disconnect()

    async_to_sync(scenario)()
