"""Every long command draws a progress bar on a terminal's stderr, and its stdout (the
summary) is the same with or without one: simulate, play, audit, export_rounds,
rebuild_projections, reconcile."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core.management import call_command

ROOT = Path(settings.BASE_DIR)
BAR = re.compile(r"\r\[[#-]{30}\] +[\d,]+/[\d,]+ rounds")


class FakeTty(StringIO):
    def isatty(self) -> bool:
        return True


def run(monkeypatch: pytest.MonkeyPatch, *args: str, tty: bool) -> tuple[str, str]:
    """(stdout, what the progress bar drew) of `manage.py <args>`, stderr a terminal or not."""
    stderr: StringIO = FakeTty() if tty else StringIO()
    out = StringIO()
    with monkeypatch.context() as patch:
        patch.setattr(sys, "stderr", stderr)
        call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue(), stderr.getvalue()


@pytest.mark.django_db
def test_the_round_commands_draw_progress_on_a_terminal_and_keep_stdout(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    out, drawn = run(monkeypatch, "play", "--ruleset", "classic", "--rounds", "120", tty=True)
    assert BAR.search(drawn) and "120/120 rounds" in drawn and drawn.endswith("\n")
    assert "\r" not in out and re.fullmatch(
        r"120 classic rounds in [\d.]+ s \([\d.]+ rounds/s\)\nstaked [\d.]+ USDC, returned "
        r"[\d.]+ USDC, fees [\d.]+ USDC \(RTP [\d.]+%\)\nlast round [0-9a-f-]{36}\n",
        out,
    )
    _, quiet = run(monkeypatch, "play", "--ruleset", "classic", "--rounds", "1", tty=False)
    assert quiet == ""

    bundle = tmp_path / "rounds.jsonl"
    for args in (
        ("audit",),
        ("audit", "--json"),
        ("export_rounds", "--out", str(bundle)),
        ("rebuild_projections", "--check"),
        ("reconcile",),
        ("reconcile", "--json"),
    ):
        plain, nothing = run(monkeypatch, *args, tty=False)
        shown, drawn = run(monkeypatch, *args, tty=True)
        assert nothing == "", args
        assert shown == plain and "\r" not in shown, args
        assert BAR.search(drawn) and "121/121 rounds" in drawn, (args, drawn)
    assert "100/121 rounds" in run(monkeypatch, "reconcile", tty=True)[1]
    assert json.loads(run(monkeypatch, "reconcile", "--json", tty=True)[0])["ok"] is True


def _timeless(report: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in report.items() if "per_s" not in k and k != "elapsed_s"}


def test_simulate_draws_progress_on_a_terminal_and_keeps_its_summary_on_stdout() -> None:
    args = [sys.executable, "manage.py", "simulate", "--ruleset", "classic"]
    args += ["--rounds", "20000", "--seed", "3", "--workers", "2", "--json"]
    master, slave = pty.openpty()
    try:
        shown = subprocess.run(
            args, cwd=ROOT, stdout=subprocess.PIPE, stderr=slave, text=True, timeout=300
        )
        os.close(slave)
        drawn = os.read(master, 65536).decode()
    finally:
        os.close(master)
    piped = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert shown.returncode == piped.returncode == 0
    assert BAR.search(drawn) and "20,000/20,000 rounds" in drawn
    assert "5,000/20,000 rounds" in drawn  # one tick per chunk, long before the end
    assert piped.stderr == ""
    assert _timeless(json.loads(shown.stdout)) == _timeless(json.loads(piped.stdout))
    assert "\r" not in shown.stdout
