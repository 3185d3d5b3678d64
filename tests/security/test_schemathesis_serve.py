"""Schemathesis against the real ASGI server, with hostile strings (issue 21, "Tests").

tests/security/test_schemathesis.py drives the schema through the WSGI app in-process. This
one starts `manage.py serve` (daphne, the one-hop ASGI handler, every middleware) on a free
port, on the test database and Redis, loads `/api/schema/` from it over HTTP and sends every
operation's generated requests over the wire. Half of the JSON bodies are poisoned (a form
body cannot carry a lone surrogate, so forms go as generated): their
strings replaced by hostile ones (lone surrogates `"\\ud800"` among them, sent as JSON escapes,
which schemathesis's own generation never makes; NUL, line and paragraph separators, a BOM,
noncharacters), and an extra key holding one. Every answer must be no 5xx, a documented
status and content type, its body matching the schema, and never HTML; a body holding a lone
surrogate must be a 400 `malformed_request`.

CI's second pass (PostgreSQL + Redis) runs it; there a skip fails the run.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from django.conf import settings as django_settings
from django.db import connection
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

from casino.api.plumbing import has_lone_surrogate
from tests.api.conftest import make_player
from tests.security.test_schemathesis import real_ids, with_real_ids

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.redis,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),  # the server reads what the test committed
]

ROOT = Path(django_settings.BASE_DIR)
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
MAX_EXAMPLES = 8  # per operation and role

LONE = ["\ud800", "\udfff", "a\udbffb", "\ud83d", "x" * 5 + "\udc00"]
HOSTILE = st.one_of(
    st.sampled_from(LONE),
    st.text(alphabet=st.characters(codec=None), max_size=12),  # lone surrogates allowed
    st.sampled_from(["\x00", "\u2028\u2029", "\ufeff", "\uffff", "\U0010ffff", "", " " * 3]),
)


def _poison(value: Any, draw: Any) -> Any:
    """`value` with every string replaced by a hostile one (and some keys)."""
    if isinstance(value, str):
        return draw(HOSTILE)
    if isinstance(value, list):
        return [_poison(v, draw) for v in value]
    if isinstance(value, dict):
        return {  # keys kept half the time: a known field's hostile value gets echoed in errors
            k if draw(st.booleans()) else str(draw(HOSTILE)) + k: _poison(v, draw)
            for k, v in value.items()
        }
    return value


@st.composite
def poisoned(draw: Any, strategy: Any) -> Any:
    case = draw(strategy)
    body = case.body
    if case.media_type != "application/json":  # a form cannot carry one: nothing to send
        return case
    if isinstance(body, dict):
        body = _poison(body, draw)
        body["hostile"] = draw(st.sampled_from(LONE))  # one lone surrogate at least
    elif isinstance(body, list):
        body = [*_poison(body, draw), draw(st.sampled_from(LONE))]
    else:
        return case
    # Set as generated, not as an edit: schemathesis would revalidate an edited body with its
    # JSON Schema validator, which takes no lone surrogate (they are for the server here).
    object.__setattr__(case, "body", body)
    case._record_starting_state()
    return case


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def server(tmp_path: Path) -> Any:
    """`manage.py serve` on the test database and this run's Redis; its base URL."""
    port = _free_port()
    database = connection.settings_dict
    env = dict(os.environ)
    env["DATABASE_URL"] = (
        f"postgres://{database['USER']}@{database['HOST'] or '127.0.0.1'}:"
        f"{database['PORT'] or 5432}/{database['NAME']}"
    )
    env["REDIS_URL"] = str(django_settings.REDIS_URL)
    env["THROTTLE_LOGIN"] = env["THROTTLE_MONEY"] = "100000/min"  # the generator is no attacker
    log_path = tmp_path / "serve.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "manage.py", "serve", "--port", str(port)],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                if httpx.get(f"{url}/healthz", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert proc.poll() is None, log_path.read_text(errors="replace")
            assert time.monotonic() < deadline, "serve did not answer /healthz in 90 s"
            time.sleep(0.3)
        yield url, log_path
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def _run_operation(
    operation: Any, url: str, user: Any, token: str, ids: dict[str, list[Any]], sent: dict[str, int]
) -> None:
    headers = {"Authorization": f"Token {token}"}
    method = operation.method.upper()
    base = with_real_ids(
        operation.as_strategy(generation_mode=schemathesis.GenerationMode.POSITIVE), ids
    )

    @given(case=st.one_of(base, poisoned(base)))  # half of the bodies poisoned
    @settings(
        max_examples=MAX_EXAMPLES,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        database=None,
        derandomize=True,
        phases=[Phase.explicit, Phase.generate],
    )
    def run(case: Any) -> None:
        Token.objects.get_or_create(key=token, defaults={"user": user})  # logout revokes it
        response = case.call_and_validate(base_url=url, headers=headers, checks=CHECKS)
        sent["requests"] += 1
        assert "html" not in response.headers.get("Content-Type", ""), response.text[:200]
        if method != "GET" and has_lone_surrogate(case.body):
            sent["surrogates"] += 1
            assert response.status_code in (400, 401, 403, 404, 415), response.text[:300]
            if response.status_code == 400:
                assert response.json()["error"]["code"] == "malformed_request"

    run()


def _run(url: str, user: Any, ids: dict[str, list[Any]], sent: dict[str, int]) -> list[str]:
    token = Token.objects.create(user=user).key
    schema = schemathesis.openapi.from_url(
        f"{url}/api/schema/", headers={"Accept": "application/vnd.oai.openapi+json"}
    )
    failures: list[str] = []
    for result in schema.get_all_operations():
        operation = result.ok()
        try:
            _run_operation(operation, url, user, token, ids, sent)
        except Unsatisfiable:
            pass  # nothing to generate for this operation
        except (Exception, BaseExceptionGroup) as exc:  # collect them all
            failures.append(
                f"{operation.method.upper()} {operation.path}:\n"
                + "".join(traceback.format_exception(exc))[-3000:]
            )
    return failures


@pytest.mark.parametrize("staff", [False, True], ids=["player", "staff"])
def test_the_served_api_answers_hostile_strings_as_documented(server: Any, staff: bool) -> None:
    url, log_path = server
    player = make_player()
    ids = real_ids(player)
    user = player
    if staff:
        user = make_player(staff=True, funds=0)
        user.is_superuser = True
        user.save()
    sent = {"requests": 0, "surrogates": 0}
    failures = _run(url, user, ids, sent)
    assert not failures, "\n\n".join(failures)
    assert sent["requests"] >= 100, sent  # it ran: every operation got its examples
    assert sent["surrogates"] >= 5, sent  # and lone surrogates went over the wire
    log = log_path.read_text(errors="replace")
    assert "Internal Server Error" not in log and "Traceback" not in log, log[-3000:]
