"""`manage.py serve` with test-only pause points, for killing the server in mid-request.

`python tests/faults/hooked_serve.py --port P` serves exactly like `manage.py serve`. A test
arms a pause point by creating `$FAULT_DIR/pause-<point>`; the next request that reaches it
writes `$FAULT_DIR/reached-<point>` and stops there until the test kills the process:

- `in_transaction`: inside the round service's transaction, after the events were appended
  and the ledger legs posted, before the projections and the stored answer (nothing is
  committed yet);
- `before_response`: after the command and its Idempotency-Key's answer committed, before
  the HTTP response is sent.

Nothing here is imported by the product; the hooks wrap module attributes at startup.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def pause(point: str) -> None:
    flag = Path(os.environ["FAULT_DIR"]) / f"pause-{point}"
    try:
        flag.unlink()  # one request pauses per arming
    except FileNotFoundError:
        return
    (flag.parent / f"reached-{point}").write_text(str(os.getpid()))
    while True:  # until SIGKILL
        time.sleep(1)


def install() -> None:
    from casino.api import commands as idempotency  # the module the fault hooks patch
    from casino.rounds import projections

    project, command = projections.project, idempotency.idempotent_command

    def paused_project(*args: Any, **kwargs: Any) -> Any:
        pause("in_transaction")
        return project(*args, **kwargs)

    def paused_command(**kwargs: Any) -> Any:
        answer = command(**kwargs)
        pause("before_response")
        return answer

    projections.project = paused_project  # type: ignore[assignment]
    idempotency.idempotent_command = paused_command  # type: ignore[assignment]


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "casino.settings")
    import django

    django.setup()
    install()
    from django.core.management import call_command

    call_command("serve", *sys.argv[1:])
