"""A one-line progress bar for long commands, shown only on a terminal (stderr)."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class ProgressBar:
    """Call with (done, total); silent when the stream is not a TTY (logs, CI, pipes)."""

    def __init__(self, unit: str = "items", stream: TextIO | None = None, width: int = 30) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.unit = unit
        self.width = width
        self.enabled = self.stream.isatty()
        self.started = time.perf_counter()

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or total <= 0:
            return
        filled = self.width * done // total
        rate = done / max(time.perf_counter() - self.started, 1e-9)
        bar = "#" * filled + "-" * (self.width - filled)
        self.stream.write(f"\r[{bar}] {done:>10,}/{total:,} {self.unit}  {rate:>9,.0f}/s")
        if done >= total:
            self.stream.write("\n")
        self.stream.flush()
