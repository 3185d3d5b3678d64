"""The playing client: `python -m casino.client play --url URL --user U --password P
--ruleset R --rounds N [--json] [--opponent USER ...]`, and `python -m casino.client watch
--url URL --table ID [--user U --password P] [--seconds S] [--json]` to spectate a table.

It logs in, sits, plays N rounds with basic strategy over the real REST API, listens on the
table's WebSocket the whole time, checks every response and message for leaks (hidden cards,
seeds before their reveal), and verifies each finished round against its published proof
with `fairness.verify`. A duel needs opponents: `--opponent` logs them in with the same
password and plays them too. Needs no Django: only httpx, websockets and the pure core.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx
import websockets
from websockets.exceptions import InvalidStatus, WebSocketException

from casino.client.leakcheck import message_leaks
from casino.engine.cards import points
from casino.engine.rules import DUEL, RULESETS, RuleSet
from casino.engine.strategy import DOUBLE, DUEL_DEFAULT, HIT, SPLIT, STAND, basic_strategy
from fairness.verify import KeyRing, load_engine_replay, verify_round

STEP_TIMEOUT_S = 60.0
MAX_STEPS = 300
LOBBY_WAIT_S = 60.0
THROTTLE_RETRIES = 5
RECONNECT_FIRST_S = 0.25  # a dropped WebSocket is retried after this, doubling up to
RECONNECT_MAX_S = 5.0
RESUME_ROUNDS = 50  # the server resumes at most this many rounds per request
FINISHED_PHASES = ("settled", "voided")


class ClientError(Exception):
    """The server refused something the client cannot work around."""


@dataclass
class Player:
    username: str
    http: httpx.AsyncClient
    user_id: str = ""
    token: str = ""
    latencies: list[float] = field(default_factory=list)
    leaks: list[str] = field(default_factory=list)
    verify_failures: list[str] = field(default_factory=list)
    ws_events: int = 0
    ws_task: asyncio.Task[None] | None = None
    feed: Feed | None = None
    connected: asyncio.Event = field(default_factory=asyncio.Event)
    woken: asyncio.Event = field(default_factory=asyncio.Event)

    async def call(self, method: str, path: str, body: Any = None) -> httpx.Response:
        headers = {"Idempotency-Key": uuid.uuid4().hex} if method == "POST" else {}
        for _ in range(THROTTLE_RETRIES):
            started = time.perf_counter()
            response = await self.http.request(method, path, json=body, headers=headers)
            self.latencies.append(time.perf_counter() - started)
            if response.status_code != 429:
                break
            # Throttled: the same key is safe to resend (idempotent) after the server's wait.
            await asyncio.sleep(min(30.0, float(response.headers.get("Retry-After") or 1)))
        if response.headers.get("content-type", "").startswith("application/json"):
            self.leaks.extend(message_leaks(response.json(), self.user_id or None))
        return response

    async def ok(self, method: str, path: str, body: Any = None) -> Any:
        response = await self.call(method, path, body)
        if response.status_code >= 400:
            raise ClientError(f"{method} {path}: {response.status_code} {response.text[:300]}")
        return response.json() if response.content else None


async def login(base: str, username: str, password: str) -> Player:
    http = httpx.AsyncClient(base_url=base, timeout=30.0)
    player = Player(username=username, http=http)
    body = await player.ok("POST", "/api/auth/login/", {"username": username, "password": password})
    player.user_id, player.token = str(body["user"]["id"]), body["token"]
    http.headers["Authorization"] = f"Token {player.token}"
    player.latencies.clear()  # the figures are game requests (a login is a password hash)
    return player


def feed_url(base: str, table_id: int | str, token: str = "") -> tuple[str, str]:
    """The table's WebSocket URL (token in the query) and the Origin header to send."""
    parts = urlsplit(base)
    scheme = "wss" if parts.scheme == "https" else "ws"
    query = f"?token={token}" if token else ""
    return (
        f"{scheme}://{parts.netloc}/ws/tables/{table_id}/{query}",
        f"{parts.scheme}://{parts.netloc}",
    )


