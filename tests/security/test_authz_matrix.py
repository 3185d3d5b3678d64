"""The authorization matrix of the REST API (issue 9, "Security"; issue 7, player A vs B).

Every URL pattern the resolver knows is either a row here or listed in NOT_REST with the
reason, so a new endpoint without a row fails `test_every_url_pattern_has_a_row`.

Each row is one endpoint and method with the exact status every kind of caller gets:

    anon    no credentials
    owner   the player who owns the table, the round, the withdrawal used in the URL
    other   another player
    reviewer, manager, auditor   the staff roles (casino/dashboard/roles.py), is_staff
    staff   the superuser `staff` account of seed_demo

A call that is refused (any status >= 400) must change nothing: balances, journal, rounds,
seats, tables, withdrawals, preferences, client seeds and stats profiles are compared
before and after.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.test import APIClient

from casino.dashboard.models import PlayerProfile
from casino.engine.shoe import StackedShoe
from casino.models import PlayerPreferences, Round, Seat, Table
from casino.platform import heartbeat
from casino.rounds import seeds
from casino.tables.services import demo_table
from fairness import transparency
from fairness.models import ClientSeed
from ledger import services as ledger_services
from ledger.models import JournalEntry, WithdrawalRequest
from ledger.selectors import wallet_balances
from tests.api.conftest import PASSWORD

pytestmark = pytest.mark.django_db

ACTORS = ("anon", "owner", "other", "reviewer", "manager", "auditor", "staff")
FUNDS = 1_000_000_000  # 1,000 USDC for each player

# URL patterns that are not REST endpoints of the matrix, and why.
NOT_REST = {
    "admin/": "the staff dashboard (Django admin); its roles are tested in tests/dashboard",
}


@dataclass
class Ctx:
    users: dict[str, Any]
    table: int  # owner's personal classic table, with an open round
    duel: int  # a duel table the owner sits at
    open_round: str  # owner's round in play (16 against a ten, owner to act)
    settled_round: str  # owner's finished round (it has a public proof)
    withdrawal: int  # owner's pending withdrawal


@dataclass
class Row:
    name: str  # the URL pattern's name
    method: str
    url: Callable[[Ctx], str]
    expect: dict[str, int]
    body: Callable[[Ctx], Any] = field(default=lambda ctx: None)
    session: bool = False  # a page of the player site: signed in by its session cookie


def everyone(status: int) -> dict[str, int]:
    return dict.fromkeys(ACTORS, status)


def signed_in(status: int, **overrides: int) -> dict[str, int]:
    """401 for anon, `status` for everyone signed in, except the overrides."""
    return {**everyone(status), "anon": 401, **overrides}


def players_only(status: int, **overrides: int) -> dict[str, int]:
    """IsAdminUser-style refusal: anon 401, players 403, staff roles `status`."""
    return {**signed_in(status), "owner": 403, "other": 403, **overrides}


STAFF_ROLES = ("reviewer", "manager", "auditor", "staff")
SOLANA_ADDRESS = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"  # a withdrawal's destination


def _owner_token(ctx: Ctx) -> int:
    """A login token of the owner (a new one per call)."""
    from casino.api.auth import login_token_create

    return int(login_token_create(user=ctx.users["owner"])[1].pk)


R = "/api/rounds/{}/"


def _log_size() -> int:
    return transparency.current_size()


ROWS = [
    # --- public: no credentials needed
    Row("healthz", "get", lambda c: "/healthz", everyone(200)),
    Row("schema", "get", lambda c: "/api/schema/", everyone(200)),
    Row("api-docs", "get", lambda c: "/api/docs/", everyone(200)),
    Row("fairness-verify", "get", lambda c: "/fairness/verify/", everyone(200)),
    # --- the player site's pages (HTML; what they show comes from the REST rows below)
    Row("site-root", "get", lambda c: "/", everyone(302)),
    Row("site-lobby", "get", lambda c: "/play/", everyone(200)),  # anon: the sign-in form
    Row("site-events", "get", lambda c: "/play/events/", everyone(200)),
    Row("site-leaderboard", "get", lambda c: "/play/leaderboard/", everyone(200)),
    Row("site-rules-index", "get", lambda c: "/play/rules/", everyone(200)),
    Row("site-rules", "get", lambda c: "/play/rules/classic/", everyone(200)),
    Row("site-asset", "get", lambda c: "/play/static/site/site.css", everyone(200)),
    Row(
        "site-history",
        "get",
        lambda c: "/play/history/",
        {**everyone(200), "anon": 302},
        session=True,
    ),
    # the owner's personal table: anyone else meets no such table
    Row(
        "site-table",
        "get",
        lambda c: f"/play/{c.table}/",
        {**everyone(404), "anon": 302, "owner": 200},
        session=True,
    ),
    Row("fairness-keys", "get", lambda c: "/api/fairness/keys/", everyone(200)),
    Row("fairness-beacon", "get", lambda c: "/api/fairness/beacon/", everyone(200)),
    Row(
        "fairness-commitment",
        "get",
        lambda c: f"/api/fairness/commitment/?table={c.table}",
        everyone(409),  # public; 409 while the table's round is in play
    ),
    Row(
        "fairness-round-proof",
        "get",
        lambda c: f"/api/fairness/rounds/{c.settled_round}/",
        everyone(200),
    ),
    Row(
        "fairness-seed-chain",
        "get",
        lambda c: f"/api/fairness/chains/{Round.objects.get(pk=c.settled_round).chain_id}/",
        everyone(200),
    ),
    # the transparency log: public, read-only; a cosignature authenticates itself
    Row("log-checkpoint", "get", lambda c: "/api/log/checkpoint/", everyone(200)),
    Row(
        "log-checkpoints",
        "get",
        lambda c: f"/api/log/checkpoints/?size={_log_size()}",
        everyone(200),
    ),
    Row("log-vkey", "get", lambda c: "/api/log/vkey/", everyone(200)),
    Row(
        "log-inclusion",
        "get",
        lambda c: f"/api/log/proof/inclusion/?index=0&size={_log_size()}",
        everyone(200),
    ),
    Row(
        "log-consistency",
        "get",
        lambda c: f"/api/log/proof/consistency/?from=1&to={_log_size()}",
        everyone(200),
    ),
    Row("log-leaves", "get", lambda c: "/api/log/leaves/?start=0&end=2", everyone(200)),
    Row(
        "log-cosignatures",
        "post",
        lambda c: "/api/log/cosignatures/",
        everyone(403),  # no registered witness signed it: unknown_witness, nothing kept
        body=lambda c: {"size": _log_size(), "line": "\u2014 stranger.example AAAA"},
    ),
    Row("stats-leaderboard", "get", lambda c: "/api/stats/leaderboard/", everyone(200)),
    Row("stats-biggest-wins", "get", lambda c: "/api/stats/biggest-wins/", everyone(200)),
    Row("stats-tables", "get", lambda c: "/api/stats/tables/", everyone(200)),
    # login needs no session: anyone may log in as the owner with the owner's password
    Row(
        "auth-login",
        "post",
        lambda c: "/api/auth/login/",
        everyone(200),
        body=lambda c: {"username": c.users["owner"].username, "password": PASSWORD},
    ),
    # --- the caller's own things: every signed-in user has their own
    Row("auth-logout", "post", lambda c: "/api/auth/logout/", signed_in(204)),
    Row("auth-me", "get", lambda c: "/api/auth/me/", signed_in(200)),
    Row("auth-tokens", "get", lambda c: "/api/auth/tokens/", signed_in(200)),
    Row(
        "auth-token-revoke",
        "delete",
        lambda c: f"/api/auth/tokens/{_owner_token(c)}/",
        signed_in(404, owner=204),  # the owner's login token: nobody else's to revoke
    ),
    Row("fairness-client-seed", "get", lambda c: "/api/fairness/client-seed/", signed_in(200)),
    Row(
        "fairness-client-seed",
        "put",
        lambda c: "/api/fairness/client-seed/",
        signed_in(200, owner=409),  # not while one's round is in play
        body=lambda c: {"client_seed": "mine-0001"},
    ),
    Row("stats-profile", "get", lambda c: "/api/stats/profile/", signed_in(200)),
    Row(
        "stats-profile",
        "put",
        lambda c: "/api/stats/profile/",
        signed_in(200),
        body=lambda c: {"display_name": "Me"},
    ),
    Row("me-preferences", "get", lambda c: "/api/me/preferences/", signed_in(200)),
    Row(
        "me-preferences",
        "patch",
        lambda c: "/api/me/preferences/",
        signed_in(200),
        body=lambda c: {"felt": "red"},
    ),
    Row("me-rounds", "get", lambda c: "/api/me/rounds/", signed_in(200)),
    Row("me-rounds-current", "get", lambda c: "/api/me/rounds/current/", signed_in(200)),
    Row("wallet-balance", "get", lambda c: "/api/wallet/balance/", signed_in(200)),
    Row("wallet-entries", "get", lambda c: "/api/wallet/entries/", signed_in(200)),
    Row(
        "wallet-withdrawal-request",
        "post",
        lambda c: "/api/wallet/withdrawals/",
        # staff accounts hold no money: their own request is refused for lack of funds
        signed_in(201, **dict.fromkeys(STAFF_ROLES, 409)),
        body=lambda c: {"amount": "1", "network": "solana", "address": SOLANA_ADDRESS},
    ),
    Row(
        "wallet-faucet",
        "post",
        lambda c: "/api/wallet/faucet/",
        signed_in(201),  # demo mode only (on in the tests): each credits their own wallet
        body=lambda c: {"amount": "1"},
    ),
    Row("tables-list", "get", lambda c: "/api/tables/", signed_in(200)),
    Row(
        "tables-personal",
        "post",
        lambda c: "/api/tables/personal/",
        signed_in(200),
        body=lambda c: {"ruleset": "classic"},
    ),
    # --- the owner's table and round
    Row(
        "tables-detail",
        "get",
        lambda c: f"/api/tables/{c.table}/",
        signed_in(200, other=404),  # another's personal table does not exist for you
    ),
    Row(
        "tables-sit",
        "post",
        lambda c: f"/api/tables/{c.table}/sit/",
        signed_in(403, owner=200),  # the owner is seated already: sitting again is a no-op
    ),
    Row(
        "tables-leave",
        "post",
        lambda c: f"/api/tables/{c.table}/leave/",
        # the owner may stand up mid-round (the abandoned-hand policy finishes the hand)
        signed_in(403, owner=200),
    ),
    Row(
        "tables-ready",
        "post",
        lambda c: f"/api/tables/{c.duel}/ready/",
        signed_in(409, owner=200),  # only a seated player is ready
        body=lambda c: {"ready": True},
    ),
    Row(
        "tables-deal",
        "post",
        lambda c: f"/api/tables/{c.table}/deal/",
        signed_in(403, owner=409),  # the owner's round is still in play
        body=lambda c: {"bets": ["1"]},
    ),
    Row(
        "rounds-state",
        "get",
        lambda c: R.format(c.open_round),
        signed_in(200, other=403),  # staff roles read every round (hole card still hidden)
    ),
    Row("rounds-hit", "post", lambda c: R.format(c.open_round) + "hit/", signed_in(403, owner=200)),
    Row(
        "rounds-stand",
        "post",
        lambda c: R.format(c.open_round) + "stand/",
        signed_in(403, owner=200),
    ),
    Row(
        "rounds-double",
        "post",
        lambda c: R.format(c.open_round) + "double/",
        signed_in(403, owner=200),
    ),
    Row(
        "rounds-split",
        "post",
        lambda c: R.format(c.open_round) + "split/",
        signed_in(403, owner=409),  # 9 and 7 do not split
    ),
    Row(
        "rounds-insurance",
        "post",
        lambda c: R.format(c.open_round) + "insurance/",
        signed_in(403, owner=409),  # no ace up: no insurance
        body=lambda c: {"take": True},
    ),
    Row(
        "rounds-even-money",
        "post",
        lambda c: R.format(c.open_round) + "even-money/",
        signed_in(403, owner=409),
        body=lambda c: {"take": True},
    ),
    Row(
        "me-rounds-detail",
        "get",
        lambda c: f"/api/me/rounds/{c.open_round}/",
        signed_in(403, owner=200),  # recall is the player's own: staff use rounds-state
    ),
    # --- staff endpoints
    Row(
        "tables-create",
        "post",
        lambda c: "/api/staff/tables/",
        players_only(403, manager=201, staff=201),  # casino.add_table: managers
        body=lambda c: {"name": "New", "ruleset": "classic"},
    ),
    Row(
        "wallet-staff-deposit",
        "post",
        lambda c: "/api/wallet/staff/deposits/",
        players_only(403, staff=201),  # minting money: superusers only
        body=lambda c: {"user_id": c.users["owner"].pk, "amount": "5"},
    ),
    Row(
        "wallet-staff-withdrawals",
        "get",
        lambda c: "/api/wallet/staff/withdrawals/",
        players_only(200),
    ),
    Row(
        "wallet-staff-withdrawal-complete",
        "post",
        lambda c: f"/api/wallet/staff/withdrawals/{c.withdrawal}/complete/",
        players_only(403, manager=200, staff=200),  # dashboard.resolve_withdrawal
    ),
    Row(
        "wallet-staff-withdrawal-cancel",
        "post",
        lambda c: f"/api/wallet/staff/withdrawals/{c.withdrawal}/cancel/",
        players_only(403, manager=200, staff=200),
    ),
    Row(
        "wallet-staff-receivables",
        "get",
        lambda c: "/api/wallet/staff/receivables/",
        players_only(200),
    ),
    Row(
        "audit-export",
        "get",
        lambda c: "/api/audit/export/?since=2000-01-01&until=2000-12-31",
        players_only(403, auditor=200, staff=200),  # dashboard.export_rounds
    ),
]

# Every round deals these: the owner has 9H 7D = 16 against the dealer's TS (hole 5C) and
# must act. Standing on 16 settles the first round (the dealer draws 4S to 19).
CARDS = ["9H", "5C", "7D", "TS"] + ["4S"] * 40


def _walk(patterns: list[Any], prefix: str = "") -> list[tuple[str, URLPattern]]:
    found: list[tuple[str, URLPattern]] = []
    for pattern in patterns:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            if route in NOT_REST:
                continue
            found += _walk(pattern.url_patterns, route)
        else:
            found.append((route, pattern))
    return found


def _methods(pattern: URLPattern) -> set[str]:
    view = getattr(pattern.callback, "view_class", None)
    if view is None:  # a plain function view: GET only (healthz)
        return {"get"}
    return {m for m in ("get", "post", "put", "patch", "delete") if hasattr(view, m)}


def test_every_url_pattern_has_a_row() -> None:
    served = {
        (pattern.name, method)
        for _, pattern in _walk(get_resolver().url_patterns)
        for method in _methods(pattern)
    }
    rows = {(row.name, row.method) for row in ROWS}
    assert served - rows == set(), "endpoints without a row in the authorization matrix"
    assert rows - served == set(), "rows for endpoints that do not exist"
    assert all(set(row.expect) == set(ACTORS) for row in ROWS)


def _user(name: str, *, staff: bool = False, superuser: bool = False, funds: int = 0) -> Any:
    user = get_user_model().objects.create_user(
        username=name, password=PASSWORD, is_staff=staff, is_superuser=superuser
    )
    if funds:
        ledger_services.wallet_deposit(user=user, amount_micro=funds, idempotency_key=f"f:{name}")
    return user


_keys = itertools.count()


def _client(user: Any | None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


def _post(client: APIClient, url: str, body: Any = None) -> Any:
    return client.post(url, body or {}, format="json", HTTP_IDEMPOTENCY_KEY=f"m{next(_keys)}")


@pytest.fixture
def ctx(monkeypatch: pytest.MonkeyPatch, settings: Any) -> Ctx:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    shoe = StackedShoe(list(CARDS))
    monkeypatch.setattr(seeds, "shoe_for_open", lambda command: shoe)
    monkeypatch.setattr(seeds, "shoe_for", lambda state: None if state.finished else shoe)
    users = {
        "owner": _user("owner", funds=FUNDS),
        "other": _user("other", funds=FUNDS),
        "staff": _user("staff", staff=True, superuser=True),
    }
    for role in ("reviewer", "manager", "auditor"):
        users[role] = _user(role, staff=True)
        users[role].groups.add(Group.objects.get(name=role))
    owner = _client(users["owner"])
    table = _post(owner, "/api/tables/personal/", {"ruleset": "classic"}).json()["id"]
    settled = _post(owner, f"/api/tables/{table}/deal/", {"bets": ["1"]}).json()["round_id"]
    stood = _post(owner, R.format(settled) + "stand/").json()
    assert stood["status"] == "settled", stood
    dealt = _post(owner, f"/api/tables/{table}/deal/", {"bets": ["1"]}).json()
    assert dealt["status"] == "open", dealt
    duel = demo_table("duel")
    assert _post(owner, f"/api/tables/{duel.pk}/sit/").status_code == 200
    withdrawal = ledger_services.withdrawal_request(
        user=users["owner"], amount_micro=2_000_000, idempotency_key="matrix-withdrawal"
    )
    heartbeat.record_sweep("in_process")  # /healthz: someone sweeps deadlines (test_timer_health)
    transparency.sequence()  # the public log holds everything so far, under a checkpoint
    return Ctx(users, table, duel.pk, dealt["round_id"], settled, withdrawal.pk)


def snapshot() -> dict[str, Any]:
    """Everything a refused call must leave as it was."""
    users = get_user_model().objects.order_by("pk")
    return {
        "balances": {u.username: wallet_balances(user_id=u.pk) for u in users},
        "entries": JournalEntry.objects.count(),
        "rounds": list(Round.objects.order_by("id").values_list("id", "status", "version")),
        "seats": list(Seat.objects.order_by("pk").values_list("table_id", "user_id", "ready")),
        "tables": list(Table.objects.order_by("pk").values_list("pk", "status")),
        "withdrawals": list(WithdrawalRequest.objects.order_by("pk").values_list("pk", "status")),
        "preferences": list(PlayerPreferences.objects.order_by("pk").values()),
        "seeds": list(ClientSeed.objects.order_by("pk").values_list("pk", "seed")),
        "profiles": list(PlayerProfile.objects.order_by("pk").values()),
    }


CASES = [
    pytest.param(row, actor, id=f"{row.method.upper()} {row.name} as {actor}")
    for row in ROWS
    for actor in ACTORS
]


@pytest.mark.parametrize(("row", "actor"), CASES)
def test_authorization_matrix(ctx: Ctx, row: Row, actor: str) -> None:
    client = _client(None if actor == "anon" else ctx.users[actor])
    if row.session and actor != "anon":
        client.force_login(ctx.users[actor])
    url, body = row.url(ctx), row.body(ctx)
    before = snapshot()
    if row.method == "get":
        response = client.get(url)
    elif row.method == "post":
        response = _post(client, url, body)
    else:
        response = getattr(client, row.method)(url, body or {}, format="json")
    assert response.status_code == row.expect[actor], getattr(response, "content", b"")[:300]
    if response.status_code >= 400:
        assert snapshot() == before, "a refused call changed something"
