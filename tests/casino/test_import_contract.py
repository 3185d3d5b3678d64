"""The import contracts (pyproject.toml, `make contracts`): layers, a pure core, one owner of
the database and Redis clients, no cycles; and the pure core loads without Django."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from django.conf import settings

ROOT = Path(settings.BASE_DIR)
PURE_MODULES = ["casino.engine", "fairness.shoe", "fairness.chain", "fairness.verify"]


def test_import_linter_contract_holds() -> None:
    result = subprocess.run(
        [str(Path(sys.executable).parent / "lint-imports")],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Contracts: 4 kept, 0 broken." in result.stdout


def _contracts() -> list[dict[str, object]]:
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return list(config["tool"]["importlinter"]["contracts"])


def test_every_fairness_module_and_casino_package_sits_in_a_layer() -> None:
    """A new module must be placed: a layers contract ignores a module it does not name."""
    (layers,) = [c for c in _contracts() if c["type"] == "layers"]
    named: set[str] = set()
    for layer in layers["layers"]:  # type: ignore[union-attr]
        for part in str(layer).replace("|", ":").split(":"):
            named.add(part.strip())
    fairness = {
        f"fairness.{p.stem}" if p.suffix == ".py" else f"fairness.{p.name}"
        for p in (ROOT / "fairness").iterdir()
        if (p.suffix == ".py" and p.stem != "__init__")
        or (p.is_dir() and (p / "__init__.py").exists() and p.name != "migrations")
    }
    casino = {
        f"casino.{p.name}"
        for p in (ROOT / "casino").iterdir()
        if p.is_dir()
        and (p / "__init__.py").exists()
        and p.name not in ("migrations", "management")  # Django's, for the app label
    }
    assert sorted((fairness | casino | {"ledger"}) - named) == []
    assert sorted(named - (fairness | casino | {"ledger"})) == []


def test_the_top_of_casino_holds_only_the_django_project() -> None:
    modules = sorted(p.stem for p in (ROOT / "casino").glob("*.py"))
    assert modules == [
        "__init__",
        "api_urls",
        "apps",
        "asgi",
        "celery",
        "models",
        "routing",
        "settings",
        "urls",
    ]


def test_pure_modules_load_without_django_in_a_fresh_interpreter() -> None:
    code = (
        "import importlib, pkgutil, sys\n"
        f"for name in {PURE_MODULES!r}:\n"
        "    module = importlib.import_module(name)\n"
        "    for info in pkgutil.walk_packages(getattr(module, '__path__', []), name + '.'):\n"
        "        importlib.import_module(info.name)\n"
        "leaked = sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'django', 'rest_framework', 'channels', 'celery'})\n"
        "print(leaked)\n"
        "sys.exit(1 if leaked else 0)\n"
    )
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, env=env
    )
    assert result.returncode == 0, result.stdout + result.stderr