@dataclass
class Feed:
    """A table's WebSocket that survives a dropped socket: it reconnects and resumes.

    Every `round` message's versions are recorded; after a reconnect (server restart, Redis
    restart, network) the first `hello` is answered with `{"type": "resume", "rounds":
    {round_id: last version seen}}`, and the server sends every version missed since, from
    the event store. A message for versions already seen is dropped, so `handle` sees each
    version once. The server fills a gap in a round when that round's next message comes; a
    round whose last messages were lost gets none, so when a new round appears while an older
    one was last seen unfinished, the feed asks for that one again (resume). A refused
    handshake (403: no such table, not yours) is final.
    """

    url: str
    origin: str
    seen: dict[str, int] = field(default_factory=dict)  # round id -> last version, oldest first
    received: list[tuple[str, int, int]] = field(default_factory=list)  # (round, from, to)
    drops: int = 0
    connected: asyncio.Event = field(default_factory=asyncio.Event)
    unfinished: set[str] = field(default_factory=set)  # rounds last seen in play

    def resume_request(self, rounds: Any = None) -> dict[str, Any]:
        wanted = self.seen if rounds is None else {r: self.seen[r] for r in rounds}
        recent = list(wanted.items())[-RESUME_ROUNDS:]
        return {"type": "resume", "rounds": dict(recent)}

    def _new(self, message: dict[str, Any]) -> tuple[bool, list[str]]:
        """(is it new, older rounds to ask for again because this one is a new round)."""
        round_id, first, last = message["round_id"], message["from_version"], message["version"]
        fresh = round_id not in self.seen
        known = self.seen.pop(round_id, 0)
        self.seen[round_id] = max(known, last)  # most recently active round last
        if last <= known:
            return False, []
        self.received.append((round_id, first, last))
        stale = sorted(self.unfinished - {round_id}) if fresh else []
        if message.get("view", {}).get("phase") in FINISHED_PHASES:
            self.unfinished.discard(round_id)
        else:
            self.unfinished.add(round_id)
        return True, stale

    async def run(self, handle: Callable[[dict[str, Any]], bool | None]) -> None:
        """Read until cancelled or `handle` returns True, reconnecting with backoff."""
        delay = RECONNECT_FIRST_S
        while True:
            try:
                async with websockets.connect(self.url, origin=self.origin) as ws:  # type: ignore[arg-type]
                    async for raw in ws:
                        message = json.loads(raw)
                        kind = message.get("type")
                        if kind == "hello":
                            delay = RECONNECT_FIRST_S
                            if self.seen:  # a reconnect: ask for everything missed
                                await ws.send(json.dumps(self.resume_request()))
                            self.connected.set()
                        stale: list[str] = []
                        if kind == "round":
                            new, stale = self._new(message)
                            if not new:
                                continue
                        if handle(message):
                            return
                        if stale:  # their last messages may have been lost: ask again
                            await ws.send(json.dumps(self.resume_request(stale)))
            except InvalidStatus as exc:
                if exc.response.status_code in (403, 404):
                    raise ClientError(f"the table's WebSocket refused us: {exc}") from exc
            except (OSError, TimeoutError, WebSocketException):
                pass  # dropped or refused for now: reconnect below
            self.drops += 1
            self.connected.clear()
            await asyncio.sleep(delay)
            delay = min(delay * 2, RECONNECT_MAX_S)


async def listen(player: Player, base: str, table_id: int) -> None:
    """Follow the table's WebSocket until cancelled; check every message for leaks."""
    url, origin = feed_url(base, table_id, player.token)
    player.feed = Feed(url=url, origin=origin, connected=player.connected)

    def handle(message: dict[str, Any]) -> None:
        if message.get("type") == "round":
            player.ws_events += 1
            player.leaks.extend(message_leaks(message, player.user_id))
            player.woken.set()

    await player.feed.run(handle)


def banked_move(view: dict[str, Any], me: str, rules: RuleSet) -> tuple[str, dict[str, Any]] | None:
    """The basic-strategy action for the hand in turn, or an insurance answer, or None."""
    for box in view["boxes"]:
        if box["player_id"] == me and box["insurance_status"] == "offered":
            return "insurance", {"take": False, "box": box["box"]}
        if box["player_id"] == me and box["insurance_status"] == "even_money_offered":
            return "even-money", {"take": False, "box": box["box"]}
    turn = view.get("turn")
    if view["phase"] != "playing" or not turn or turn["player_id"] != me:
        return None
    box = next(b for b in view["boxes"] if b["player_id"] == me and b["box"] == turn["box"])
    hand = box["hands"][turn["hand"]]
    cards = [c["card"] for c in hand["cards"]]
    up = view["dealer"]["cards"][1 - rules.hole_card_index]["card"]
    if "actions" in view:  # what the server says this hand may do now
        offered = {HIT, STAND, DOUBLE, SPLIT} & set(view["actions"])
        move = basic_strategy(
            cards, up, offered or {STAND}, double_after_split=rules.double_after_split
        )
        return move, ({"confirm": True} if move == HIT else {})
    allowed = {HIT, STAND}
    if len(cards) == 2:
        if not hand["split"] or rules.double_after_split:
            allowed.add(DOUBLE)
        split_ace = hand["split"] and cards[0][0] == "A"
        if (
            points(cards[0]) == points(cards[1])
            and len(box["hands"]) < rules.max_hands
            and not (split_ace and not rules.resplit_aces)
        ):
            allowed.add(SPLIT)
    move = basic_strategy(cards, up, allowed, double_after_split=rules.double_after_split)
    return move, ({"confirm": True} if move == HIT else {})


