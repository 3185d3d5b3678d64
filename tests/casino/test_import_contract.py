"""The pure core (engine, shoe, verifier) imports no Django."""

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
    assert "1 kept, 0 broken" in result.stdout


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
