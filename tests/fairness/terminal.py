"""Run `python -m fairness.verify` with its stderr on a pseudo-terminal, as an auditor's shell
would have it: the verifier shows progress only there."""

from __future__ import annotations

import os
import pty
import subprocess
import sys


def verify_on_a_terminal(*args: str) -> tuple[subprocess.CompletedProcess[str], str]:
    """(the finished command with its stdout, what it wrote to the terminal)."""
    master, slave = pty.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "fairness.verify", *args],
            stdout=subprocess.PIPE, stderr=slave, text=True, timeout=120,
        )  # fmt: skip
        os.close(slave)
        shown = os.read(master, 4096).decode()
    finally:
        os.close(master)
    return done, shown