def duel_move(view: dict[str, Any], me: str) -> tuple[str, dict[str, Any]] | None:
    if view["phase"] != "dueling":
        return None
    for box in view["boxes"]:
        if box["player_id"] == me and box["hands"][0]["status"] == "open":
            cards = [c["card"] for c in box["hands"][0]["cards"]]
            return DUEL_DEFAULT.move(cards), {}
    return None


async def find_table(player: Player, ruleset: str, seats_needed: int) -> int:
    if ruleset in ("classic", "atlantic_city"):
        return int((await player.ok("POST", "/api/tables/personal/", {"ruleset": ruleset}))["id"])
    tables = await player.ok("GET", f"/api/tables/?ruleset={ruleset}")
    for table in tables:
        mine = any(str(s["user_id"]) == player.user_id for s in table["seated"])
        if table["open_round"] is None and (
            mine or table["seats"] - len(table["seated"]) >= seats_needed
        ):
            return int(table["id"])
    raise ClientError(f"no {ruleset} table with {seats_needed} free seats and no round in play")


async def wake_or_poll(player: Player, timeout: float = 1.0) -> None:
    """Wait for the table's next WebSocket message, or `timeout` (then the caller polls)."""
    player.woken.clear()
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(player.woken.wait(), timeout=timeout)


async def play_round(players: list[Player], table_id: int, rules: RuleSet, bets: list[str]) -> str:
    """One round from DEAL (or READY) to settlement; returns its id."""
    if rules.kind == DUEL:
        for p in players:
            await p.ok("POST", f"/api/tables/{table_id}/ready/", {"ready": True})
        round_id = None
        waited = time.monotonic() + LOBBY_WAIT_S
        while round_id is None:  # full table: at once; otherwise when the lobby timer ends
            table = await players[0].ok("GET", f"/api/tables/{table_id}/")
            round_id = table["open_round"]
            if round_id is None:
                if time.monotonic() > waited:
                    ready = [s["user_id"] for s in table["seated"] if s["ready"]]
                    raise ClientError(
                        f"the duel did not start after the lobby timer (table {table_id}: "
                        f"ready {ready}, lobby deadline {table['lobby_deadline_ms']}, "
                        f"now {int(time.time() * 1000)})"
                    )
                await wake_or_poll(players[0], 0.5)
    else:
        round_id = ""
        for p in players:
            round_id = (await p.ok("POST", f"/api/tables/{table_id}/deal/", {"bets": bets}))[
                "round_id"
            ]
    deadline = time.monotonic() + STEP_TIMEOUT_S
    for _ in range(MAX_STEPS):
        acted = False
        for p in players:
            state = await p.ok("GET", f"/api/rounds/{round_id}/")
            if state["status"] != "open":
                return str(round_id)
            move = (
                duel_move(state["view"], p.user_id)
                if rules.kind == DUEL
                else banked_move(state["view"], p.user_id, rules)
            )
            if move is None:
                continue
            action, body = move
            response = await p.call("POST", f"/api/rounds/{round_id}/{action}/", body)
            if response.status_code == 409:
                continue  # someone else acted first or a timer fired: look again
            if response.status_code >= 400 and action in (DOUBLE, SPLIT):
                response = await p.call(
                    "POST", f"/api/rounds/{round_id}/{HIT if action == DOUBLE else STAND}/", {}
                )
            if response.status_code >= 400 and response.status_code != 409:
                raise ClientError(f"{action}: {response.status_code} {response.text[:300]}")
            acted = True
            deadline = time.monotonic() + STEP_TIMEOUT_S
        if not acted:
            if time.monotonic() > deadline:
                raise ClientError(f"round {round_id} made no progress for {STEP_TIMEOUT_S} s")
            await wake_or_poll(players[0])
    raise ClientError(f"round {round_id} did not finish in {MAX_STEPS} steps")


async def verify(player: Player, round_id: str, keys: KeyRing, replay: Any) -> bool:
    proof = await player.ok("GET", f"/api/fairness/rounds/{round_id}")
    try:
        report = verify_round(proof["bundle"], keys, replay_check=replay)
    except Exception as exc:  # a verifier bug is a failed verification, not a crash
        player.verify_failures.append(f"{round_id}: verifier error {type(exc).__name__}: {exc}")
        return False
    player.verify_failures.extend(f"{round_id}: {f}" for f in report.failures)
    return report.ok


