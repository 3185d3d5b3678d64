"""The player site's browser tests: one real `serve` (daphne: HTTP and the table WebSocket)
on its own SQLite file for the whole session, and Debian's Chromium driven by Playwright.

The server runs `tests/site/stacked_serve.py`, so a test can stack the next round's cards.
Every page a test opens must log no console error and raise no script error.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.chromium import CHROMIUM_ARGS
from tests.e2e.conftest import base_env, free_port, manage
from tests.site.stacked_serve import PASSWORD, PLAYERS

ROOT = Path(__file__).resolve().parents[2]
SERVE = Path(__file__).with_name("stacked_serve.py")


@dataclass
class Site:
    url: str
    stack_dir: Path
    env: dict[str, str]
    users: list[str] = field(default_factory=lambda: list(PLAYERS))

    def stack(self, cards: list[str]) -> None:
        """The next round opened deals `cards` first (dealing order)."""
        (self.stack_dir / "stack.json").write_text(json.dumps(cards))

    def manage(self, *args: str) -> None:
        """A management command against the served database (e.g. void_round)."""
        manage(self.env, *args)

    extra: list[str] = field(default_factory=list)

    def extra_user(self) -> str:
        """As `user()`, from the later test players (u13..u48)."""
        return self.extra.pop(0)

    def user(self) -> str:
        """A test player no earlier test used (their preferences and tables are fresh)."""
        return self.users.pop(0)


# Thirty-six more test players, u13..u48, made like stacked_serve's u1..u12 (password, 1,000
# USDC) before the server starts; the newer test files take theirs with `extra_user()`. The
# hash is Django's MD5 format, which the test server accepts (fast logins), written out here
# because a plain `manage.py shell` has no MD5 hasher configured.
EXTRA = [f"u{i}" for i in range(13, 49)]
MORE_PLAYERS = f"""
import hashlib
from django.contrib.auth import get_user_model
from ledger.services import wallet_deposit
for name in {EXTRA!r}:
    salt = "site" + name
    digest = hashlib.md5((salt + {PASSWORD!r}).encode()).hexdigest()
    user, _ = get_user_model().objects.get_or_create(username=name)
    user.password = f"md5${{salt}}${{digest}}"
    user.save()
    wallet_deposit(user=user, amount_micro=1_000_000_000, idempotency_key=f"site:{{name}}")
"""


@pytest.fixture(scope="session")
def site() -> Iterator[Site]:
    with tempfile.TemporaryDirectory(prefix="site-tests-") as tmp:
        env = base_env(
            DATABASE_URL=f"sqlite:///{tmp}/site.sqlite3",
            SITE_STACK_DIR=tmp,
            THROTTLE_MONEY="100000/min",
            THROTTLE_LOGIN="100000/min",
            DEMO_MODE="1",
        )
        manage(env, "migrate", "--noinput", "-v", "0")
        manage(env, "seed_demo")
        manage(env, "shell", "-c", MORE_PLAYERS)
        port = free_port()
        with open(Path(tmp) / "serve.log", "wb") as log:
            proc = subprocess.Popen(
                [sys.executable, str(SERVE), "--port", str(port)],
                cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
            )  # fmt: skip
            url = f"http://127.0.0.1:{port}"
            try:
                wait_healthy(url, proc, Path(tmp) / "serve.log")
                yield Site(url=url, stack_dir=Path(tmp), env=env, extra=list(EXTRA))
            finally:
                proc.terminate()
                proc.wait(timeout=15)


def wait_healthy(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"serve exited:\n{log.read_text(errors='replace')[-3000:]}")
        try:
            if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)  # readiness polling of a subprocess, not a test timing assumption
    raise RuntimeError(f"serve did not answer within 90 s:\n{log.read_text(errors='replace')}")


class Browser:
    """One Chromium for the test; each `page()` is a new context (its own cookies), every
    console error and script error of every page collected in `errors`."""

    def __init__(self, browser: Any) -> None:
        self.browser = browser
        self.errors: list[str] = []
        self.contexts: list[Any] = []

    def page(self, *, width: int = 1366, height: int = 768) -> Any:
        context = self.browser.new_context(viewport={"width": width, "height": height})
        self.contexts.append(context)
        page = context.new_page()
        page.on("pageerror", lambda exc: self.errors.append(f"pageerror: {exc}"))
        page.on(
            "console",
            lambda msg: self.errors.append(f"console: {msg.text}") if msg.type == "error" else None,
        )
        return page


@pytest.fixture
def browser() -> Iterator[Browser]:
    from playwright.sync_api import sync_playwright  # only the browser tests load Playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS, headless=True
        )
        held = Browser(chromium)
        try:
            yield held
        finally:
            chromium.close()
        assert held.errors == []


def sign_in(page: Any, site: Site, username: str, password: str = PASSWORD) -> None:
    """Sign in through the form of /play/ and wait for the wallet."""
    page.goto(f"{site.url}/play/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_selector("#wallet-available:not(:text('…'))")


def personal_table(page: Any, ruleset: str) -> int:
    """Open your personal table of `ruleset` from the lobby; its id."""
    label = {"classic": "Personal classic table", "atlantic_city": "Personal Atlantic City table"}
    page.get_by_role("button", name=label[ruleset]).click()
    page.wait_for_url("**/play/*/")
    page.wait_for_selector("#table[data-socket='open']")
    return int(page.url.rstrip("/").rsplit("/", 1)[1])


def button(page: Any, name: str) -> Any:
    return page.get_by_role("button", name=name, exact=True)


def enabled(page: Any, name: str) -> bool:
    return bool(button(page, name).is_enabled())


def click(page: Any, name: str) -> None:
    button(page, name).click()


def finish_round(page: Any) -> None:
    """Play the round in front of you to its end: decline every offer, then stand."""
    for _ in range(40):
        if page.locator("#verify-link").count():
            return
        for name in ("No insurance", "No even money", "Stand"):
            target = button(page, name)
            if target.count() and target.is_visible() and target.is_enabled():
                target.click()
                break
        page.wait_for_timeout(100)  # the next view arrives over the socket
    raise AssertionError("the round did not end")
