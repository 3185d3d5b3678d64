"""`/ws/tables/<id>/`: a table's live feed. Players get their own view, spectators the public one.

Client -> server (JSON text, at most MAX_MESSAGE_BYTES):
- `{"type": "resume", "rounds": {"<round_id>": <last seen version>, ...}}`: every version the
  client missed of those rounds, and of any later round at the table, from the event store;
- `{"type": "ping"}` -> `{"type": "pong"}`.
Server -> client: `{"type": "hello", ...}` once, then `{"type": "round", "round_id",
"from_version", "version", "events", "view"}` per committed command; never a duplicate version.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer

from casino.engine.views import Viewer
from casino.publish import player_group, round_messages, table_group

logger = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 4096
RESUME_ROUNDS = 50  # at most this many rounds replayed on a resume
CLOSE_NOT_FOUND = 4404
CLOSE_TOO_BIG = 1009
CLOSE_POLICY = 1008


class TableConsumer(AsyncWebsocketConsumer):  # type: ignore[misc]
    """One browser or bot watching one table."""

    async def connect(self) -> None:
        self.table_id = str(self.scope["url_route"]["kwargs"]["table_id"])
        user = self.scope.get("user")
        self.player_id: str | None = (
            str(user.pk) if user is not None and user.is_authenticated else None
        )
        self.seen: dict[str, int] = {}
        if not await self._may_watch(user):
            await self.close(code=CLOSE_NOT_FOUND)
            return
        await self.accept()
        await self.channel_layer.group_add(table_group(self.table_id), self.channel_name)
        if self.player_id is not None:
            await self.channel_layer.group_add(player_group(self.player_id), self.channel_name)
        await self.send(
            text_data=json.dumps(
                {
                    "type": "hello",
                    "table_id": self.table_id,
                    "player_id": self.player_id,
                    "role": "player" if self.player_id else "public",
                }
            )
        )
        for msg in await self._snapshot():
            await self._deliver(msg)

    async def disconnect(self, code: int) -> None:
        if not hasattr(self, "table_id") or not self.channel_layer:
            return
        await self.channel_layer.group_discard(table_group(self.table_id), self.channel_name)
        if self.player_id is not None:
            await self.channel_layer.group_discard(player_group(self.player_id), self.channel_name)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        size = len(text_data.encode("utf-8")) if text_data is not None else len(bytes_data or b"")
        if size > MAX_MESSAGE_BYTES:
            await self.close(code=CLOSE_TOO_BIG)
            return
        try:
            request = json.loads(text_data or "")
        except ValueError:
            await self._error("malformed_message", "Send one JSON object per message.")
            return
        kind = request.get("type") if isinstance(request, dict) else None
        if kind == "ping":
            await self.send(text_data=json.dumps({"type": "pong"}))
        elif kind == "resume":
            rounds = request.get("rounds") or {}
            if not isinstance(rounds, dict) or not all(
                isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool)
                for k, v in rounds.items()
            ):
                await self._error("invalid_resume", "rounds must map round ids to versions.")
                return
            for msg in await self._missed(dict(list(rounds.items())[:RESUME_ROUNDS])):
                await self._deliver(msg)
        else:
            await self._error("unknown_message", "Known types: resume, ping.")

    async def round_public(self, event: dict[str, Any]) -> None:
        if self.player_id is not None and self.player_id in event["participants"]:
            return  # this player gets their own view on the private group
        await self._deliver(event["meta"], event["text"])

    async def round_private(self, event: dict[str, Any]) -> None:
        if event["meta"]["table_id"] == self.table_id:
            await self._deliver(event["meta"], event["text"])

    async def _deliver(self, msg: dict[str, Any], text: str | None = None) -> None:
        """Send in version order, once: drop what was sent, fill a gap from the event store.

        `msg` carries at least round_id, from_version and version; `text` is its JSON when the
        publisher serialized it already.
        """
        round_id = msg["round_id"]
        seen = self.seen.get(round_id)
        if seen is not None and msg["version"] <= seen:
            return
        if seen is not None and msg["from_version"] > seen + 1:
            for missed in await self._versions(round_id, seen, msg["from_version"] - 1):
                await self._send_one(missed)
        await self._send_one(msg, text)

    async def _send_one(self, msg: dict[str, Any], text: str | None = None) -> None:
        if msg["version"] <= self.seen.get(msg["round_id"], 0):
            return
        self.seen[msg["round_id"]] = msg["version"]
        await self.send(text_data=text if text is not None else json.dumps(msg))

    async def _error(self, code: str, message: str) -> None:
        await self.send(text_data=json.dumps({"type": "error", "code": code, "message": message}))

    def _viewer_for(self, participants: list[str]) -> Viewer:
        if self.player_id is not None and self.player_id in participants:
            return Viewer("player", self.player_id)
        return Viewer("public")

    @database_sync_to_async
    def _may_watch(self, user: Any) -> bool:
        from casino.models import Table

        table = Table.objects.filter(pk=int(self.table_id)).first()
        if table is None:
            return False
        if table.owner_id is None:
            return True
        return (
            user is not None
            and user.is_authenticated
            and (user.pk == table.owner_id or user.is_staff)
        )

    def _stream_messages(
        self, round_id: str, after: int, upto: int | None = None
    ) -> list[dict[str, Any]]:
        from casino.eventstore.store import load

        stored = load(round_id)
        if not stored:
            return []
        opened = stored[0].data
        if str(opened.get("table_id")) != self.table_id:
            return []
        participants = [p["player_id"] for p in opened.get("participants", [])]
        return list(
            round_messages(stored, self._viewer_for(participants), after_version=after, upto=upto)
        )

    @database_sync_to_async
    def _versions(self, round_id: str, after: int, upto: int) -> list[dict[str, Any]]:
        return self._stream_messages(round_id, after, upto)

    @database_sync_to_async
    def _snapshot(self) -> list[dict[str, Any]]:
        """The table's open round (latest version only), so a new client knows where play is."""
        from casino.models import Round, RoundStatus

        current = (
            Round.objects.filter(table_id=int(self.table_id), status=RoundStatus.OPEN)
            .order_by("-opened_at")
            .values_list("id", flat=True)
            .first()
        )
        if current is None:
            return []
        messages = self._stream_messages(current, 0)
        if not messages:
            return []
        latest = dict(messages[-1])
        latest["from_version"] = 1
        return [latest]

    @database_sync_to_async
    def _missed(self, known: dict[str, int]) -> list[dict[str, Any]]:
        """Every version after the client's, of its rounds and of later rounds at this table."""
        from casino.models import Round

        rounds = {
            r.id: r for r in Round.objects.filter(id__in=list(known), table_id=int(self.table_id))
        }
        out: list[dict[str, Any]] = []
        if rounds:
            since = min(r.opened_at for r in rounds.values())
            later = Round.objects.filter(
                table_id=int(self.table_id), opened_at__gte=since
            ).order_by("opened_at")[:RESUME_ROUNDS]
            for round_ in later:
                after = max(known.get(round_.id, 0), self.seen.get(round_.id, 0))
                out.extend(self._stream_messages(round_.id, after))
        return out


class BenchConsumer(AsyncWebsocketConsumer):  # type: ignore[misc]
    """The fan-out anchor of `bench/api.py` (routed only with BENCH_ENDPOINTS=1)."""

    async def connect(self) -> None:
        from casino.api.bench import FANOUT_GROUP

        await self.accept()
        await self.channel_layer.group_add(FANOUT_GROUP, self.channel_name)

    async def disconnect(self, code: int) -> None:
        from casino.api.bench import FANOUT_GROUP

        await self.channel_layer.group_discard(FANOUT_GROUP, self.channel_name)

    async def bench_message(self, event: dict[str, Any]) -> None:
        await self.send(text_data=json.dumps({"type": "bench", "sent": event["sent"]}))
