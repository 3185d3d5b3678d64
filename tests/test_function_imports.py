"""An import inside a function says why it is there (issue: no hidden import cycles).

Imports belong at the top of a module, where the import graph (and import-linter) sees them.
One inside a function is allowed only with a comment that says why: Django's app registry is
not ready yet, a heavy dependency only one command needs, a module the pure core's
interpreter must not load, and so on. The comment sits on the import's line, or on (or at the
end of) the line above a run of imports, which it then covers.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("casino", "fairness", "ledger", "bench", "sim")
IMPORTS = (ast.Import, ast.ImportFrom)


def _blocks(node: ast.AST) -> list[list[ast.stmt]]:
    """Every statement list inside `node` (bodies, else and finally parts, handlers)."""
    found = []
    for child in ast.walk(node):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(child, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                found.append(block)
    return found


def _explained(lines: list[str], first: ast.stmt, run: list[ast.stmt]) -> bool:
    above = lines[first.lineno - 2] if first.lineno > 1 else ""
    if "#" in above:  # a comment line above, or one ending the line above (`try:  # why`)
        return True
    return all(
        any("#" in line for line in lines[node.lineno - 1 : node.end_lineno]) for node in run
    )


def unexplained_function_imports(
    root: Path = ROOT, packages: tuple[str, ...] = PACKAGES
) -> list[str]:
    found = []
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            lines = path.read_text().splitlines()
            tree = ast.parse("\n".join(lines), filename=str(path))
            for function in ast.walk(tree):
                if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                for block in _blocks(function):
                    runs: list[list[ast.stmt]] = []
                    for statement in block:
                        if isinstance(statement, IMPORTS):
                            if runs and runs[-1][-1] is block[block.index(statement) - 1]:
                                runs[-1].append(statement)
                            else:
                                runs.append([statement])
                    for run in runs:
                        if not _explained(lines, run[0], run):
                            where = path.relative_to(root)
                            found.append(f"{where}:{run[0].lineno}: {ast.unparse(run[0])}")
    return sorted(set(found))


def test_every_import_inside_a_function_carries_its_reason() -> None:
    assert unexplained_function_imports() == []


def test_the_check_finds_an_unexplained_import_and_accepts_an_explained_one(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(
        "def quiet():\n"
        "    import json\n"
        "    import os\n"
        "\n"
        "def told():\n"
        "    # only this command needs it\n"
        "    import json\n"
        "    import os\n"
        "\n"
        "def inline():\n"
        "    try:  # optional\n"
        "        import json\n"
        "    except ImportError:\n"
        "        pass\n"
    )
    assert unexplained_function_imports(tmp_path, ("pkg",)) == ["pkg/m.py:2: import json"]
