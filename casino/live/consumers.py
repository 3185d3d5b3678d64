"""`/ws/tables/<id>/`: a table's live feed, and a way to play at it.

Players get their own view, spectators the public one. Every client frame is one JSON object
in a text frame of at most MAX_MESSAGE_BYTES (4096) bytes; a bigger frame closes the socket
with 4009. Every other bad frame (binary, not JSON, not an object, unknown `type`, wrong field
types) is answered with an `error` and the socket stays open; nothing changes.

Client -> server:
- `{"type": "ping"}` -> `{"type": "pong"}`;
- `{"type": "resume", "rounds": {"<round_id>": <last seen version>, ...}}`: every version the
  client missed of those rounds, and of any later round at the table, from the event store;
- game commands (authenticated players only), each with a client `id` that is also its
  idempotency key (1-100 of `A-Z a-z 0-9 . _ : -`):
  - `{"type": "deal", "id", "mode": "bet"|"rebet"|"double", "bets": ["1.00", ...]}` at this
    table (REST `POST /api/tables/<id>/deal/`);
  - `{"type": "hit", "id", "round_id", "confirm": false}` (`confirm: true` is the safety-net
    confirmation), `{"type": "stand"|"double"|"split", "id", "round_id"}`,
    `{"type": "insurance", "id", "round_id", "take", "box", "amount"?}`,
    `{"type": "even_money", "id", "round_id", "take", "box"}` (REST
    `POST /api/rounds/<round_id>/<action>/`); the round must be at this table.

  They run through the REST views' own command layer, `casino.api.commands` (through
  database_sync_to_async): the same input serializers, checks, engine commands and
  idempotency records (operation `rounds_<action>` / `tables_deal` with the same payload), so
  an `id` is one Idempotency-Key shared with REST: a retried command runs once and replays
  its first answer, with `"replayed": true`. Each counts in the player's `money` rate-limit
  window, the one REST's POSTs count in (`casino.platform.throttles.throttle_command`).
Server -> client:
- `{"type": "hello", "table_id", "player_id", "role"}` once, then the open round's snapshot;
- `{"type": "round", "round_id", "table_id", "from_version", "version", "events", "view",
  "published_at"}` per committed command, for this recipient; never a duplicate version;
- `{"type": "result", "id", "replayed", "round": {"round_id", "version", "status", "view"}}`:
  a command's answer, the caller's own view (the REST body); its `round` message follows;
- `{"type": "error", "id", "code", "message", "details", "status"}`: `status` is the HTTP
  status REST answers for the same code (`not_authenticated` 401, `not_a_participant` 403,
  `not_found` 404, `not_your_turn` / `action_not_allowed` / `insufficient_funds` 409,
  `invalid_input` 400, `idempotency_key_reused` 422, `throttled` 429, ...); `id` is the
  command's id when the frame carried a usable one, else null.
Close codes: 4401 (a token was sent and is not good: the handshake is accepted, then closed,
so the client sees the code), 4404 (no such table, or another player's personal table: the
handshake is refused, which a real server answers with HTTP 403), 4009 (frame too big). An
Origin that is not this site (`casino.routing.SameSiteOriginValidator`) refuses the handshake
(HTTP 403).
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.contrib.auth import get_user_model
from rest_framework.exceptions import ValidationError

from casino.api import commands
from casino.api.bench import FANOUT_GROUP
from casino.api.plumbing import has_lone_surrogate
from casino.engine.views import Viewer
from casino.eventstore.store import load
from casino.models import Round, RoundStatus, Table
from casino.platform.errors import ApplicationError
from casino.platform.throttles import throttle_command
from casino.rounds.publish import player_group, round_messages, table_group
from ledger.idempotency import idempotency_key_clean

logger = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 4096
RESUME_ROUNDS = 50  # at most this many rounds replayed on a resume
CLOSE_NOT_FOUND = 4404
CLOSE_BAD_TOKEN = 4401  # a token was sent and is not good (REST answers 401)
# A frame over MAX_MESSAGE_BYTES. Not 1009: daphne's autobahn lets an application close with
# 1000 or 3000-4999 only, and answered 1009 with an internal error and close 1011.
CLOSE_TOO_BIG = 4009
ROUND_ID_RE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
ROUND_ACTIONS = tuple(commands.ROUND_ACTIONS)  # hit, stand, double, split, insurance, even_money
COMMANDS = tuple(commands.COMMANDS)  # deal, then the round actions
MESSAGE_TYPES = ("ping", "resume", *COMMANDS)


class CommandError(Exception):
    """A command refused before or by the service: sent to the client as an `error`."""

    def __init__(
        self, code: str, message: str, status: int, details: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.code, self.message, self.status, self.details = code, message, status, details or {}


class TableConsumer(AsyncWebsocketConsumer):  # type: ignore[misc]
    """One browser or bot watching one table."""

    async def connect(self) -> None:
        if self.scope.get("token_refused"):  # accepted, so that the client sees the code
            await self.accept()
            await self.close(code=CLOSE_BAD_TOKEN)
            return
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
        if text_data is None:
            size = len(bytes_data or b"")
        else:
            size = len(text_data.encode("utf-8", "surrogatepass"))
        if size > MAX_MESSAGE_BYTES:
            await self.close(code=CLOSE_TOO_BIG)
            return
        if text_data is None:
            await self._error("malformed_message", "Send text frames: one JSON object each.")
            return
        try:
            request = json.loads(text_data)
        except (ValueError, RecursionError):
            await self._error("malformed_message", "Send one JSON object per message.")
            return
        if not isinstance(request, dict):
            await self._error("malformed_message", "Send one JSON object per message.")
            return
        if has_lone_surrogate(request):  # not Unicode text: refused as the REST parser does
            await self._error(
                "malformed_message", "A string holds a lone surrogate escape (\\ud800-\\udfff)."
            )
            return
        kind = request.get("type")
        if kind == "ping":
            await self.send(text_data=json.dumps({"type": "pong"}))
        elif kind == "resume":
            rounds = request.get("rounds")
            if not isinstance(rounds, dict) or not all(
                isinstance(k, str)
                and ROUND_ID_RE.fullmatch(k)
                and isinstance(v, int)
                and not isinstance(v, bool)
                and v >= 0
                for k, v in rounds.items()
            ):
                await self._error(
                    "invalid_resume", "rounds must map round ids to versions (integers >= 0)."
                )
                return
            for msg in await self._missed(dict(list(rounds.items())[:RESUME_ROUNDS])):
                await self._deliver(msg)
        elif isinstance(kind, str) and kind in COMMANDS:
            await self._command(kind, request)
        else:
            await self._error("unknown_message", f"Known types: {', '.join(MESSAGE_TYPES)}.")

    async def _command(self, kind: str, request: dict[str, Any]) -> None:
        raw_id = request.get("id")
        client_id = raw_id if isinstance(raw_id, str) and len(raw_id) <= 100 else None
        try:
            if self.player_id is None:
                raise CommandError(
                    "not_authenticated", "Log in (session or token) to play; spectators watch.", 401
                )
            if raw_id is not None and not isinstance(raw_id, str):
                raise CommandError(
                    "idempotency_key_invalid",
                    "The id must be a string of 1-100 characters of A-Z a-z 0-9 . _ : -",
                    400,
                )
            status, body, replayed = await self._run_command(kind, request)
        except CommandError as exc:
            await self._error(
                exc.code, exc.message, id=client_id, status=exc.status, details=exc.details
            )
            return
        except Exception:  # a malfunction: logged, answered, and the socket stays up
            logger.exception("websocket command %s failed", kind)
            await self._error("internal_error", "The command failed.", id=client_id, status=500)
            return
        if status >= 400:  # a refusal stored by the idempotency record (e.g. a 400), replayed
            error = body["error"]
            await self._error(
                error["code"],
                error["message"],
                id=client_id,
                status=status,
                details=error["details"],
            )
            return
        await self.send(
            text_data=json.dumps(
                {"type": "result", "id": client_id, "replayed": replayed, "round": body}
            )
        )

    @database_sync_to_async
    def _run_command(self, kind: str, request: dict[str, Any]) -> tuple[int, dict[str, Any], bool]:
        """The REST command path (`casino.api.commands`); its errors become CommandError."""
        try:
            return self._command_sync(kind, request)
        except ApplicationError as exc:
            raise CommandError(exc.code, exc.message, exc.status_code, exc.extra) from None
        except ValidationError as exc:
            raise CommandError(
                "invalid_input", "The request is not valid.", 400, {"fields": exc.detail}
            ) from None

    def _command_sync(self, kind: str, request: dict[str, Any]) -> tuple[int, dict[str, Any], bool]:
        """The frame's `id` is the Idempotency-Key; the player must still be an active user."""
        key = idempotency_key_clean(request.get("id"))  # a string or None (see _command)
        assert self.player_id is not None
        user = get_user_model().objects.filter(pk=int(self.player_id), is_active=True).first()
        if user is None:
            raise CommandError("not_authenticated", "This account is no longer active.", 401)
        throttle_command(user_pk=user.pk)  # one money window with REST
        args = {k: v for k, v in request.items() if k not in ("type", "id", "round_id")}
        if kind == commands.DEAL.name:
            return commands.deal(user=user, table_id=int(self.table_id), body=args, key=key)
        round_id = request.get("round_id")
        return commands.act(
            user=user,
            name=kind,
            round_id=round_id if isinstance(round_id, str) else "",
            body=args,
            key=key,
            at_table=int(self.table_id),
        )

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

    async def _error(
        self,
        code: str,
        message: str,
        *,
        id: str | None = None,
        status: int = 400,
        details: dict[str, Any] | None = None,
    ) -> None:
        await self.send(
            text_data=json.dumps(
                {
                    "type": "error",
                    "id": id,
                    "code": code,
                    "message": message,
                    "details": details or {},
                    "status": status,
                }
            )
        )

    def _viewer_for(self, participants: list[str]) -> Viewer:
        if self.player_id is not None and self.player_id in participants:
            return Viewer("player", self.player_id)
        return Viewer("public")

    @database_sync_to_async
    def _may_watch(self, user: Any) -> bool:
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
    """The anchors of `bench/api.py` and `bench/websocket.py` (routed only with BENCH_ENDPOINTS=1):
    a bare group fan-out, and a bare echo (any frame comes back as `{"type": "echo"}`)."""

    async def connect(self) -> None:
        await self.accept()
        await self.channel_layer.group_add(FANOUT_GROUP, self.channel_name)

    async def disconnect(self, code: int) -> None:
        await self.channel_layer.group_discard(FANOUT_GROUP, self.channel_name)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        await self.send(text_data='{"type": "echo"}')

    async def bench_message(self, event: dict[str, Any]) -> None:
        await self.send(text_data=json.dumps({"type": "bench", "sent": event["sent"]}))
