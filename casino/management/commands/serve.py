"""`manage.py serve`: the single serving entry point (HTTP + WebSocket through daphne)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser


class Command(BaseCommand):
    help = "Serve the whole product (DRF, admin, static files, WebSocket) with the ASGI server."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--host", default="127.0.0.1", help="Interface to bind (default 127.0.0.1)."
        )
        parser.add_argument("--port", type=int, default=8000, help="Port to bind (default 8000).")
        parser.add_argument(
            "--no-collectstatic",
            action="store_true",
            help="Skip collectstatic (it runs by default when DEBUG is off).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        from daphne.cli import CommandLineInterface

        if not settings.DEBUG and not options["no_collectstatic"]:
            call_command("collectstatic", interactive=False, verbosity=0)
        host, port = options["host"], options["port"]
        self.stdout.write(f"Serving on http://{host}:{port}/ (Ctrl-C to stop)")
        CommandLineInterface().run(
            ["--bind", host, "--port", str(port), "--proxy-headers", "casino.asgi:application"]
        )
