"""`manage.py serve`: the single serving entry point (HTTP + WebSocket through daphne).

One process by default. `--workers N` (or `SERVE_WORKERS`) binds the port once and starts N
daphne processes that all accept on that socket: one Python process runs Django's sync views
one GIL at a time, so more processes use more cores. Several processes need a channel layer
they share (Redis): with the in-memory layer a WebSocket would only hear what its own process
publishes, so `serve` refuses. The parent only supervises: SIGTERM or SIGINT stops every
worker, and when one worker exits the others are stopped too (the whole server exits non-zero
and whatever supervises it restarts it).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

MANAGE_PY = Path(__file__).resolve().parents[3] / "manage.py"
STOP_GRACE_S = 20.0


def skip_form_parsing() -> None:
    """Daphne's requests skip Twisted's parsing of POST bodies into `request.args`.

    Twisted parses the Content-Type of every POST with a body through the standard library's
    email package (`_parseContentType`), to fill `request.args` for form uploads; every game
    action is a JSON POST. Daphne
    never reads `args`: it hands the raw body to the ASGI application, and Django parses
    forms itself. Twisted's own switch for this (`parsePOSTFormSubmission`) is set on each
    request daphne creates.
    """
    from daphne.http_protocol import WebRequest  # Twisted loads only when serving

    if getattr(WebRequest, "_casino_form_parsing_off", False):
        return
    init = WebRequest.__init__

    def __init__(self: WebRequest, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        self._parsePOSTFormSubmission = False

    WebRequest.__init__ = __init__
    WebRequest._casino_form_parsing_off = True


def _default_workers() -> int:
    try:
        return max(1, int(os.environ.get("SERVE_WORKERS", "1")))
    except ValueError:
        return 1


def _shared_channel_layer() -> bool:
    backend = str(settings.CHANNEL_LAYERS.get("default", {}).get("BACKEND", ""))
    return "InMemory" not in backend


class Command(BaseCommand):
    help = "Serve the whole product (DRF, admin, static files, WebSocket) with the ASGI server."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--host", default="127.0.0.1", help="Interface to bind (default 127.0.0.1)."
        )
        parser.add_argument("--port", type=int, default=8000, help="Port to bind (default 8000).")
        parser.add_argument(
            "--workers",
            type=int,
            default=_default_workers(),
            help="Server processes sharing the port (default SERVE_WORKERS or 1); more than "
            "one needs REDIS_URL (a channel layer the processes share).",
        )
        parser.add_argument(
            "--no-collectstatic",
            action="store_true",
            help="Skip collectstatic (it runs by default when DEBUG is off).",
        )
        # Internal: one worker of `--workers N`, accepting on an inherited listening socket.
        parser.add_argument("--fd", type=int, default=None, help="==SUPPRESS==")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["fd"] is not None:
            self._daphne(["--fd", str(options["fd"])])
            return
        workers = options["workers"]
        if workers < 1:
            raise CommandError("--workers must be at least 1.")
        if workers > 1 and not _shared_channel_layer():
            raise CommandError(
                "--workers above 1 needs REDIS_URL: with the in-memory channel layer each "
                "process would only publish to its own WebSockets."
            )
        if not settings.DEBUG and not options["no_collectstatic"]:
            call_command("collectstatic", interactive=False, verbosity=0)
        host, port = options["host"], options["port"]
        if workers == 1:
            self.stdout.write(f"Serving on http://{host}:{port}/ (Ctrl-C to stop)")
            self._daphne(["--bind", host, "--port", str(port)])
            return
        self.stdout.write(
            f"Serving on http://{host}:{port}/ with {workers} processes (Ctrl-C to stop)"
        )
        self.stdout.flush()
        sys.exit(self._supervise(host, port, workers))

    def _daphne(self, where: list[str]) -> None:
        from daphne.cli import CommandLineInterface  # Twisted loads only when serving

        skip_form_parsing()
        CommandLineInterface().run([*where, "--proxy-headers", "casino.asgi:application"])

    def _supervise(self, host: str, port: int, workers: int) -> int:
        """Bind once, start `workers` children on the socket, stop them all when one stops."""
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        listener = socket.socket(family, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((host, port))
        listener.listen(1024)
        listener.set_inheritable(True)
        fd = listener.fileno()
        command = [sys.executable, str(MANAGE_PY), "serve", "--fd", str(fd)]
        children = [subprocess.Popen(command, pass_fds=(fd,)) for _ in range(workers)]
        stopping = {"signal": 0}

        def stop(signum: int, _frame: Any) -> None:
            stopping["signal"] = signum

        previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
        try:
            while not stopping["signal"] and all(c.poll() is None for c in children):
                time.sleep(0.2)
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            for child in children:
                if child.poll() is None:
                    child.send_signal(signal.SIGTERM)
            deadline = time.monotonic() + STOP_GRACE_S
            for child in children:
                try:
                    child.wait(timeout=max(0.1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    child.kill()
                    child.wait()
            listener.close()
        if stopping["signal"]:
            return 0
        failed = [c.returncode for c in children if c.returncode]
        self.stderr.write(f"a server process exited ({failed or 0}); stopped the others")
        return 1
