"""`python -m fairness.verify --log FILE` with a saved copy of the leaves that is not one: a
clear `FAIL log:` line naming the file and line, exit 1, never a traceback. Pure: no Django."""

from __future__ import annotations

import base64
import json
from io import StringIO
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from fairness import note, tlog
from fairness.verify import main as verify_main
from tests.fairness.terminal import verify_on_a_terminal

ORIGIN = "example.test/log"
LEAVES = [b'{"kind":"journal_entry"}', b'{"kind":"journal_entry","n":2}']


@pytest.fixture
def log_args(tmp_path: Path) -> list[str]:
    key = Ed25519PrivateKey.generate()
    root = tlog.MemoryTiles().append(0, [tlog.leaf_hash(data) for data in LEAVES])
    checkpoint = tmp_path / "checkpoint.txt"
    checkpoint.write_text(note.sign_note(note.checkpoint_body(ORIGIN, 2, root), ORIGIN, key))
    vkey = note.make_vkey(ORIGIN, key.public_key().public_bytes_raw())
    return ["--checkpoint", str(checkpoint), "--vkey", vkey]


def run(tmp_path: Path, log_args: list[str], leaves: str) -> tuple[int, str]:
    bundle = tmp_path / "rounds.jsonl"
    bundle.write_text("")
    saved = tmp_path / "leaves.jsonl"
    saved.write_text(leaves)
    out = StringIO()
    code = verify_main([str(bundle), *log_args, "--log", str(saved)], out=out)
    return code, out.getvalue().splitlines()[-1].replace(str(saved), "leaves.jsonl")


def leaf(index: object, data: bytes) -> str:
    return json.dumps({"index": index, "data": base64.b64encode(data).decode()}) + "\n"


def test_a_good_copy_of_the_leaves_is_read(tmp_path: Path, log_args: list[str]) -> None:
    good = leaf(0, LEAVES[0]) + leaf(1, LEAVES[1])
    code, last = run(tmp_path, log_args, good)
    assert last.startswith(f"OK   log {ORIGIN}: checkpoint at size 2 signed by {ORIGIN}")
    assert code == 1  # an empty bundle verifies nothing


NOT_A_LEAF = 'not a leaf {"index", "data"}'


@pytest.mark.parametrize(
    ("leaves", "message"),
    [
        ("not json\n", "line 1: not valid JSON"),
        (leaf(0, LEAVES[0]) + '{"index": 1}\n', f"line 2: {NOT_A_LEAF} (no 'data')"),
        (leaf("0", LEAVES[0]), f"line 1: {NOT_A_LEAF} (index is not an integer)"),
        ('{"index": 0, "data": "!!"}\n', f"line 1: {NOT_A_LEAF} (Only base64 data is allowed)"),
        ("[1, 2]\n", f"line 1: {NOT_A_LEAF} (not a JSON object)"),
    ],
)
def test_a_broken_copy_of_the_leaves_is_named_not_a_traceback(
    tmp_path: Path, log_args: list[str], leaves: str, message: str
) -> None:
    code, last = run(tmp_path, log_args, leaves)
    assert code == 1
    assert last == f"FAIL log: leaves.jsonl {message}"


def test_reading_the_leaves_shows_progress_on_a_terminal(
    tmp_path: Path, log_args: list[str]
) -> None:
    """A large log is many pages of 1,000 leaves: the verifier said nothing while it read them."""
    bundle = tmp_path / "rounds.jsonl"
    bundle.write_text("")
    saved = tmp_path / "leaves.jsonl"
    saved.write_text(leaf(0, LEAVES[0]) + leaf(1, LEAVES[1]))
    done, shown = verify_on_a_terminal(str(bundle), *log_args, "--log", str(saved))
    assert "\r2/2 log leaves read" in shown
    assert f"OK   log {ORIGIN}: checkpoint at size 2" in done.stdout
