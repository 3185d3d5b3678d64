"""Every file the docs name exists: README.md, docs/*.md and the pages below docs/.

A path such as `casino/platform/rawsql.py`, `tests/engine/test_golden.py` or
`decisions/ed25519.md` is looked up from the repository's root, from `casino/` (the layout
names the game's packages without it: `rounds/publish.py`) and from the page's own folder
(a link). A `path::test_name` must name a test that the file defines. Paths outside the
repository (`../shared/...`) are not checked. A failure names each page and path.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
# A relative path of two parts or more ending in a file type the project keeps, and what may
# follow it: `::name` of a test.
PATH = re.compile(
    r"(?<![\w/.])([A-Za-z0-9_]+(?:/[A-Za-z0-9_.\-]+)+\.(?:py|md|json|js|html|css|txt|yml|toml))"
    r"(?:::([A-Za-z_][A-Za-z0-9_]*))?"
)


def broken(page: Path, text: str) -> list[str]:
    """`page: path` for every path in `text` found nowhere, and `page: path::name` for every
    test name its file does not define."""
    found = []
    for match in PATH.finditer(text):
        path, name = match.group(1), match.group(2)
        where = next(
            (c for c in (ROOT / path, ROOT / "casino" / path, page.parent / path) if c.is_file()),
            None,
        )
        label = f"{page.relative_to(ROOT)}: {path}"
        if where is None:
            found.append(label)
        elif name and not re.search(rf"\bdef {re.escape(name)}\(", where.read_text("utf-8")):
            found.append(f"{label}::{name}")
    return found


def test_every_path_the_docs_name_exists() -> None:
    found = [line for page in PAGES for line in broken(page, page.read_text("utf-8"))]
    assert not found, "the docs name files or tests that do not exist:\n" + "\n".join(found)


def test_a_missing_file_and_a_missing_test_are_named() -> None:
    page = ROOT / "docs" / "architecture.md"
    text = (
        "`casino/engine/evolve.py` and `rounds/publish.py` are there; "
        "`casino/nowhere.py` is not, nor `tests/engine/test_golden.py::test_no_such_test`, "
        "while `tests/test_docs_paths.py::test_every_path_the_docs_name_exists` is; "
        "`../shared/design.md` is outside."
    )
    assert broken(page, text) == [
        "docs/architecture.md: casino/nowhere.py",
        "docs/architecture.md: tests/engine/test_golden.py::test_no_such_test",
    ]
