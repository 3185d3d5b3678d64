"""`/ws/stats/`: a public WebSocket that says when the public stats changed.

The message carries no numbers, only which round and table moved: clients re-read the stats
API, so a dropped message costs freshness, never correctness.
"""

from __future__ import annotations

from typing import Any

from channels.generic.websocket import AsyncJsonWebsocketConsumer

from casino.dashboard.stats import STATS_GROUP


class StatsConsumer(AsyncJsonWebsocketConsumer):  # type: ignore[misc]
    async def connect(self) -> None:
        await self.channel_layer.group_add(STATS_GROUP, self.channel_name)
        await self.accept()

    async def disconnect(self, code: int) -> None:
        await self.channel_layer.group_discard(STATS_GROUP, self.channel_name)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        return None  # the stats socket only pushes

    async def stats_changed(self, event: dict[str, Any]) -> None:
        await self.send_json(
            {"type": "stats.changed", "round_id": event["round_id"], "table_id": event["table_id"]}
        )
