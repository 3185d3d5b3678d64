"""Watch the public transparency log: `python -m fairness.witness --log URL --vkey K --state F`.

A witness keeps the last checkpoint it accepted (a state file) and, on every run, fetches the
log's newest checkpoint and checks that the log only ever grew: the log's signature and origin
verify under the vkey; the size did not shrink; the same size still has the same root; a larger
size comes with a consistency proof from the remembered size and root. Then it remembers the new
checkpoint. A log that shows one tree to the witness and another to a player (a fork) cannot
keep both views consistent, so a witness that runs regularly, from outside the casino, catches
it. Pure: the standard library (urllib) and fairness.tlog / fairness.note, no Django.

Usage:

    python -m fairness.witness --log https://casino.example/api/log \\
        --vkey @log.vkey --state ~/.casino-witness.json [--cosign witness.key] [--timeout 10]

- `--log`: the log's base URL; the witness reads `<URL>/checkpoint` and
  `<URL>/proof/consistency?from=M&to=N` (and, with `--cosign`, posts to `<URL>/cosignatures`).
- `--vkey`: the log's verifier key (`<name>+<hex key id>+<base64 key>`, as published at
  `<URL>/vkey` and in the docs), or `@path` to a file that holds it. Get it once, out of band,
  and keep it: the witness trusts nothing else.
- `--origin`: the checkpoint origin the log must use (default: the vkey's name).
- `--state`: the JSON file of the last accepted checkpoint: {origin, size, root_b64,
  checkpoint, seen_at}. Written atomically (a temporary file, then a rename); never touched
  when a check fails. Without it (a first run) the witness trusts the checkpoint it sees on
  first use, and says so.
- `--cosign KEYFILE`: also cosign the verified checkpoint (c2sp.org/tlog-cosignature,
  cosignature/v1, the time of signing) and post the line to the log, which keeps it for anyone
  to see. KEYFILE holds the witness's signer key, `PRIVATE+KEY+<name>+<hex id>+<base64 key>`;
  the log must know the matching cosigner vkey (`fairness.note.make_cosigner_vkey`).

Output: one line on stdout, `ok: <origin> size N root <base64> (grew by K)`, exit status 0.
A refusal (a shrunk log, a fork at the same size, a consistency proof that does not verify, a
bad signature or origin) prints what the witness saw (old size and root, new size and root, the
reason) on stderr and exits 1: keep that output, it is the evidence. A log that cannot be
reached, an unusable answer or a refused cosignature exits 2; run again later.

An auditor's crontab (every ten minutes; cron mails whatever reaches stderr, a refusal's
evidence included):

    MAILTO=auditor@example.org
    WITNESS=--log https://casino.example/api/log --vkey @/srv/w/log.vkey --state /srv/w/state.json
    */10 * * * * cd /srv/casino && .venv/bin/python -m fairness.witness $WITNESS >>/srv/w/ok.log
"""

from __future__ import annotations

import argparse
import base64
import binascii
import contextlib
import datetime
import json
import os
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from fairness import note, tlog

USER_AGENT = "fairness-witness/1"
MAX_ANSWER = 1 << 20  # bytes read from any answer

OK, REFUSED, UNAVAILABLE = 0, 1, 2


class Refused(Exception):
    """The log misbehaved (or its answer does not verify): exit 1."""


class Unavailable(Exception):
    """The check could not be made (network, a malformed answer, a local problem): exit 2."""


@dataclass(frozen=True)
class Seen:
    origin: str
    size: int
    root: bytes
    checkpoint: str
    seen_at: str = ""

    def describe(self) -> str:
        return f"size {self.size} root {_b64(self.root)}"


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _error_text(raw: bytes) -> str:
    """The message of an error answer: the project's {"error": {"code", "message"}} shape,
    DRF's {"detail": ...}, or the first characters of the text."""
    text = raw.decode("utf-8", "replace")
    try:
        body = json.loads(text)
    except ValueError:
        return text.strip()[:200]
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict):
            code, message = error.get("code"), error.get("message")
            return f"{code}: {message}" if code else str(message)
        if "detail" in body:
            return str(body["detail"])
    return text.strip()[:200]


