"""`python -m bench._budgets` (make bench-check): the comparison against the budgets file and
`--update`, fed figures (no valgrind here: the measuring itself runs in make bench-check)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from bench import _budgets

Figures = dict[str, float]


def write(path: Path, budgets: dict[str, int]) -> Path:
    _budgets.save(path, budgets)
    return path


def fed(
    figures: Figures, problems: list[str] | None = None
) -> Callable[[], tuple[Figures, list[str]]]:
    return lambda: (dict(figures), list(problems or []))


def test_budget_is_measured_plus_five_percent_rounded_up_to_four_digits() -> None:
    assert _budgets.budget_for(304_088) == 319_300  # 319,292.4 rounded up
    assert _budgets.budget_for(3_303_324) == 3_469_000  # 3,468,490.2
    assert _budgets.budget_for(1_000) == 1_050
    assert _budgets.budget_for(999) == 1_049  # 1,048.95: small figures keep their units
    assert _budgets.budget_for(0) == 0
    for measured in (1, 7, 123, 304_088, 12_345_678, 987_654_321):
        budget = _budgets.budget_for(measured)
        assert measured * 1.05 <= budget <= measured * 1.05 * 1.001 + 1


def test_a_figure_over_budget_fails_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "budgets.json", {"engine.classic": 1_000, "engine.duel": 2_000})
    code = _budgets.main(
        ["--budgets", str(path)], measure=fed({"engine.classic": 1_001, "engine.duel": 1_900})
    )
    out = capsys.readouterr().out
    assert code == 1
    assert "FAIL: engine.classic is over its budget: 1,001 > 1,000" in out
    assert "engine.duel is over" not in out
    assert "OVER by 0.1%" in out
    assert "5.0% under" in out  # the margin of the figure within its budget


def test_every_figure_over_budget_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "budgets.json", {"a": 10, "b": 10, "c": 10})
    code = _budgets.main(["--budgets", str(path)], measure=fed({"a": 11, "b": 10, "c": 12}))
    out = capsys.readouterr().out
    assert code == 1
    assert "FAIL: a is over" in out and "FAIL: c is over" in out
    assert "FAIL: b" not in out


def test_every_figure_within_budget_passes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "budgets.json", {"engine.classic": 1_000, "engine.duel": 2_000})
    code = _budgets.main(
        ["--budgets", str(path)], measure=fed({"engine.classic": 1_000, "engine.duel": 1_500})
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "FAIL" not in out
    assert "every figure within its budget" in out
    assert "engine.duel" in out and "1,500" in out and "2,000" in out and "25.0% under" in out


def test_a_missing_service_fails_and_says_what_is_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "budgets.json", {"engine.classic": 1_000, "apicost.game": 5_000})
    problem = "needs DATABASE_URL on PostgreSQL: apicost.* not measured"
    code = _budgets.main(["--budgets", str(path)], measure=fed({"engine.classic": 900}, [problem]))
    out = capsys.readouterr().out
    assert code == 1  # never a silent skip
    assert f"FAIL: {problem}" in out
    assert "FAIL: apicost.game was not measured" in out


def test_missing_names_valgrind_postgresql_and_redis(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_budgets.shutil, "which", lambda name: None)
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.setenv("REDIS_URL", "")
    gaps = _budgets.missing()
    assert set(gaps) == {
        "valgrind (with callgrind_control)",
        "DATABASE_URL on PostgreSQL",
        "REDIS_URL",
    }
    monkeypatch.setenv("DATABASE_URL", "sqlite:///x.sqlite3")
    assert "DATABASE_URL on PostgreSQL" in _budgets.missing()


def test_a_figure_without_a_budget_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "budgets.json", {})
    code = _budgets.main(["--budgets", str(path)], measure=fed({"engine.new": 5}))
    assert code == 1
    assert "FAIL: engine.new has no budget (set one with --update)" in capsys.readouterr().out


def test_update_writes_measured_plus_five_percent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "budgets.json", {"engine.classic": 1_000, "apicost.game": 5_000})
    code = _budgets.main(
        ["--budgets", str(path), "--update"],
        measure=fed({"engine.classic": 304_088, "engine.duel": 384_003}),
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "budget engine.classic: 1,000 -> 319,300" in out
    assert "budget engine.duel: none -> 403,300" in out  # 403,203.15 rounded up
    written = json.loads(path.read_text())
    assert written["budgets"] == {
        "apicost.game": 5_000,  # not measured this time: kept
        "engine.classic": 319_300,
        "engine.duel": 403_300,
    }
    assert "--update" in written["about"]
    # and the figures now pass against the file just written
    code = _budgets.main(
        ["--budgets", str(path)],
        measure=fed({"engine.classic": 304_088, "engine.duel": 384_003, "apicost.game": 1}),
    )
    assert code == 0


def test_update_still_fails_when_a_figure_could_not_be_measured(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "budgets.json", {"apicost.game": 5_000})
    code = _budgets.main(
        ["--budgets", str(path), "--update"],
        measure=fed({"engine.classic": 100}, ["needs REDIS_URL: apicost.* not measured"]),
    )
    assert code == 1
    assert json.loads(path.read_text())["budgets"] == {"apicost.game": 5_000, "engine.classic": 105}
    assert "FAIL: needs REDIS_URL" in capsys.readouterr().out


def test_the_repository_budgets_cover_every_figure() -> None:
    budgets = _budgets.load(_budgets.BUDGETS)
    from bench import engine

    expected = {f"engine.{ruleset}_instructions_per_round" for ruleset in engine.RULESETS}
    expected |= {"fairness.verifier_3p_replay_instructions_per_round", *_budgets.APICOST}
    assert set(budgets) == expected
    assert all(isinstance(value, int) and value > 0 for value in budgets.values())


def test_dumps_are_read_by_part(tmp_path: Path) -> None:
    out = tmp_path / "callgrind.out"
    for suffix, part, total in ((".1", 1, 500), (".2", 2, 40), ("", 3, 7)):
        (tmp_path / f"callgrind.out{suffix}").write_text(
            f"version: 1\npart: {part}\ndesc: Trigger: x\nsummary: {total}\ntotals: {total}\n"
        )
    assert _budgets._dumps(out) == {1: 500, 2: 40, 3: 7}
