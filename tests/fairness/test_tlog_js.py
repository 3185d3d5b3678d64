"""The JavaScript transparency-log verifier (fairness/static/fairness/tlog.js) in Node 20: the
published vectors, the signed-note spec example, and proofs and a cosigned checkpoint made by
fairness.tlog / fairness.note (tests/fairness/js/tlog.check.mjs)."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from fairness import note, tlog

ROOT = Path(__file__).resolve().parents[2]
NODE = shutil.which("node") or "/usr/bin/node"
ORIGIN = "casino.example/log"


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def fixture() -> dict[str, Any]:
    rnd = random.Random(6962)
    tiles = tlog.MemoryTiles()
    leaves: list[bytes] = []
    while len(leaves) < 1100:
        batch = [
            tlog.leaf_hash(f"entry {len(leaves) + j}".encode()) for j in range(rnd.randint(1, 90))
        ]
        tiles.append(len(leaves), batch)
        leaves += batch
    roots = [tlog.tree_hash(s, tiles) for s in range(len(leaves) + 1)]
    sizes = [
        1,
        2,
        3,
        255,
        256,
        257,
        511,
        512,
        513,
        len(leaves),
        *rnd.sample(range(1, len(leaves)), 12),
    ]
    inclusion = []
    consistency = []
    for size in sizes:
        for index in {0, size - 1, rnd.randrange(size)}:
            proof = tlog.inclusion_proof(index, size, tiles)
            inclusion.append(
                {
                    "index": index,
                    "size": size,
                    "leaf": _b64(leaves[index]),
                    "proof": [_b64(p) for p in proof],
                }
            )
        for size1 in {1, size, rnd.randint(1, size)}:
            proof = tlog.consistency_proof(size1, size, tiles)
            consistency.append({"from": size1, "to": size, "proof": [_b64(p) for p in proof]})
    key = Ed25519PrivateKey.from_private_bytes(hashlib.sha256(b"js log key").digest())
    witness = Ed25519PrivateKey.from_private_bytes(hashlib.sha256(b"js witness key").digest())
    size = len(leaves)
    body = note.checkpoint_body(ORIGIN, size, roots[size])
    line = note.cosign(body, "witness.example/w", witness, 1_712_345_678)
    impostor = Ed25519PrivateKey.from_private_bytes(hashlib.sha256(b"impostor").digest())
    return {
        "origin": ORIGIN,
        "roots": [_b64(r) for r in roots],
        "inclusion": inclusion,
        "consistency": consistency,
        "note": {
            "checkpoint": note.add_signatures(note.sign_note(body, ORIGIN, key), [line]),
            "vkey": note.make_vkey(ORIGIN, key.public_key().public_bytes_raw()),
            "cosignerVkey": note.make_cosigner_vkey(
                "witness.example/w", witness.public_key().public_bytes_raw()
            ),
            "cosignature": {"line": line, "timestamp": 1_712_345_678},
            "impostor": note.sign_note(body, ORIGIN, impostor),
            "size": size,
            "root": _b64(roots[size]),
        },
    }


def test_node_checks_the_vectors_and_python_made_proofs_and_notes(tmp_path: Path) -> None:
    path = tmp_path / "fixture.json"
    path.write_text(json.dumps(fixture()))
    out = subprocess.run(
        [NODE, "--test", str(ROOT / "tests/fairness/js/tlog.check.mjs")],
        capture_output=True, text=True, timeout=120, env={**os.environ, "TLOG_FIXTURE": str(path)},
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    assert "# pass 6" in out.stdout and "# fail 0" in out.stdout and "# skipped 0" in out.stdout
