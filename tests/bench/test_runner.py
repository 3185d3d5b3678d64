"""`python -m bench`: names, `all`, and the one JSON object of every figure."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bench import __main__ as runner


def fake_run_one(name: str, *, quick: bool) -> dict[str, Any]:
    if name == "ledger":
        raise RuntimeError("no PostgreSQL")
    print(f"{name}: conditions and progress")  # what a bench prints must not spoil --json
    return {"bench": name, "quick": quick, "rounds_per_s": len(name)}


def test_all_runs_every_bench_into_one_json_object(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(runner, "run_one", fake_run_one)
    code = runner.main(["all", "--quick", "--json"])
    captured = capsys.readouterr()
    figures = json.loads(captured.out)  # stdout is the one JSON object and nothing else
    assert "engine: conditions and progress" in captured.err
    assert {
        "engine",
        "fairness",
        "ledger",
        "eventstore",
        "api",
        "apicost",
        "websocket",
        "audit",
        "service",
        "soak",
    } <= set(runner.available())
    for name in runner.available():
        assert figures[f"{name}.bench"] == name
    assert figures["engine.rounds_per_s"] == len("engine")
    assert figures["engine.quick"] is True
    assert figures["ledger.error"] == "RuntimeError: no PostgreSQL"
    assert code == 1  # a failed bench is reported, and fails the run


def test_unknown_names_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        runner.main(["nope"])
    assert caught.value.code == 2
    assert "unknown benchmark(s): nope" in capsys.readouterr().err


def test_apicost_says_what_it_needs_instead_of_failing(monkeypatch: pytest.MonkeyPatch) -> None:
    from bench import apicost

    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.delenv("REDIS_URL", raising=False)
    figures = apicost.run(True)  # (and valgrind, where it is missing)
    assert set(figures) == {"skipped"}
    assert figures["skipped"].startswith("needs DATABASE_URL (PostgreSQL), REDIS_URL")
