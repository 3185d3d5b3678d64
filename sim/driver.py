"""The driver: one seed, a world of players and tables, random steps, and checks after each.

`run_seed(seed, steps)` needs a configured, migrated database (the CLI makes a scratch one;
the tests use pytest-django's). Every random choice comes from `random.Random(seed)` (and
generators derived from the seed), and every choice depends only on the seed and on the
state the simulation observes, so the same seed replays the same run. See `sim.hooks` for
the virtual clock, the seeded fair-shoe secrets and the faults.

A step: the virtual clock moves on; due timer nudges are delivered (on time, twice, late or
never); every 5 virtual seconds the beat runs the deadline and lobby sweeps; then one event
happens: a player acts (through the HTTP API or the round service), a fault is injected, or
staff void a round; WebSocket clients connect, drop and resume. Then every invariant of
`sim.checks` is checked; the first step that breaks one raises `SimFailure` naming the seed
and the step.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from asgiref.sync import async_to_sync, sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db.models import Max
from django.test.utils import override_settings
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from casino.dashboard.review import round_void_by_staff
from casino.engine.bots import bot_command
from casino.engine.commands import (
    Command,
    DeclineInsurance,
    Double,
    Hit,
    Split,
    Stand,
    TakeEvenMoney,
    TakeInsurance,
)
from casino.engine.evolve import (
    BETTING,
    DUELING,
    INS_EVEN_MONEY_OFFERED,
    INS_OFFERED,
    INSURANCE,
    OPEN,
    PLAYING,
    RoundState,
)
from casino.engine.rules import DUEL, INSURANCE_UP_TO_HALF, RULESETS, USDC
from casino.engine.strategy import DOUBLE, HIT, SPLIT, STAND
from casino.engine.views import Viewer, allowed_moves, view
from casino.eventstore.models import StoredEvent
from casino.models import Round, RoundStatus, Seat, Table, TableStatus
from casino.platform.errors import ApplicationError
from casino.rounds import services, stream
from casino.rounds.tasks import round_nudge, sweep_beacons, sweep_deadlines
from casino.routing import websocket_application
from casino.tables import services as tables
from casino.tables.timers import lobby_nudge, sweep_lobbies
from ledger.money import format_amount
from ledger.selectors import wallet_balances
from ledger.services import wallet_deposit
from sim.checks import Checker, leaks
from sim.hooks import Clock, FaultHooks, TimerQueue, installed

RULESET_NAMES = ("classic", "atlantic_city", "duel_classic", "duel")
PLAYERS = 6
FUNDS = 300 * USDC
TOP_UP_BELOW = 40 * USDC
BEAT_MS = 5_000  # Celery beat runs the sweeps every 5 s
ORIGIN = (b"origin", b"http://testserver")
WS_LOSS_S = 5.0  # real seconds before a client treats a version as lost and resumes
WS_WAIT_S = 30.0  # real seconds a client may wait for a committed version (ample)
RESUME_ROUNDS = 50  # casino.live.consumers.RESUME_ROUNDS
RESUME_SENT = RESUME_ROUNDS  # a resuming client names its most recent rounds
# Statuses a player's request may get without a fault: success or a refusal (nothing changes).
REFUSALS = frozenset({400, 403, 404, 409, 422})
DEFAULT_STEPS = 300


class SimFailure(AssertionError):
    """An invariant broke: names the seed, the step and what broke."""

    def __init__(self, seed: int, step: int, problems: list[str], steps: int) -> None:
        self.seed, self.step, self.problems = seed, step, problems
        self.trace: list[str] = []
        shown = problems[:20] + (
            [f"... and {len(problems) - 20} more"] if len(problems) > 20 else []
        )
        super().__init__(
            f"VOPR seed {seed} failed at step {step}:\n  "
            + "\n  ".join(shown)
            + f"\nreplay: python -m sim --seed {seed} --steps {steps}"
        )


@dataclass
class SeedReport:
    seed: int
    steps: int = 0
    rounds: int = 0
    finished_rounds: int = 0
    http_requests: int = 0
    ws_messages: int = 0
    cpu_s: float = 0.0
    actions: Counter[str] = field(default_factory=Counter)
    faults: Counter[str] = field(default_factory=Counter)
    rulesets: Counter[str] = field(default_factory=Counter)  # rounds per rule set
    anomalies: Counter[str] = field(default_factory=Counter)  # recovered by the product
    trace: list[str] = field(default_factory=list)


@dataclass
class Player:
    user: Any
    pid: str
    api: APIClient
    index: int


@dataclass
class Intent:
    """One thing a player does, as an HTTP request and as a service call."""

    label: str
    method: str
    url: str
    body: dict[str, Any] | None
    service: Callable[[], Any]
    round_id: str | None = None


@dataclass
class WsClient:
    player: Player
    table: Table
    comm: Any = None
    seen: dict[str, int] = field(default_factory=dict)
    connection_seen: dict[str, int] = field(default_factory=dict)  # on the current socket
    base: int = 0  # event position when this client's live feed began
    since_opened: Any = None  # a resumed client: rounds opened from here are resent
    gap: str = ""  # a gap just seen: the client resumes


@dataclass
class Outcome:
    status: int
    code: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    body: Any = None
    error: str = ""


class Sim:
    def __init__(
        self,
        seed: int,
        steps: int = DEFAULT_STEPS,
        *,
        trace: bool = False,
    ) -> None:
        self.seed = seed
        self.steps = steps
        self.rng = random.Random(seed)
        self.clock = Clock()
        self.report = SeedReport(seed=seed)
        self.faults = self.report.faults
        self.timers = TimerQueue(random.Random(f"timers:{seed}"), self.faults)
        self.hooks = FaultHooks()
        self.trace_on = trace
        self.players: list[Player] = []
        self.personal: dict[tuple[int, str], Table] = {}
        self.shared: dict[str, Table] = {}
        self.clients: list[WsClient] = []
        self.problems: list[str] = []  # found while receiving (leaks, gaps)
        self.step_no = 0
        self.next_beat = self.clock.now_ms() + BEAT_MS
        self.keys = 0

    # --- running -------------------------------------------------------------------------

    def run(self) -> SeedReport:
        started = time.process_time()
        run = self._run_index()
        self.prefix = f"vopr{self.seed}r{run}-"
        with (
            # Shared tables on the local beacon, its key fixed by the seed (the same seed
            # replays the same shoes); its clock is the virtual one (sim.hooks).
            override_settings(
                THROTTLE_RATES={}, BEACON="local", LOCAL_BEACON_SEED=f"sim:{self.seed}"
            ),
            installed(
                clock=self.clock,
                timers=self.timers,
                faults=self.hooks,
                heads_seed=str(self.seed),
                # A second run of a seed in the same database needs other round ids.
                ids_seed=str(self.seed) if run == 0 else f"{self.seed}:{run}",
            ),
        ):
            try:
                async_to_sync(self._main)()
            except SimFailure as failure:
                failure.trace = self.report.trace
                raise
        self.report.cpu_s = round(time.process_time() - started, 3)
        return self.report

    def _run_index(self) -> int:
        """How many runs of this seed this database already holds (names must stay unique)."""
        User = get_user_model()
        return User.objects.filter(username__regex=rf"^vopr{self.seed}r[0-9]+-staff$").count()

    async def _main(self) -> None:
        await sync_to_async(self._setup)()
        try:
            for i in range(1, self.steps + 1):
                self.step_no = i
                problems = await sync_to_async(self._sync_step)()
                problems += await self._ws_step()
                problems += await sync_to_async(self._check)()
                if problems:
                    raise SimFailure(self.seed, i, problems, self.steps)
            self.step_no = self.steps + 1
            problems = await sync_to_async(self._drain)()
            for client in self.clients:
                if client.comm is not None:
                    problems += await self._pump(client)
            problems += self._take_problems()
            problems += await sync_to_async(self._final_checks)()
            if problems:
                raise SimFailure(self.seed, self.step_no, problems, self.steps)
        finally:
            for client in self.clients:
                if client.comm is not None:
                    with contextlib.suppress(Exception):  # an app cancelled by a failed wait
                        await client.comm.disconnect(timeout=WS_WAIT_S)
            await sync_to_async(self._close_tables)()

    def trace(self, text: str) -> None:
        if self.trace_on:
            self.report.trace.append(f"{self.step_no} @{self.clock.now_ms()}: {text}")

    # --- the world -----------------------------------------------------------------------

    def _setup(self) -> None:
        User = get_user_model()
        self.checker = Checker()
        for i in range(PLAYERS):
            user = User.objects.create_user(username=f"{self.prefix}p{i}")
            wallet_deposit(user=user, amount_micro=FUNDS, idempotency_key=f"{self.prefix}fund{i}")
            api = APIClient()
            api.force_authenticate(user)
            api.raise_request_exception = False
            player = Player(user=user, pid=str(user.pk), api=api, index=i)
            self.players.append(player)
            prefs = {
                "safety_net": self.rng.random() < 0.4,
                "offer_insurance": self.rng.random() < 0.8,
            }
            response = api.patch("/api/me/preferences/", prefs, format="json")
            if response.status_code != 200:
                raise SimFailure(self.seed, 0, [f"preferences: {response.status_code}"], 0)
        self.staff = User.objects.create_user(username=f"{self.prefix}staff", is_staff=True)
        self.shared["duel_classic"] = tables.table_create(
            name=f"{self.prefix}duel classic",
            ruleset="duel_classic",
            min_bet=USDC // 2,
            max_bet=50 * USDC,
            seats=4,
        )
        self.shared["duel"] = tables.table_create(
            name=f"{self.prefix}duel", ruleset="duel", min_bet=USDC, max_bet=USDC, seats=3
        )
        cache.delete(tables._lobby_key(self.shared["duel"].pk))  # a stale one, same table id

    def _tables(self) -> list[int]:
        return [t.pk for t in self.shared.values()] + [t.pk for t in self.personal.values()]

    def _close_tables(self) -> None:
        Seat.objects.filter(table_id__in=self._tables()).delete()
        Table.objects.filter(pk__in=self._tables()).update(status=TableStatus.CLOSED)

    # --- one step (the synchronous part) -------------------------------------------------

    def _sync_step(self) -> list[str]:
        rng = self.rng
        self.clock.advance(
            rng.randint(20_000, 130_000) if rng.random() < 0.12 else rng.randint(100, 4_000)
        )
        problems = self._deliver_nudges()
        if self.clock.now_ms() >= self.next_beat:
            problems += self._beat()
        roll = rng.random()
        if roll < 0.03:
            problems += self._staff_void()
        elif roll < 0.07:
            problems += self._player_step(fault="malfunction")
        elif roll < 0.10:
            problems += self._player_step(fault="commit_error")
        else:
            problems += self._player_step(fault=None)
        return problems

    def _deliver_nudges(self) -> list[str]:
        problems: list[str] = []
        for nudge in self.timers.due(self.clock.now_ms()):
            try:
                if nudge.kind == "round":
                    outcome = round_nudge(round_id=nudge.target, deadline_ms=nudge.deadline_ms)
                else:
                    outcome = lobby_nudge(table_id=int(nudge.target))
                self.trace(f"nudge {nudge.kind} {nudge.target} -> {outcome}")
            except Exception as exc:
                problems.append(f"nudge {nudge.kind} {nudge.target} raised {exc!r}")
        return problems

    def _beat(self) -> list[str]:
        """The beat's two sweeps, then: nothing may be left past its deadline."""
        now = self.clock.now_ms()
        self.next_beat = now + BEAT_MS
        problems: list[str] = []
        try:
            swept = sweep_deadlines()
            beacons = sweep_beacons()
            started = sweep_lobbies()
            self.trace(f"beat: {swept} deadlines, {beacons} beacons, {started} lobbies")
        except Exception as exc:
            return [f"sweep raised {exc!r}"]
        problems += self.checker.stuck(now)
        duel = self.shared["duel"]
        ready = Seat.objects.filter(table=duel, ready=True).count()
        deadline = tables.lobby_deadline(duel)
        if (
            ready >= RULESETS["duel"].min_seats
            and deadline is not None
            and deadline <= now
            and tables.open_round_at(duel) is None
        ):
            problems.append(f"stuck: duel lobby of table {duel.pk} past its deadline {deadline}")
        return problems

    # --- players -------------------------------------------------------------------------

    def _player_step(self, *, fault: str | None) -> list[str]:
        rng = self.rng
        player = rng.choice(self.players)
        ruleset = rng.choice(RULESET_NAMES)
        via_http = rng.random() < 0.55
        self._top_up(player)
        intent = self._intent(player, ruleset)
        if intent is None:
            self.report.actions["idle"] += 1
            return []
        duplicate = via_http and fault is None and rng.random() < 0.12
        if fault == "malfunction":
            self.hooks.malfunction_at = "{}.{}".format(*rng.choice(FaultHooks.TARGETS))
        elif fault == "commit_error":
            self.hooks.commit_error = True
        self.hooks.fired.clear()
        open_before = self._open_round_ids()
        try:
            if via_http:
                outcome, problems = self._http(player, intent, duplicate=duplicate)
            else:
                outcome, problems = self._service(player, intent)
        finally:
            self.hooks.disarm()
        self.report.actions[f"{'http' if via_http else 'service'}:{intent.label}"] += 1
        self.trace(
            f"{player.index} {'http' if via_http else 'svc'} {intent.label} {intent.body} "
            f"-> {outcome.status} {outcome.code or ''} {outcome.error}"
        )
        if intent.label == "personal" and outcome.status == 200 and isinstance(outcome.body, dict):
            made = Table.objects.get(pk=outcome.body["id"])  # the HTTP path made it
            self.personal[(player.index, made.ruleset)] = made
        fired = list(self.hooks.fired)
        if fired:
            kind = "commit_error" if "commit_error" in fired else "malfunction"
            self.faults[kind] += 1
            problems += self._after_fault(fired, intent, outcome, open_before)
        elif outcome.status >= 500 or outcome.error:
            problems.append(
                f"{intent.label} ({'HTTP' if via_http else 'service'}) failed without a fault: "
                f"{outcome.status} {outcome.code} {outcome.error}"
            )
        elif outcome.status != 200 and outcome.status not in REFUSALS:
            problems.append(f"{intent.label}: unexpected status {outcome.status} {outcome.body}")
        return problems

    def _open_round_ids(self) -> set[str]:
        return set(
            Round.objects.filter(table_id__in=self._tables(), status=RoundStatus.OPEN).values_list(
                "id", flat=True
            )
        )

    def _after_fault(
        self, fired: list[str], intent: Intent, outcome: Outcome, open_before: set[str]
    ) -> list[str]:
        """A malfunction must void the round it hit; a failing open must leave no round."""
        if outcome.code == "round_voided_malfunction":
            round_id = outcome.details.get("round")
            row = Round.objects.filter(pk=round_id).first()
            if row is None or row.status != RoundStatus.VOIDED:
                return [
                    f"fault {fired}: answered round_voided_malfunction but round {round_id} "
                    f"is {row.status if row else 'missing'}"
                ]
            if not row.outcome.startswith("voided: malfunction"):
                return [f"fault {fired}: round {round_id} voided as {row.outcome!r}"]
            return []
        if outcome.status >= 500 and intent.label in ("deal", "ready"):  # an open: no round
            new = self._open_round_ids() - open_before
            if new:
                return [f"fault {fired} in opening a round left round(s) {sorted(new)} open"]
            return []
        return [
            f"fault {fired} during {intent.label}: answered {outcome.status} {outcome.code} "
            f"{outcome.error} instead of voiding the round"
        ]

    def _top_up(self, player: Player) -> None:
        balance = wallet_balances(user_id=int(player.pid))["player_available"]
        if balance < TOP_UP_BELOW:
            self.keys += 1
            wallet_deposit(
                user=player.user,
                amount_micro=FUNDS,
                idempotency_key=f"{self.prefix}top-up{self.keys}",
            )
            self.report.actions["top_up"] += 1

    def _table(self, player: Player, ruleset: str) -> Table | None:
        if ruleset in self.shared:
            return self.shared[ruleset]
        return self.personal.get((player.index, ruleset))

    def _intent(self, player: Player, ruleset: str) -> Intent | None:
        rng = self.rng
        user = player.user
        table = self._table(player, ruleset)
        if table is None:  # a personal table, created (and sat at) on first use

            def personal() -> Table:
                made = tables.table_personal(user=user, ruleset=ruleset)
                self.personal[(player.index, ruleset)] = made
                return made

            return Intent(
                "personal", "post", "/api/tables/personal/", {"ruleset": ruleset}, personal
            )
        rules = RULESETS[ruleset]
        seated = Seat.objects.filter(table=table, user_id=user.pk).first()
        if seated is None:
            if rng.random() < 0.7:
                return Intent(
                    "sit",
                    "post",
                    f"/api/tables/{table.pk}/sit/",
                    None,
                    lambda: tables.seat_take(table=table, user=user),
                )
            return None
        current = tables.open_round_at(table)
        state = stream.round_state_for(round_id=current.id) if current is not None else None
        playing = state is not None and any(
            p.player_id == player.pid for p in state.opened.participants
        )
        if ruleset in self.shared and rng.random() < 0.04:
            return Intent(
                "leave",
                "post",
                f"/api/tables/{table.pk}/leave/",
                None,
                lambda: tables.seat_leave(table=table, user=user),
            )
        if state is not None and playing and rng.random() < 0.05:
            return self._command_intent(table, state, player, self._any_command(player.pid))
        if rules.kind == DUEL:
            if state is None:
                if seated.ready:
                    return None
                return Intent(
                    "ready",
                    "post",
                    f"/api/tables/{table.pk}/ready/",
                    {"ready": True},
                    lambda: tables.seat_ready(table=table, user=user, ready=True),
                )
            command = self._pick(state, player.pid) if playing else None
            return self._command_intent(table, state, player, command)
        if state is None or (state.phase == BETTING and playing):
            if state is not None and any(b.player_id == player.pid for b in state.boxes):
                return None  # already bet: waiting for the others
            return self._deal_intent(table, player)
        command = self._pick(state, player.pid) if playing else None
        return self._command_intent(table, state, player, command)

    def _deal_intent(self, table: Table, player: Player) -> Intent:
        rng = self.rng
        rules = RULESETS[table.ruleset]

        def amount() -> int:
            return int(min(table.min_bet * rng.choice((1, 1, 2, 3, 5, 10, 20)), table.max_bet))

        bets = [amount()]
        if rules.max_boxes > 1:
            bets = [amount() if rng.random() < 0.85 else 0 for _ in range(rng.randint(1, 3))]
            if not any(bets):
                bets[0] = amount()
        mode = rng.choices(("bet", "rebet", "double"), (8, 1, 1))[0]
        body: dict[str, Any] = {"mode": mode}
        if mode == "bet":
            body["bets"] = [format_amount(b) for b in bets]
        user = player.user
        return Intent(
            "deal",
            "post",
            f"/api/tables/{table.pk}/deal/",
            body,
            lambda: tables.table_deal(
                table=table, user=user, mode=mode, bets=bets if mode == "bet" else []
            ),
        )

    def _any_command(self, pid: str) -> Command:
        """Any command at all, legal now or not (a refusal must change nothing)."""
        return self.rng.choice(
            (
                Hit(pid),
                Hit(pid, confirm=True),
                Stand(pid),
                Double(pid),
                Split(pid),
                TakeInsurance(pid),
                DeclineInsurance(pid),
                TakeEvenMoney(pid),
            )
        )

    def _pick(self, state: RoundState, pid: str) -> Command | None:
        """A command the rules allow now: basic strategy or any legal move, chosen by the seed."""
        rng = self.rng
        rules = state.rules
        if state.phase == INSURANCE:
            offered = [
                b
                for b in state.boxes
                if b.player_id == pid
                and b.insurance_status in (INS_OFFERED, INS_EVEN_MONEY_OFFERED)
            ]
            if not offered:
                return None
            box = rng.choice(offered)
            options: list[Command] = [DeclineInsurance(pid, box.box)]
            if box.insurance_status == INS_EVEN_MONEY_OFFERED:
                options.append(TakeEvenMoney(pid, box.box))
            else:
                options.append(TakeInsurance(pid, box.box))
                if rules.insurance == INSURANCE_UP_TO_HALF:
                    unit = state.opened.options.chip_unit
                    half = box.bet // 2 // unit
                    if half >= 1:
                        options.append(TakeInsurance(pid, box.box, unit * rng.randint(1, half)))
            return rng.choice(options)
        if state.phase == DUELING:
            if not any(b.player_id == pid and b.hands[0].status == OPEN for b in state.boxes):
                return None
            return rng.choice((Hit(pid), Stand(pid), bot_command(state, pid) or Stand(pid)))
        if state.phase == PLAYING and state.turn >= 0:
            if state.boxes[state.turn].player_id != pid:
                return None
            command: Command | None
            if rng.random() < 0.5:
                command = bot_command(state, pid)
            else:
                move = rng.choice(sorted(allowed_moves(rules, state)))
                command = {HIT: Hit, STAND: Stand, DOUBLE: Double, SPLIT: Split}[move](pid)
            if isinstance(command, Hit) and rng.random() < 0.5:
                command = Hit(pid, confirm=True)
            return command
        return None

    def _command_intent(
        self, table: Table, state: RoundState, player: Player, command: Command | None
    ) -> Intent | None:
        if command is None:
            return None
        round_id = state.opened.round_id
        base = f"/api/rounds/{round_id}/"
        route: tuple[str, dict[str, Any] | None]
        if isinstance(command, Hit):
            route = ("hit", {"confirm": command.confirm})
        elif isinstance(command, Stand):
            route = ("stand", None)
        elif isinstance(command, Double):
            route = ("double", None)
        elif isinstance(command, Split):
            route = ("split", None)
        elif isinstance(command, TakeInsurance):
            body: dict[str, Any] = {"take": True, "box": command.box}
            if command.amount is not None:
                body["amount"] = format_amount(command.amount)
            route = ("insurance", body)
        elif isinstance(command, DeclineInsurance):
            route = ("insurance", {"take": False, "box": command.box})
        elif isinstance(command, TakeEvenMoney):
            route = ("even-money", {"take": True, "box": command.box})
        else:  # pragma: no cover - bets go through DEAL
            raise AssertionError(command)
        return Intent(
            route[0],
            "post",
            base + route[0] + "/",
            route[1],
            lambda: services.round_command(round_id=round_id, command=command),
            round_id=round_id,
        )

    # --- the two ways in -----------------------------------------------------------------

    def _http(
        self, player: Player, intent: Intent, *, duplicate: bool
    ) -> tuple[Outcome, list[str]]:
        self.keys += 1
        key = f"{self.prefix}{self.step_no}-{self.keys}"

        def send() -> Any:
            self.report.http_requests += 1
            return player.api.post(
                intent.url, intent.body or {}, format="json", HTTP_IDEMPOTENCY_KEY=key
            )

        response = send()
        outcome = self._outcome(response)
        problems = leaks(outcome.body, player.pid, f"HTTP {intent.url}")
        if duplicate:
            self.faults["idempotent_duplicate"] += 1
            position = StoredEvent.objects.aggregate(p=Max("position"))["p"]
            again = send()
            body = self._outcome(again).body
            problems += leaks(body, player.pid, f"HTTP {intent.url} (repeated)")
            # A 409 or 5xx frees the key (nothing changed: the retry runs again); anything
            # else answers the same, and a success is replayed without running again.
            if outcome.status not in (409,) and outcome.status < 500:
                if again.status_code != response.status_code or body != outcome.body:
                    problems.append(
                        f"idempotency: the repeated {intent.url} answered {again.status_code} "
                        f"{body} instead of {response.status_code} {outcome.body}"
                    )
                if outcome.status == 200 and again.get("Idempotent-Replayed") != "true":
                    problems.append(f"idempotency: the repeated {intent.url} was not replayed")
                after = StoredEvent.objects.aggregate(p=Max("position"))["p"]
                if after != position:
                    problems.append(f"idempotency: the repeated {intent.url} appended events")
        return outcome, problems

    def _outcome(self, response: Any) -> Outcome:
        try:
            body = response.json()
        except (ValueError, TypeError):
            body = None
        error = body.get("error") if isinstance(body, dict) else None
        if isinstance(error, dict):
            return Outcome(
                response.status_code, error.get("code"), error.get("details") or {}, body
            )
        outcome = Outcome(response.status_code, body=body)
        exc_info = getattr(response, "exc_info", None)
        if response.status_code >= 500:
            outcome.error = repr(exc_info[1]) if exc_info else "server error"
        return outcome

    def _service(self, player: Player, intent: Intent) -> tuple[Outcome, list[str]]:
        try:
            result = intent.service()
        except ApplicationError as exc:
            return Outcome(exc.status_code, exc.code, dict(exc.extra or {})), []
        except Exception as exc:
            return Outcome(500, error=repr(exc)), []
        problems: list[str] = []
        if isinstance(result, services.RoundResult):
            shown = view(result.state, Viewer("player", player.pid))
            problems += leaks(shown, player.pid, f"service {intent.label}")
        return Outcome(200), problems

    # --- staff ---------------------------------------------------------------------------

    def _staff_void(self) -> list[str]:
        # Any round not voided yet: one in play, or one already settled (a late void).
        rounds = Round.objects.filter(table_id__in=self._tables())
        rounds = rounds.exclude(status=RoundStatus.VOIDED)
        candidates = list(rounds.order_by("opened_at", "id").values_list("id", flat=True))
        if not candidates:
            return []
        round_id = self.rng.choice(candidates)
        self.faults["staff_void"] += 1
        try:
            round_void_by_staff(
                round_id=round_id, reason="vopr: staff void at a random moment", user=self.staff
            )
        except ApplicationError as exc:
            return [f"staff void of {round_id} refused: {exc.code} {exc.message}"]
        self.trace(f"staff void {round_id}")
        status = Round.objects.get(pk=round_id).status
        if status != RoundStatus.VOIDED:
            return [f"staff void of {round_id} left it {status}"]
        return []

    # --- WebSocket clients ---------------------------------------------------------------

    async def _ws_step(self) -> list[str]:
        rng = self.rng
        roll = rng.random()
        live = [c for c in self.clients if c.comm is not None]
        dropped = [c for c in self.clients if c.comm is None]
        problems: list[str] = []
        if roll < 0.05 and len(self.clients) < 3:
            player = rng.choice(self.players)
            choices = list(self.shared.values()) + [
                t for (i, _), t in sorted(self.personal.items()) if i == player.index
            ]
            client = WsClient(player=player, table=rng.choice(choices))
            self.clients.append(client)
            problems += await self._connect(client, resume=False)
        elif roll < 0.09 and live:
            client = rng.choice(live)
            await client.comm.disconnect(timeout=WS_WAIT_S)
            client.comm = None
            self.report.actions["ws_drop"] += 1
        elif roll < 0.13 and dropped:
            client = rng.choice(dropped)
            self.faults["ws_drop_resume"] += 1
            problems += await self._connect(client, resume=True)
        for client in self.clients:
            if client.comm is not None:
                problems += await self._pump(client)
        return problems + self._take_problems()

    def _take_problems(self) -> list[str]:
        out, self.problems = self.problems, []
        return out

    async def _connect(self, client: WsClient, *, resume: bool) -> list[str]:

        token, _ = await sync_to_async(Token.objects.get_or_create)(user=client.player.user)
        comm = WebsocketCommunicator(
            websocket_application(),
            f"/ws/tables/{client.table.pk}/?token={token.key}",
            headers=[ORIGIN],
        )
        connected, _ = await comm.connect(timeout=WS_WAIT_S)
        if not connected:
            return [f"ws: player {client.player.index} could not connect to {client.table.pk}"]
        hello = await comm.receive_json_from(timeout=WS_WAIT_S)
        if hello.get("type") != "hello":
            return [f"ws: expected hello, got {hello}"]
        client.comm = comm
        client.connection_seen = {}
        position = await sync_to_async(self._position)()
        sent = dict(list(client.seen.items())[-RESUME_SENT:]) if resume else {}
        if sent:
            client.since_opened = await sync_to_async(self._since)(client.table, list(sent))
            await comm.send_json_to({"type": "resume", "rounds": sent})
        else:
            client.base, client.since_opened = position, None
        self.report.actions["ws_resume" if resume else "ws_connect"] += 1
        return []

    @staticmethod
    def _position() -> int:
        return int(StoredEvent.objects.aggregate(p=Max("position"))["p"] or 0)

    @staticmethod
    def _since(table: Table, round_ids: list[str]) -> Any:
        return (
            Round.objects.filter(table=table, id__in=round_ids)
            .order_by("opened_at")
            .values_list("opened_at", flat=True)
            .first()
        )

    def _expected(self, client: WsClient) -> dict[str, int]:
        """round id -> the version this client must have reached by now."""
        rows = list(
            Round.objects.filter(table=client.table)
            .order_by("opened_at")
            .values_list("id", "opened_at", "status")
        )
        streams = {
            r["stream_id"]: (r["v"], r["p"])
            for r in StoredEvent.objects.filter(stream_id__in=[r[0] for r in rows])
            .values("stream_id")
            .annotate(v=Max("version"), p=Max("position"))
        }
        resent: set[str] = set()
        if client.since_opened is not None:  # the consumer's own resume window (50 rounds)
            window = [rid for rid, opened, _ in rows if opened >= client.since_opened]
            resent = set(window[:RESUME_ROUNDS])
        out = {}
        for rid, _, status in rows:
            version, position = streams.get(rid, (0, 0))
            if status == RoundStatus.OPEN or (
                position > client.base and (client.since_opened is None or rid in resent)
            ):
                out[rid] = version
        return out

    async def _pump(self, client: WsClient) -> list[str]:
        """Read what the client was sent; every committed version must reach it, in order.
        A version that does not come within WS_LOSS_S, or a gap, is what a real client
        recovers from by reconnecting with a resume; the simulation does the same, counts it
        (`ws_lost_then_resumed`: the Redis channel layer drops messages when other sockets of
        the process disconnect, django/channels#1683), and fails the seed only if the resume
        does not bring every version.
        """
        problems = await self._read(client, WS_LOSS_S)
        if problems is None:
            return []
        self.report.anomalies["ws_lost_then_resumed"] += 1
        self.trace(f"ws: player {client.player.index} resumes after {problems}")
        await client.comm.disconnect(timeout=WS_WAIT_S)
        client.comm = None
        problems += await self._connect(client, resume=True)
        after = await self._read(client, WS_WAIT_S) if client.comm is not None else problems
        if after is None:
            return []
        return [f"{p} (also after a resume)" for p in after]

    async def _read(self, client: WsClient, wait_s: float) -> list[str] | None:
        """Messages until every expected version came (None), or what is still missing."""
        expected = await sync_to_async(self._expected)(client)
        comm = client.comm
        deadline = time.monotonic() + wait_s
        while True:
            if client.gap:
                gap, client.gap = client.gap, ""
                return [gap]
            missing = {r: v for r, v in expected.items() if client.seen.get(r, 0) < v}
            if not missing and comm.output_queue.empty():
                return None
            try:  # never comm.receive_output(timeout): it cancels the consumer on a timeout
                raw = await asyncio.wait_for(
                    comm.output_queue.get(), timeout=max(0.05, deadline - time.monotonic())
                )
            except TimeoutError:
                return [
                    f"ws: player {client.player.index} at table {client.table.pk} never "
                    f"got versions {missing} (has {client.seen})"
                ]
            if raw.get("type") == "websocket.close":
                client.comm = None
                return [f"ws: the server closed player {client.player.index}'s socket: {raw}"]
            self._take(client, json.loads(raw["text"]))

    def _take(self, client: WsClient, msg: dict[str, Any]) -> None:
        self.report.ws_messages += 1
        where = (
            f"WS message to player {client.player.index} at table {client.table.pk} "
            f"(v{msg.get('from_version')}..{msg.get('version')} {msg.get('events')})"
        )
        found = leaks(msg, client.player.pid, where)
        if found and self.trace_on:
            self.trace(f"leaking message: {json.dumps(msg)[:3000]}")
        self.problems += found
        if msg.get("type") != "round":
            if msg.get("type") == "error":
                self.problems.append(f"{where}: error {msg}")
            return
        round_id, seen = msg["round_id"], client.seen.get(msg["round_id"])
        on_this = client.connection_seen.get(round_id)
        if on_this is not None and msg["version"] <= on_this:  # a new socket may repeat
            self.problems.append(f"{where}: version {msg['version']} again (had {on_this})")
        if seen is not None and msg["from_version"] > seen + 1:
            # Not recorded as seen: the client resumes from `seen` (see _pump).
            client.gap = f"{where}: gap in round {round_id}: had {seen}, got {msg['from_version']}"
            return
        client.seen[round_id] = max(seen or 0, msg["version"])
        client.connection_seen[round_id] = max(on_this or 0, msg["version"])

    # --- checks --------------------------------------------------------------------------

    def _check(self) -> list[str]:
        touched = self.checker.touched_rounds()
        return self.checker.ledger() + self.checker.rounds(touched)

    def _drain(self) -> list[str]:
        """No more faults: let every deadline pass until each round of the run finished."""
        problems: list[str] = []
        for _ in range(12):
            if not self._open_round_ids():
                break
            self.clock.advance(150_000)
            problems += self._deliver_nudges()
            problems += self._beat()
        still = self._open_round_ids()
        if still:
            problems.append(
                f"drain: rounds still open after every deadline passed: {sorted(still)}"
            )
        problems += self._check()
        return problems

    def _final_checks(self) -> list[str]:
        ids = list(
            Round.objects.filter(table_id__in=self._tables())
            .order_by("opened_at", "id")
            .values_list("id", flat=True)
        )
        self.report.rounds = len(ids)
        self.report.rulesets = Counter(
            Round.objects.filter(id__in=ids).values_list("ruleset", flat=True)
        )
        self.report.finished_rounds = (
            Round.objects.filter(id__in=ids).exclude(status=RoundStatus.OPEN).count()
        )
        self.report.steps = self.steps
        return self.checker.ledger() + self.checker.rounds(ids)


def run_seed(seed: int, steps: int = DEFAULT_STEPS, *, trace: bool = False) -> SeedReport:
    """Run one seed; raises SimFailure (with the seed and step) when an invariant breaks."""
    return Sim(seed, steps, trace=trace).run()
