"""Schemathesis against /api/schema/ (issue 9, hostile input).

Every operation of the OpenAPI schema gets generated requests, valid ones (positive) and
invalid ones (negative: wrong types, missing fields, unexpected parameters), authenticated
as a player and as staff. Every answer must be:

- not a 5xx;
- a documented status code, with a documented content type, and a body matching its schema.

Half of the generated requests use the ids of real things (the demo tables, a round the
player is in, a pending withdrawal), so the success paths are reached as well as the 404s.
Runs in CI's second pass (PostgreSQL + Redis), where a skip fails the run.
"""

from __future__ import annotations

import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from rest_framework.authtoken.models import Token
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from casino.engine.rules import RULESETS
from casino.tables.services import demo_table
from ledger import services as ledger_services
from tests.api.conftest import Api, make_player

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.django_db]

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
MODES = [schemathesis.GenerationMode.POSITIVE, schemathesis.GenerationMode.NEGATIVE]
MAX_EXAMPLES = 5  # per operation, mode and role: about 1 CPU-minute for the whole test


@contextmanager
def connection_kept() -> Iterator[None]:
    """Calls go through the WSGI app: do as Django's test client does and keep the test's
    connection (and its transaction) open across the request instead of closing it."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


def real_ids(player: Any) -> dict[str, list[Any]]:
    """Ids of things that exist: a generated path parameter is swapped for one of these."""
    tables = [demo_table(name).pk for name in RULESETS]
    api = Api(player)
    personal = api.post("/api/tables/personal/", {"ruleset": "classic"}).json()["id"]
    dealt = api.post(f"/api/tables/{personal}/deal/", {"bets": ["1"]})
    assert dealt.status_code == 200, dealt.content
    withdrawal = ledger_services.withdrawal_request(
        user=player, amount_micro=1_000_000, idempotency_key="schemathesis-withdrawal"
    )
    return {
        "table_id": [*tables, personal],
        "round_id": [dealt.json()["round_id"]],
        "withdrawal_id": [withdrawal.pk],
    }


def with_real_ids(strategy: Any, ids: dict[str, list[Any]]) -> Any:
    def swap(case: Any, choice: int) -> Any:
        for name, values in ids.items():
            if case.path_parameters and name in case.path_parameters:
                case.path_parameters[name] = values[choice % len(values)]
        return case

    return st.one_of(strategy, st.builds(swap, strategy, st.integers(0, 10)))


def run_schema(user: Any, ids: dict[str, list[Any]]) -> list[str]:
    token = Token.objects.create(user=user).key
    headers = {"Authorization": f"Token {token}"}
    with connection_kept():
        schema = schemathesis.openapi.from_wsgi(
            "/api/schema/",
            get_wsgi_application(),
            headers={"Accept": "application/vnd.oai.openapi+json"},
        )
    failures: list[str] = []
    for result in schema.get_all_operations():
        operation = result.ok()
        for mode in MODES:
            strategy = with_real_ids(operation.as_strategy(generation_mode=mode), ids)

            @given(case=strategy)
            @settings(
                max_examples=MAX_EXAMPLES,
                deadline=None,
                suppress_health_check=list(HealthCheck),
                database=None,
                derandomize=True,  # the same examples every run: a failure reproduces
                phases=[Phase.explicit, Phase.generate],  # no shrinking: HTTP calls are dear
            )
            def run(case: Any) -> None:
                # POST /api/auth/logout/ revokes the token: bring it back for the next call
                Token.objects.get_or_create(key=token, defaults={"user": user})
                with connection_kept():
                    case.call_and_validate(headers=headers, checks=CHECKS)

            try:
                run()
            except Unsatisfiable:
                if mode is not schemathesis.GenerationMode.NEGATIVE:
                    raise
                # nothing to negate: the operation takes no input that can be made invalid
            except (Exception, BaseExceptionGroup) as exc:  # collect them all
                failures.append(
                    f"{operation.method.upper()} {operation.path} [{mode.value}]:\n"
                    + "".join(traceback.format_exception_only(exc))
                )
    return failures


@pytest.mark.parametrize("staff", [False, True], ids=["player", "staff"])
def test_every_operation_answers_as_documented_and_never_5xx(staff: bool) -> None:
    player = make_player()
    ids = real_ids(player)
    user = player
    if staff:  # the superuser `staff` of seed_demo: every staff operation is open to it
        user = make_player(staff=True, funds=0)
        user.is_superuser = True
        user.save()
    failures = run_schema(user, ids)
    assert not failures, "\n\n".join(failures)
