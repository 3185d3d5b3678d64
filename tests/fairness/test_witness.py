"""The witness CLI (fairness.witness) against a real HTTP server in a thread that serves a log
built with fairness.tlog.MemoryTiles and signed with fairness.note: it accepts growth, refuses
a shrunk or forked log and a bad signature, keeps its state on refusal, and cosigns."""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from fairness import note, tlog, witness

ROOT = Path(__file__).resolve().parents[2]
ORIGIN = "casino.test/log"
LOG_SEED = hashlib.sha256(b"witness test log").digest()
LOG_KEY = Ed25519PrivateKey.from_private_bytes(LOG_SEED)
VKEY = note.make_vkey(ORIGIN, LOG_KEY.public_key().public_bytes_raw())
WITNESS_NAME = "auditor.test/w1"
WITNESS_SEED = hashlib.sha256(b"witness test cosigner").digest()
WITNESS_KEY = Ed25519PrivateKey.from_private_bytes(WITNESS_SEED)
COSIGNER_VKEY = note.make_cosigner_vkey(WITNESS_NAME, WITNESS_KEY.public_key().public_bytes_raw())


class Tree:
    """A log's tree: leaves appended into MemoryTiles, a signed checkpoint at any size."""

    def __init__(self, label: str, size: int) -> None:
        self.label = label
        self.tiles = tlog.MemoryTiles()
        self.size = 0
        self.grow(size)

    def grow(self, size: int) -> None:
        new = [tlog.leaf_hash(f"{self.label} {i}".encode()) for i in range(self.size, size)]
        self.tiles.append(self.size, new)
        self.size = size

    def checkpoint(self, size: int, key: Ed25519PrivateKey = LOG_KEY) -> str:
        body = note.checkpoint_body(ORIGIN, size, tlog.tree_hash(size, self.tiles))
        return note.sign_note(body, ORIGIN, key)


class Log:
    """What the server serves: a tree, the size of its current checkpoint, stored cosignatures."""

    def __init__(self) -> None:
        self.tree = Tree("honest", 64)
        self.size = 0
        self.checkpoint_text: str | None = None  # served as is instead, when set
        self.cosignatures: dict[int, str] = {}
        self.requests: list[str] = []

    def show(self, tree: Tree, size: int) -> None:
        self.tree, self.size, self.checkpoint_text = tree, size, None

    def checkpoint(self) -> str:
        text = self.checkpoint_text or self.tree.checkpoint(self.size)
        return note.add_signatures(text, list(self.cosignatures.values()))


class Handler(BaseHTTPRequestHandler):
    log: Log

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, body: dict[str, Any]) -> None:
        self._send(status, json.dumps(body).encode(), "application/json")

    def _error(self, status: int, code: str, message: str) -> None:
        self._json(status, {"error": {"code": code, "message": message, "details": {}}})

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        self.log.requests.append(f"GET {url.path}?{url.query}".rstrip("?"))
        if url.path == "/api/log/checkpoint":
            self._send(200, self.log.checkpoint().encode(), "text/plain; charset=utf-8")
        elif url.path == "/api/log/proof/consistency":
            size1, size2 = int(query["from"]), int(query["to"])
            if not 0 <= size1 <= size2 <= self.log.tree.size:
                self._error(400, "out_of_range", "from must be between 0 and to.")
                return
            proof = tlog.consistency_proof(size1, size2, self.log.tree.tiles)
            proof_b64 = [note._b64(h) for h in proof]
            self._json(200, {"from": size1, "to": size2, "proof": proof_b64})
        else:
            self._error(404, "not_found", "Not found.")

    def do_POST(self) -> None:
        self.log.requests.append(f"POST {self.path}")
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path != "/api/log/cosignatures":
            self._error(404, "not_found", "Not found.")
            return
        size, line = body["size"], body["line"]
        text = self.log.tree.checkpoint(size)
        try:
            note.verify_cosignature(text.split("\n\n")[0] + "\n", line, COSIGNER_VKEY)
        except note.NoteError as error:
            self._error(403, "bad_cosignature", f"The cosignature does not verify: {error}")
            return
        created = size not in self.log.cosignatures
        self.log.cosignatures.setdefault(size, line)
        self._json(201 if created else 200, {"size": size, "witness": WITNESS_NAME})


@pytest.fixture
def served() -> Iterator[tuple[Log, str]]:
    log = Log()
    handler = type("LogHandler", (Handler,), {"log": log})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield log, f"http://127.0.0.1:{server.server_address[1]}/api/log"
    finally:
        server.shutdown()
        server.server_close()


