"""docs/fairness.md carries the spec byte for byte and the same vectors as the tests."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs/fairness.md").read_text(encoding="utf-8")
SPEC_SHA256 = "10c184c6d440564cf53363cf54344cb7180e8b0576052b9bf22c3a7692cd64c8"


def test_the_spec_is_copied_byte_for_byte() -> None:
    begin, end = "<!-- fairness-v1 begin -->\n", "<!-- fairness-v1 end -->"
    spec = DOC[DOC.index(begin) + len(begin) : DOC.index(end)]
    assert hashlib.sha256(spec.encode("utf-8")).hexdigest() == SPEC_SHA256


def test_every_vector_is_printed() -> None:
    vectors = json.loads((ROOT / "tests/fairness/vectors.json").read_text())
    for vector in vectors["shoes"]:
        assert f"first 20 cards   {' '.join(vector['first_20'])}" in DOC
        assert vector["server_seed"] in DOC and vector["block0_hex"] in DOC
    assert vectors["event_hash"]["hash"] in DOC
    assert vectors["receipt"]["signature"] in DOC


def test_the_commands_are_documented() -> None:
    for command in (
        "python -m fairness.shoe",
        "python -m fairness.verify",
        "manage.py fairness_rotate_seed_keys",
        "/fairness/verify/",
        "python -m tests.fairness.gen_vectors",
    ):
        assert command in DOC