async def play(args: argparse.Namespace) -> dict[str, Any]:
    rules = RULESETS[args.ruleset]
    base = args.url.rstrip("/")
    names = [args.user, *args.opponent]
    if rules.kind == DUEL and len(names) < 2:
        raise ClientError("a duel needs at least one --opponent (same password)")
    players = [await login(base, name, args.password) for name in names]
    me = players[0]
    table_id: int | None = None
    try:
        table_id = await find_table(me, args.ruleset, len(players))
        for p in players:
            await p.ok("POST", f"/api/tables/{table_id}/sit/")
            p.ws_task = asyncio.create_task(listen(p, base, table_id))
        for p in players:  # listen before the first round, so no message is missed
            await asyncio.wait_for(p.connected.wait(), timeout=15)
        keys = KeyRing.from_keys_document(await me.ok("GET", "/api/fairness/keys"))
        replay = load_engine_replay()
        before = (await me.ok("GET", "/api/wallet/balance/"))["available"]
        bets = [args.bet] if rules.kind != DUEL else []
        verified = 0
        started = time.perf_counter()
        for _ in range(args.rounds):
            round_id = await play_round(players, table_id, rules, bets)
            verified += await verify(me, round_id, keys, replay)
        seconds = time.perf_counter() - started
        await asyncio.sleep(0.2)  # the last round's messages are in flight
        after = (await me.ok("GET", "/api/wallet/balance/"))["available"]
    finally:
        for p in players:
            if p.ws_task is not None:
                p.ws_task.cancel()
            if table_id is not None:  # stand up: an empty seat holds up no one's next round
                with contextlib.suppress(ClientError, httpx.HTTPError):
                    await p.ok("POST", f"/api/tables/{table_id}/leave/")
            await p.http.aclose()
    latencies = sorted(x for p in players for x in p.latencies)
    return {
        "rounds": args.rounds,
        "ws_events": sum(p.ws_events for p in players),
        "verified": verified,
        "leaks": [leak for p in players for leak in p.leaks],
        "verify_failures": [f for p in players for f in p.verify_failures],
        "balance_before": before,
        "balance_after": after,
        "p50_ms": round(statistics.median(latencies) * 1000, 2) if latencies else None,
        "p99_ms": round(latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1000, 2)
        if latencies
        else None,
        "rounds_per_s": round(args.rounds / seconds, 2) if seconds else None,
    }


async def watch(args: argparse.Namespace) -> dict[str, Any]:
    """Spectate (or, logged in, watch as yourself) a table; print one line per message."""
    base = args.url.rstrip("/")
    token = ""
    viewer: str | None = None
    if args.user:
        player = await login(base, args.user, args.password or "")
        token, viewer = player.token, player.user_id
        await player.http.aclose()
    url, origin = feed_url(base, args.table, token)
    feed = Feed(url=url, origin=origin)
    seen, leaks = 0, []

    def handle(message: dict[str, Any]) -> bool:
        nonlocal seen
        if message.get("type") != "round":
            return False
        seen += 1
        found = message_leaks(message, viewer)
        leaks.extend(found)
        v = message["view"]
        if not args.json:
            print(
                f"{message['round_id'][:8]} v{message['version']:>3} {v['phase']:<9} "
                f"{','.join(message['events'])}" + (f"  LEAK {found}" if found else "")
            )
        return bool(args.count and seen >= args.count)

    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(feed.run(handle), timeout=args.seconds)
    return {"table": args.table, "ws_events": seen, "leaks": leaks, "reconnects": feed.drops}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m casino.client")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("play", help="log in, sit, play N rounds over REST + WebSocket, verify")
    p.add_argument("--url", required=True, help="e.g. http://127.0.0.1:8000")
    p.add_argument("--user", required=True)
    p.add_argument("--password", required=True)
    p.add_argument("--ruleset", required=True, choices=list(RULESETS))
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--bet", default="1.00", help="the bet per round (banked rule sets)")
    p.add_argument("--opponent", action="append", default=[], help="another player (duel)")
    p.add_argument("--json", action="store_true", help="print one JSON line")
    w = sub.add_parser("watch", help="watch a table's WebSocket; check every message for leaks")
    w.add_argument("--url", required=True)
    w.add_argument("--table", type=int, required=True)
    w.add_argument("--user", default="", help="watch as this player (default: spectator)")
    w.add_argument("--password", default="")
    w.add_argument("--seconds", type=float, default=60.0)
    w.add_argument("--count", type=int, default=0, help="stop after this many round messages")
    w.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    try:
        result = asyncio.run(play(args) if args.command == "play" else watch(args))
    except (ClientError, httpx.HTTPError, OSError) as exc:
        print(json.dumps({"error": str(exc)}) if args.json else f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result, sort_keys=True))
    else:
        for key, value in result.items():
            print(f"{key:>15}: {value}")
    if result["leaks"]:
        return 1
    return 0 if args.command == "watch" or result["verified"] == result["rounds"] else 1


if __name__ == "__main__":
    sys.exit(main())