def run_inline(url: str, state: Path, *extra: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    args = ["--log", url, "--vkey", VKEY, "--state", str(state), "--timeout", "5", *extra]
    code = witness.main(args, out, err)
    return code, out.getvalue(), err.getvalue()


def run_cli(url: str, state: Path, *extra: str) -> tuple[int, str, str]:
    args = ["--log", url, "--vkey", VKEY, "--state", str(state), "--timeout", "5", *extra]
    done = subprocess.run(
        [sys.executable, "-m", "fairness.witness", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    return done.returncode, done.stdout, done.stderr


def root_b64(tree: Tree, size: int) -> str:
    return note._b64(tlog.tree_hash(size, tree.tiles))


def test_first_run_trusts_on_first_use_then_growth_and_no_change(
    served: tuple[Log, str], tmp_path: Path
) -> None:
    log, url = served
    state = tmp_path / "state.json"
    log.show(log.tree, 10)
    code, out, err = run_cli(url, state)
    assert (code, err) == (0, "")
    assert out == (
        f"ok: {ORIGIN} size 10 root {root_b64(log.tree, 10)} "
        f"(first run: trusted on first use, state written to {state})\n"
    )
    saved = json.loads(state.read_text())
    assert saved["origin"] == ORIGIN and saved["size"] == 10
    assert saved["root_b64"] == root_b64(log.tree, 10)
    assert saved["checkpoint"] == log.checkpoint() and saved["seen_at"].endswith("+00:00")
    log.show(log.tree, 13)
    code, out, err = run_cli(url, state)
    assert (code, out, err) == (
        0,
        f"ok: {ORIGIN} size 13 root {root_b64(log.tree, 13)} (grew by 3)\n",
        "",
    )
    assert "GET /api/log/proof/consistency?from=10&to=13" in log.requests
    code, out, _ = run_inline(url, state)
    assert (code, out) == (0, f"ok: {ORIGIN} size 13 root {root_b64(log.tree, 13)} (grew by 0)\n")
    assert json.loads(state.read_text())["size"] == 13


def test_vkey_from_a_file(served: tuple[Log, str], tmp_path: Path) -> None:
    log, url = served
    log.show(log.tree, 3)
    (tmp_path / "log.vkey").write_text(VKEY + "\n")
    out, err = io.StringIO(), io.StringIO()
    args = ["--log", url, "--vkey", f"@{tmp_path / 'log.vkey'}", "--state", str(tmp_path / "s")]
    assert witness.main(args, out, err) == 0, err.getvalue()


def test_a_log_that_skipped_checkpoints_still_verifies(
    served: tuple[Log, str], tmp_path: Path
) -> None:
    log, url = served
    state = tmp_path / "state.json"
    log.show(log.tree, 5)
    assert run_inline(url, state)[0] == 0
    log.show(log.tree, 40)
    code, out, err = run_inline(url, state)
    assert (code, err) == (0, "")
    assert out.endswith("size 40 root " + root_b64(log.tree, 40) + " (grew by 35)\n")
    assert log.requests[-1] == "GET /api/log/proof/consistency?from=5&to=40"


def test_growth_from_an_empty_log_needs_no_proof(served: tuple[Log, str], tmp_path: Path) -> None:
    log, url = served
    state = tmp_path / "state.json"
    log.show(log.tree, 0)
    assert run_inline(url, state)[0] == 0
    log.show(log.tree, 7)
    code, out, _ = run_inline(url, state)
    assert code == 0 and out.endswith("(grew by 7)\n")
    assert not any("consistency" in r for r in log.requests)


def _refused(code: int, out: str, err: str, state: Path, before: bytes) -> None:
    assert code == 1 and out == ""
    assert f"state file {state} left as it was" in err
    assert state.read_bytes() == before


def test_a_fork_at_the_same_size_is_refused(served: tuple[Log, str], tmp_path: Path) -> None:
    log, url = served
    state = tmp_path / "state.json"
    honest = log.tree
    log.show(honest, 10)
    assert run_inline(url, state)[0] == 0
    before = state.read_bytes()
    other = Tree("forked", 64)
    log.show(other, 10)
    code, out, err = run_cli(url, state)
    _refused(code, out, err, state, before)
    assert err.startswith("refused: fork: the log shows a different root for the same size 10\n")
    assert f"  old: size 10 root {root_b64(honest, 10)}" in err
    assert f"  new: size 10 root {root_b64(other, 10)}\n" in err
    assert "  the log's checkpoint as served:\n    casino.test/log\n    10\n" in err


def test_a_fork_whose_proof_fails_is_refused(served: tuple[Log, str], tmp_path: Path) -> None:
    log, url = served
    state = tmp_path / "state.json"
    honest = log.tree
    log.show(honest, 10)
    assert run_inline(url, state)[0] == 0
    before = state.read_bytes()
    other = Tree("forked", 64)
    log.show(other, 20)
    code, out, err = run_cli(url, state)
    _refused(code, out, err, state, before)
    assert err.startswith(
        "refused: fork: the consistency proof from 10 to 20 does not verify "
        "(consistency proof from 10 to 20 does not lead to root1)\n"
    )
    assert f"  old: size 10 root {root_b64(honest, 10)} (seen 20" in err
    assert f"  new: size 20 root {root_b64(other, 20)}\n" in err


def test_a_smaller_log_is_refused(served: tuple[Log, str], tmp_path: Path) -> None:
    log, url = served
    state = tmp_path / "state.json"
    log.show(log.tree, 10)
    assert run_inline(url, state)[0] == 0
    before = state.read_bytes()
    log.show(log.tree, 5)
    code, out, err = run_cli(url, state)
    _refused(code, out, err, state, before)
    assert err.startswith("refused: log shrank from 10 to 5\n")
    assert f"  old: size 10 root {root_b64(log.tree, 10)}" in err
    assert f"  new: size 5 root {root_b64(log.tree, 5)}\n" in err


def test_a_bad_signature_is_refused(served: tuple[Log, str], tmp_path: Path) -> None:
    log, url = served
    state = tmp_path / "state.json"
    log.show(log.tree, 10)
    assert run_inline(url, state)[0] == 0
    before = state.read_bytes()
    impostor = Ed25519PrivateKey.from_private_bytes(hashlib.sha256(b"impostor").digest())
    log.checkpoint_text = log.tree.checkpoint(12, impostor)
    code, out, err = run_cli(url, state)
    _refused(code, out, err, state, before)
    assert err.startswith(
        "refused: the checkpoint does not verify under the log's key: the note has no signature "
        "by a known key (casino.test/log+"
    )
    good = log.tree.checkpoint(12)
    log.checkpoint_text = good.replace("\n12\n", "\n13\n")
    code, out, err = run_inline(url, state)
    _refused(code, out, err, state, before)
    assert "signature of casino.test/log (key id " in err and "does not verify" in err


def test_another_origin_is_refused(served: tuple[Log, str], tmp_path: Path) -> None:
    log, url = served
    log.show(log.tree, 4)
    code, _, err = run_inline(url, tmp_path / "s", "--origin", "other.test/log")
    assert code == 1
    assert err.startswith(
        "refused: the checkpoint's origin is 'casino.test/log', not 'other.test/log'"
    )
    assert not (tmp_path / "s").exists()


def test_cosign_posts_a_verifying_line(served: tuple[Log, str], tmp_path: Path) -> None:
    log, url = served
    state = tmp_path / "state.json"
    keyfile = tmp_path / "witness.key"
    keyfile.write_text(note.signer_key(WITNESS_NAME, WITNESS_SEED) + "\n")
    log.show(log.tree, 9)
    code, out, err = run_cli(url, state, "--cosign", str(keyfile))
    assert (code, err) == (0, "")
    assert out.splitlines()[1] == f"cosigned: {WITNESS_NAME} at size 9: stored"
    line = log.cosignatures[9]
    body = log.tree.checkpoint(9).split("\n\n")[0] + "\n"
    assert note.verify_cosignature(body, line, COSIGNER_VKEY) > 1_700_000_000
    # the cosigned checkpoint (the log's signature and the witness's) still verifies next time
    assert WITNESS_NAME in log.checkpoint()
    code, out, _ = run_inline(url, state, "--cosign", str(keyfile))
    assert (
        code == 0 and out.splitlines()[1] == f"cosigned: {WITNESS_NAME} at size 9: already stored"
    )


def test_a_refused_cosignature_and_an_unreachable_log_exit_2(
    served: tuple[Log, str], tmp_path: Path
) -> None:
    log, url = served
    state = tmp_path / "state.json"
    keyfile = tmp_path / "other.key"
    keyfile.write_text(note.signer_key(WITNESS_NAME, hashlib.sha256(b"not registered").digest()))
    log.show(log.tree, 9)
    code, out, err = run_inline(url, state, "--cosign", str(keyfile))
    assert code == 2 and out.startswith("ok: ")
    assert err.startswith(f"error: {url}/cosignatures: HTTP 403: bad_cosignature: The cosignature")
    code, out, err = run_cli("http://127.0.0.1:9/api/log", tmp_path / "other.json")
    assert (code, out) == (2, "")
    assert err.startswith("error: http://127.0.0.1:9/api/log/checkpoint: cannot reach the log: ")
    assert not (tmp_path / "other.json").exists()


def test_unusable_vkey_and_state(served: tuple[Log, str], tmp_path: Path) -> None:
    _, url = served
    out, err = io.StringIO(), io.StringIO()
    assert witness.main(["--log", url, "--vkey", "nope", "--state", "s"], out, err) == 2
    assert err.getvalue().startswith("error: the vkey is not usable: ")
    state = tmp_path / "state.json"
    state.write_text("{}")
    code, _, err2 = run_inline(url, state)
    assert code == 2 and err2 == f"error: the state file {state} is not a witness state\n"


def test_a_state_file_that_cannot_be_written_exits_2_naming_it(
    served: tuple[Log, str], tmp_path: Path
) -> None:
    """Its directory missing, the run verified, then stopped on a traceback with exit 1 (the
    exit status of a refused log)."""
    _, url = served
    state = tmp_path / "missing" / "state.json"
    code, out, err = run_cli(url, state)
    assert code == 2, err
    assert out == ""
    assert err.startswith(f"error: cannot write the state file {state}: [Errno 2] ")
    assert "Traceback" not in err
