"""No line of the docs runs over 120 characters: docs/*.md and every page below docs/
(docs/decisions/ included). A failure names each long line as file:line."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
LIMIT = 120


def long_lines(root: Path, base: Path) -> list[str]:
    """`file:line (N characters)`, the file named from `base`, for every line over LIMIT of
    every markdown page in `root` and its folders."""
    found = []
    for page in sorted(root.rglob("*.md")):
        lines = page.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines, start=1):
            if len(line) > LIMIT:
                found.append(f"{page.relative_to(base)}:{number} ({len(line)} characters)")
    return found


def test_no_doc_line_is_over_120_characters() -> None:
    found = long_lines(DOCS, ROOT)
    assert not found, f"lines over {LIMIT} characters:\n" + "\n".join(found)


def test_a_long_line_is_named_by_file_and_line(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "decisions").mkdir(parents=True)
    (docs / "short.md").write_text("fine\n" * 3, encoding="utf-8")
    long_page = "ok\n" + "x" * (LIMIT + 1) + "\n" + "y" * LIMIT + "\n"
    (docs / "decisions" / "0001-long.md").write_text(long_page, encoding="utf-8")
    (docs / "notes.txt").write_text("z" * 500, encoding="utf-8")  # not a markdown page
    assert long_lines(docs, tmp_path) == ["docs/decisions/0001-long.md:2 (121 characters)"]
