"""`manage.py export_rounds --out FILE [--since DATE] [--round ID]`: the verifier's bundle.

One chain line per seed chain of the exported rounds comes first (`casino.rounds.audit.chain_lines`:
the nonces the export covers, so the verifier names any missing inside that range), then
one line per finished round.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from casino.management.commands.audit import parse_since
from casino.platform.progress import ProgressBar
from casino.rounds.audit import chain_lines, chain_scope, export_lines, select_rounds


class Command(BaseCommand):
    help = "Write finished rounds as JSON Lines for `python -m fairness.verify FILE`."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--out", required=True, help="file to write ('-' for stdout)")
        parser.add_argument("--since", help="rounds opened on or after this date (ISO 8601)")
        parser.add_argument("--round", action="append", default=[], help="a round id (repeatable)")

    def handle(self, *args: Any, **options: Any) -> None:
        since = parse_since(options["since"])
        # The chains first: every round they count as revealed is then among those selected.
        scope = chain_scope("rounds" if options["round"] else "since" if since else "all")
        round_ids = select_rounds(since=since, round_ids=options["round"], finished_only=True)
        left_out = sorted(set(options["round"]) - set(round_ids))
        if left_out:  # a bundle without a round asked for would verify, the round unseen
            raise CommandError(f"no such finished round: {', '.join(left_out)}")
        chains = chain_lines(round_ids, scope)
        progress = ProgressBar("rounds")
        written = 0
        if options["out"] == "-":
            for line in chains:
                self.stdout.write(line)
            for line in export_lines(round_ids):
                self.stdout.write(line)
                written += 1
        else:
            path = Path(options["out"])
            tmp = path.with_name(path.name + ".partial")
            try:
                with tmp.open("w", encoding="utf-8") as out:
                    for line in chains:
                        out.write(line + "\n")
                    for line in export_lines(round_ids):
                        out.write(line + "\n")
                        written += 1
                        progress(written, len(round_ids))
                tmp.replace(path)  # a crash never leaves a half-written bundle under the real name
            except OSError as exc:  # a missing directory, a directory named as the file, no room
                tmp.unlink(missing_ok=True)
                raise CommandError(f"cannot write {path}: {exc.strerror or exc}") from exc
            # stdout: the result, not an error (on stderr it was drawn in red on a terminal).
            self.stdout.write(f"wrote {len(chains)} chain lines and {written} rounds to {path}")
