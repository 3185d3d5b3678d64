"""The README's commands as printed: a fresh Idempotency-Key per request, the virtualenv's
Python, the duel's lobby wait; and the curl walkthrough run twice against a real server."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import ROOT, base_env, manage, served

README = (ROOT / "README.md").read_text()


def walkthrough() -> str:
    start = README.index("## Playing a round with curl")
    block = README.index("```sh\n", start) + len("```sh\n")
    return README[block : README.index("```", block)]


def code_blocks() -> list[str]:
    return re.findall(r"```sh\n(.*?)```", README, flags=re.S)


def test_every_request_of_the_walkthrough_gets_a_fresh_idempotency_key() -> None:
    script = walkthrough()
    commands = script.replace("\\\n", " ").splitlines()
    posts = [c for c in commands if "curl" in c and " -d " in c and "/api/auth/login/" not in c]
    assert len(posts) == 3  # personal table, deal, stand; the login needs no key
    keys = [re.findall(r"Idempotency-Key: ([^\"']*)[\"']", c) for c in posts]
    assert keys == [["$(key)"]] * 3  # a command substitution, run for each request
    definition = re.search(r"^key\(\) \{ (.*); \}", script, flags=re.M)
    assert definition is not None
    assert "uuid.uuid4()" in definition.group(1) or "uuidgen" in definition.group(1)
    # The insurance hint after the block also uses a fresh key.
    after = README[README.index(script) + len(script) :].split("## ", 1)[0]
    assert re.findall(r"Idempotency-Key: ([^\"']*)[\"']", after) == ["$(key)"]
    assert "replays" in README[README.index("## Playing a round with curl") :][:800]


def test_every_python_command_names_the_virtualenv() -> None:
    shown = "\n".join(code_blocks()) + "\n".join(re.findall(r"`([^`\n]+)`", README))
    bare = [line for line in shown.splitlines() if re.search(r"(?<![/\w])python (-m|manage)", line)]
    assert bare == []
    assert ".venv/bin/python -m casino.client play" in README


def test_the_duel_example_says_it_waits_for_the_lobby() -> None:
    section = README[README.index("## Watching a table") :]
    assert "--ruleset duel" in section
    assert "DUEL_LOBBY_MS" in section and "15 s" in section


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    env = base_env(DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}")
    manage(env, "migrate", "--noinput", "-v0")
    manage(env, "seed_demo")
    yield from served(env)


@pytest.mark.slow
def test_the_walkthrough_run_twice_plays_two_rounds(server: str) -> None:
    script = walkthrough().replace("URL=http://127.0.0.1:8000", f"URL={server}")
    assert f"URL={server}" in script
    # A dealer ace leaves the round in `insurance`: the README's hint answers it, then stand.
    hint = re.search(r"answer with\s+`([^`]*insurance/[^`]*)`", README, flags=re.S)
    assert hint is not None
    stand = next(line for line in script.splitlines() if "/stand/" in line)
    status = (
        'STATUS=$(curl -s $URL/api/rounds/$ROUND/ "${H[@]}" '
        "| python3 -c 'import sys,json;print(json.load(sys.stdin)[\"status\"])')"
    )
    script = (
        f"set -eu\n{script}\n{status}\n"
        f'if [ "$STATUS" = open ]; then {" ".join(hint.group(1).split())}; {stand}; fi\n'
        f'{status}\necho "\nREADME ROUND=$ROUND $STATUS"\n'
    )
    rounds = []
    for _ in range(2):
        done = subprocess.run(
            ["bash", "-c", script], capture_output=True, text=True, timeout=120, check=False
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert "idempotency" not in done.stdout, done.stdout
        found = re.search(r"README ROUND=([0-9a-f-]{36}) settled$", done.stdout.strip())
        assert found is not None, done.stdout
        rounds.append(found.group(1))
    assert rounds[0] != rounds[1]