class Client:
    """The log's HTTP API, urllib only."""

    def __init__(self, base: str, timeout: float) -> None:
        self.base = base.rstrip("/")
        self.timeout = timeout

    def _request(self, path: str, data: bytes | None = None) -> tuple[int, bytes]:
        url = f"{self.base}/{path}"
        headers = {"User-Agent": USER_AGENT, "Accept": "*/*"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(url, data=data, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as answer:
                return answer.status, answer.read(MAX_ANSWER)
        except urllib.error.HTTPError as error:
            raw = error.read(MAX_ANSWER)
            raise Unavailable(f"{url}: HTTP {error.code}: {_error_text(raw)}") from None
        except (urllib.error.URLError, OSError, ValueError) as error:
            reason = getattr(error, "reason", error)
            raise Unavailable(f"{url}: cannot reach the log: {reason}") from None

    def get_text(self, path: str) -> str:
        _, raw = self._request(path)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise Unavailable(f"{self.base}/{path}: the answer is not UTF-8") from None

    def get_json(self, path: str) -> dict[str, Any]:
        _, raw = self._request(path)
        try:
            body = json.loads(raw)
        except ValueError:
            raise Unavailable(f"{self.base}/{path}: the answer is not JSON") from None
        if not isinstance(body, dict):
            raise Unavailable(f"{self.base}/{path}: the answer is not a JSON object")
        return body

    def post_json(self, path: str, payload: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        status, raw = self._request(path, json.dumps(payload).encode())
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {}
        return status, body if isinstance(body, dict) else {}

    def checkpoint(self, verifier: note.Verifier, origin: str) -> Seen:
        text = self.get_text("checkpoint")
        try:
            body, _ = note.open_note(text, [verifier])
        except note.NoteError as error:
            raise Refused(f"the checkpoint does not verify under the log's key: {error}") from None
        try:
            got_origin, size, root = note.parse_checkpoint(body)
        except note.NoteError as error:
            raise Refused(f"the signed checkpoint is malformed: {error}") from None
        if got_origin != origin:
            raise Refused(f"the checkpoint's origin is {got_origin!r}, not {origin!r}")
        return Seen(got_origin, size, root, text)

    def consistency(self, size1: int, size2: int) -> list[bytes]:
        body = self.get_json(f"proof/consistency?from={size1}&to={size2}")
        if body.get("from") != size1 or body.get("to") != size2:
            raise Unavailable(
                f"asked for the consistency proof from {size1} to {size2}, got one from "
                f"{body.get('from')!r} to {body.get('to')!r}"
            )
        proof = body.get("proof")
        if not isinstance(proof, list) or not all(isinstance(p, str) for p in proof):
            raise Unavailable("the consistency proof is not a list of base64 hashes")
        try:
            return [base64.b64decode(p, validate=True) for p in proof]
        except (binascii.Error, ValueError):
            raise Unavailable("the consistency proof is not a list of base64 hashes") from None


def load_vkey(value: str) -> note.Verifier:
    text = value
    if value.startswith("@"):
        try:
            text = Path(value[1:]).expanduser().read_text()
        except OSError as error:
            raise Unavailable(f"cannot read the vkey file {value[1:]}: {error}") from None
    try:
        return note.parse_vkey(text.strip())
    except note.NoteError as error:
        raise Unavailable(f"the vkey is not usable: {error}") from None


def load_state(path: Path) -> Seen | None:
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None
    except OSError as error:
        raise Unavailable(f"cannot read the state file {path}: {error}") from None
    try:
        state = json.loads(text)
        root = base64.b64decode(state["root_b64"], validate=True)
        seen = Seen(
            str(state["origin"]), int(state["size"]), root, str(state["checkpoint"]),
            str(state.get("seen_at", "")),
        )  # fmt: skip
    except (ValueError, KeyError, TypeError, binascii.Error):
        raise Unavailable(f"the state file {path} is not a witness state") from None
    if len(root) != tlog.HASH_SIZE or seen.size < 0:
        raise Unavailable(f"the state file {path} is not a witness state")
    return seen


def save_state(path: Path, seen: Seen) -> None:
    """Write the state atomically: a temporary file beside it, then a rename."""
    state = {
        "origin": seen.origin,
        "size": seen.size,
        "root_b64": _b64(seen.root),
        "checkpoint": seen.checkpoint,
        "seen_at": seen.seen_at,
    }
    directory = path.resolve().parent
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    except OSError as error:  # a state that cannot be kept is a check not done: exit 2
        raise Unavailable(f"cannot write the state file {path}: {error}") from None
    try:
        with os.fdopen(fd, "w") as out:
            json.dump(state, out, indent=2, sort_keys=True)
            out.write("\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def check_growth(old: Seen, new: Seen, client: Client) -> None:
    """Refused unless `new` extends `old` (same root at the same size, or a verified proof)."""
    if new.size < old.size:
        raise Refused(f"log shrank from {old.size} to {new.size}")
    if new.size == old.size:
        if new.root != old.root:
            raise Refused(f"fork: the log shows a different root for the same size {new.size}")
        return
    if old.size == 0:
        return  # every tree extends the empty one: there is nothing to prove
    proof = client.consistency(old.size, new.size)
    try:
        tlog.verify_consistency(old.size, new.size, proof, old.root, new.root)
    except tlog.ProofError as error:
        raise Refused(
            f"fork: the consistency proof from {old.size} to {new.size} does not verify ({error})"
        ) from None


def cosign_and_post(client: Client, seen: Seen, keyfile: str, out: TextIO) -> None:
    try:
        name, key = note.parse_signer_key(Path(keyfile).expanduser().read_text())
    except OSError as error:
        raise Unavailable(f"cannot read the cosigner key {keyfile}: {error}") from None
    except note.NoteError as error:
        raise Unavailable(f"the cosigner key in {keyfile} is not usable: {error}") from None
    body = seen.checkpoint[: seen.checkpoint.rfind("\n\n") + 1]
    line = note.cosign(body, name, key, int(time.time()))
    status, answer = client.post_json("cosignatures", {"size": seen.size, "line": line})
    stored = "stored" if status == 201 else "already stored" if status == 200 else f"HTTP {status}"
    known_as = answer.get("witness")
    by = f" (the log knows the witness as {known_as})" if known_as and known_as != name else ""
    print(f"cosigned: {name} at size {seen.size}: {stored}{by}", file=out)


def _refuse(refusal: Refused, old: Seen | None, new: Seen | None, path: Path, err: TextIO) -> int:
    """Print what the witness saw and why it refuses: the evidence."""
    print(f"refused: {refusal}", file=err)
    if old is not None:
        print(f"  old: {old.describe()} (seen {old.seen_at or 'at an unknown time'})", file=err)
    if new is not None:
        print(f"  new: {new.describe()}", file=err)
        print("  the log's checkpoint as served:", file=err)
        err.write("".join(f"    {line}\n" for line in new.checkpoint.splitlines()))
    print(f"  state file {path} left as it was", file=err)
    return REFUSED


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    verifier = load_vkey(args.vkey)
    origin = args.origin or verifier.name
    state_path = Path(args.state).expanduser()
    old = load_state(state_path)
    client = Client(args.log, args.timeout)
    new: Seen | None = None
    try:
        if old is not None and old.origin != origin:
            raise Refused(f"the state file is for origin {old.origin!r}, not {origin!r}")
        seen = client.checkpoint(verifier, origin)
        now = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
        new = Seen(seen.origin, seen.size, seen.root, seen.checkpoint, now)
        if old is not None:
            check_growth(old, new, client)
    except Refused as refusal:
        return _refuse(refusal, old, new, state_path, err)
    save_state(state_path, new)
    if old is None:
        how = f"first run: trusted on first use, state written to {state_path}"
    else:
        how = f"grew by {new.size - old.size}"
    print(f"ok: {new.origin} {new.describe()} ({how})", file=out)
    if args.cosign:
        cosign_and_post(client, new, args.cosign, out)
    return OK


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m fairness.witness",
        description="Check that the casino's transparency log only grows; remember what it saw.",
    )
    p.add_argument("--log", required=True, help="the log's base URL, e.g. https://host/api/log")
    p.add_argument("--vkey", required=True, help="the log's vkey, or @FILE holding it")
    p.add_argument("--state", required=True, help="the witness's state file (JSON)")
    p.add_argument("--origin", help="the origin the log must use (default: the vkey's name)")
    p.add_argument("--cosign", metavar="KEYFILE", help="cosign with this signer key and post it")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds per request (10)")
    return p


def main(
    argv: Sequence[str] | None = None, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    args = parser().parse_args(argv)
    try:
        return run(args, out, err)
    except Refused as refusal:
        print(f"refused: {refusal}", file=err)
        return REFUSED
    except Unavailable as problem:
        print(f"error: {problem}", file=err)
        return UNAVAILABLE


if __name__ == "__main__":
    sys.exit(main())
