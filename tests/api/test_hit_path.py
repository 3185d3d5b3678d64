"""How many of the project's files a plain HIT runs through: a guard against it growing.

A HIT over REST, as a client sends it (a session, a JSON body, an Idempotency-Key), profiled
with `sys.setprofile`: every Python function the request calls, after commit included, is
attributed to its file. Only the project's own files count (not the tests', not a library's).
The path runs through 18 on the embedded default, 19 with Redis (docs/architecture.md, "A HIT's
path"), and this test keeps it from growing past that.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from django.conf import settings
from rest_framework.test import APIClient

from casino.tables.services import table_personal
from tests.api.conftest import PASSWORD, make_player

ROOT = Path(settings.BASE_DIR).resolve()
# The path's count. With Redis the rate limit's script runs through
# casino/platform/redisscript.py, one file more.
MAX_FILES = 18 + (1 if settings.CACHES["default"]["BACKEND"].endswith("RedisCache") else 0)


def _project_file(filename: str) -> str | None:
    path = Path(filename)
    if not path.is_absolute() or ROOT not in path.parents:
        return None
    relative = path.relative_to(ROOT)
    if relative.parts[0] in ("tests", ".venv"):
        return None
    return str(relative)


def files_of(call: Any) -> list[str]:
    """The project files `call()` enters, in order, each consecutive run of calls once."""
    seen: list[str] = []

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            found = _project_file(frame.f_code.co_filename)
            if found is not None and (not seen or seen[-1] != found):
                seen.append(found)

    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
    return seen


def _dealt(stack: Any, key: str) -> tuple[APIClient, str]:
    """A new player signed in by session, with a classic round dealt 9+7 against a 6."""
    stack(["9H", "6C", "7D", "TS", "2H"])  # player 9+7, dealer 6 (hole T): the hit draws 2H
    user = make_player()
    client = APIClient()
    assert client.login(username=user.username, password=PASSWORD)
    table = table_personal(user=user, ruleset="classic")
    dealt = client.post(
        f"/api/tables/{table.pk}/deal/", {"bets": ["1"]}, format="json", HTTP_IDEMPOTENCY_KEY=key
    )
    assert dealt.status_code == 200, dealt.content
    return client, dealt.json()["round_id"]


@pytest.mark.django_db(transaction=True)
def test_a_plain_hit_runs_through_no_more_project_files_than_counted(stack: Any) -> None:
    client, round_id = _dealt(stack, "deal-1")  # a first HIT warms every cache of the path
    client.post(f"/api/rounds/{round_id}/hit/", {}, format="json", HTTP_IDEMPOTENCY_KEY="warm")
    client2, round2 = _dealt(stack, "deal-2")
    answers: list[Any] = []
    entered = files_of(
        lambda: answers.append(
            client2.post(
                f"/api/rounds/{round2}/hit/", {}, format="json", HTTP_IDEMPOTENCY_KEY="hit-2"
            )
        )
    )
    assert answers[0].status_code == 200, answers[0].content
    hand = answers[0].json()["view"]["boxes"][0]["hands"][0]
    assert [c["card"] for c in hand["cards"]] == ["9H", "7D", "2H"]
    distinct = list(dict.fromkeys(entered))
    print(f"{len(distinct)} files, {len(entered) - len(distinct)} returns:", *entered, sep="\n  ")
    assert len(distinct) <= MAX_FILES, distinct
