"""Server instructions per request, independent of load: `python -m bench apicost [--quick]`.

`bench api`'s rates move with the machine's load (the server shares two cores with the load
generator, PostgreSQL, Redis and whatever else runs). This bench counts instructions instead,
which repeat run after run: it starts `manage.py serve` (the production settings `bench api`
uses) under `valgrind --tool=callgrind` with instrumentation off until the measured part, on
a scratch PostgreSQL database and Redis, and then

- one player plays N `classic` rounds on a personal table over REST, exactly as `bench api`'s
  players do: the server's instructions per game request (everything the process does:
  daphne, Django, DRF, the round service, publishing);
- one client sends M requests to the bare transaction endpoint (`bench api`'s anchor): the
  server's instructions per anchor request.

The served process deals from deterministic seeds (a `sitecustomize` on its PYTHONPATH makes
`secrets.token_bytes` and `token_urlsafe` count instead of draw), so the same code plays the
same cards and the counts repeat exactly: run it on the code before and after a change. The
seeds are this bench's only: nothing else sets its switch. Needs DATABASE_URL (PostgreSQL),
REDIS_URL and valgrind; about 90 s (`--quick`: about 40 s).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench._scratch import scratch_database

ROOT = Path(__file__).resolve().parent.parent
SWITCH = "BENCH_APICOST_DETERMINISTIC_SEEDS"
_SITECUSTOMIZE = f"""
import hashlib, itertools, os, secrets
if os.environ.get("{SWITCH}") == "1":
    _count = itertools.count()
    secrets.token_bytes = lambda n=32: hashlib.sha256(b"apicost%d" % next(_count)).digest()[:n]
    secrets.token_urlsafe = lambda n=32: "apicost%d" % next(_count)
"""


def _callgrind(pid: int, *args: str) -> None:
    subprocess.run(["callgrind_control", *args, str(pid)], check=True, capture_output=True)


def _instructions(dump: Path) -> int:
    for line in dump.read_text().splitlines():
        if line.startswith("summary:"):
            return int(line.split()[1])
    raise RuntimeError(f"no summary in {dump}")


async def _measure(base: str, token: str, pid: int, rounds: int, anchors: int, out: Path) -> Any:
    # in the driving process, after _drive configured Django for the scratch database
    import httpx

    from bench import api

    await api._wait_up(base)
    await api._play_classic(base, token, 0.0, [], at_least=3)  # warm-up: table, chain, views
    async with httpx.AsyncClient(base_url=base) as http:
        for _ in range(5):
            await http.post("/api/bench/tx/")
    figures: dict[str, Any] = {}
    _callgrind(pid, "-i", "on")
    for part in ("game", "anchor"):
        _callgrind(pid, "-z")
        requests: list[float] = []
        if part == "game":
            played = await api._play_classic(base, token, 0.0, requests, at_least=rounds)
        else:
            async with httpx.AsyncClient(base_url=base) as http:
                for _ in range(anchors):
                    response = await http.post("/api/bench/tx/")
                    response.raise_for_status()
                    requests.append(0.0)
        _callgrind(pid, "-d", part)
        dumps = sorted(out.parent.glob(f"{out.name}.*"), key=lambda p: p.stat().st_mtime)
        total = _instructions(dumps[-1])
        figures[f"{part}_requests"] = len(requests)
        figures[f"{part}_instructions_per_request_m"] = round(total / len(requests) / 1e6, 3)
        if part == "game":
            figures["game_rounds"] = played
            figures["game_requests_per_round"] = round(len(requests) / played, 2)
    return figures


def _drive(rounds: int, anchors: int) -> dict[str, Any]:
    """In a process of its own (the scratch database's settings): serve and measure."""
    # a process of its own: Django is configured here, for the scratch database
    import django

    django.setup()
    from bench import api  # it needs the Django set up just above

    tokens, _ = api._prepare(1)
    site = Path(tempfile.mkdtemp(prefix="apicost-"))
    (site / "sitecustomize.py").write_text(_SITECUSTOMIZE)
    out = site / "callgrind.out"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    env = {**api.served_env(), SWITCH: "1", "PYTHONPATH": str(site)}
    command = ["valgrind", "--tool=callgrind", "--instr-atstart=no"]
    command += [f"--callgrind-out-file={out}.%p", sys.executable, "manage.py", "serve"]
    command += ["--port", str(port), "--no-collectstatic"]
    server = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        base = f"http://127.0.0.1:{port}"
        return asyncio.run(_measure(base, tokens[0], server.pid, rounds, anchors, out))
    finally:
        server.terminate()
        server.wait(timeout=120)
        shutil.rmtree(site, ignore_errors=True)


def run(quick: bool) -> dict[str, Any]:
    missing = [
        need
        for need, present in (
            (
                "DATABASE_URL (PostgreSQL)",
                os.environ.get("DATABASE_URL", "").startswith("postgres"),
            ),
            ("REDIS_URL", bool(os.environ.get("REDIS_URL"))),
            ("valgrind", shutil.which("valgrind") and shutil.which("callgrind_control")),
        )
        if not present
    ]
    if missing:
        print(f"apicost bench: needs {', '.join(missing)} (skipped)", file=sys.stderr)
        return {"skipped": f"needs {', '.join(missing)}"}
    url, database = scratch_database("apicost")
    rounds, anchors = (10, 30) if quick else (40, 100)
    env = {**os.environ, "DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": "casino.settings"}
    started = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            f"from bench.apicost import _drive; import json; "
            f"print(json.dumps(_drive({rounds}, {anchors})))",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"apicost driver failed: {done.stderr.strip()[-2000:]}")
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    game = figures["game_instructions_per_request_m"]
    anchor = figures["anchor_instructions_per_request_m"]
    figures["game_over_anchor_per_request"] = round(game / anchor, 2)
    figures["database"] = database
    figures["driver_s"] = round(time.perf_counter() - started, 1)
    figures["conditions"] = (
        "server instructions (callgrind, instrumentation on only while measuring) per request; "
        "one client at a time; deterministic seeds in the served process; production settings "
        "as bench api (DEBUG off, throttles at 1,000,000/min)"
    )
    return figures
