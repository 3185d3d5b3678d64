"""Debian's Chromium through Playwright, for the browser tests (never a downloaded browser).

The flags are the ones this machine needs: no sandbox (root), no GPU, and nothing that would
reach for the network.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
]  # fmt: skip


@contextmanager
def chromium_page() -> Iterator[Any]:
    """A page in the system Chromium; the page's script errors must be none on leaving.

    Playwright's sync API runs an event loop in this thread while the page is open, and while
    a loop runs Django keeps this thread's database connections per asyncio context (asgiref's
    thread-critical Local), apart from the ones the test's own set-up and teardown see. So a
    connection the test opens meanwhile (it needs DJANGO_ALLOW_ASYNC_UNSAFE) is closed here,
    in that context: otherwise it stays checked out of the PostgreSQL pool, and the test
    database cannot be dropped at the end of the run ("being accessed by other users"). Its
    wrapper is dropped too: the context outlives the loop, and a later page's test would
    meet it.
    """
    from django.db import connections
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS, headless=True
        )
        page = browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        try:
            yield page
        finally:
            for connection in connections.all(initialized_only=True):
                if connection.connection is not None:
                    connection.close()
                del connections[connection.alias]  # no closed wrapper left for the next test
        browser.close()
        assert errors == []
