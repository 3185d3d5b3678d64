"""A bundle checked against the public transparency log (`python -m fairness.verify FILE
--checkpoint CP --vkey KEY --log URL`; docs/fairness.md, "Transparency log"). Pure: no Django.

The checkpoint is verified with the log's key; every leaf up to its size is read (from the
log's `/leaves` pages, or a file of them) and must rebuild the checkpoint's root, so each
leaf read is proved included in the signed tree. Then, for every round of the bundle, its
`round_opened` leaf must name the round's chain, nonce, commitment, table and open time, and
a `round_receipt` leaf must carry its signature; and for every chain the bundle covers, the
log's finished rounds of that chain within the bundle's nonce range must all be in the
bundle: a round the operator left out is named. Ended rounds past those ranges, or of chains
the bundle has none of, are only counted on the result line (an export may end before the
checkpoint, or cover some tables only).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from fairness import note, tlog
from fairness.witness import Client, Unavailable

PAGE = 1000  # leaves per /leaves request: the server's maximum


class Round(Protocol):
    """What the log check reads of a verified round (fairness.verify.RoundReport)."""

    kind: str
    round_id: str
    chain_id: str | None
    nonce: int | None
    table_id: str | None
    commitment: str | None
    opened_at: str | None
    signature: str | None


@dataclass
class LogResult:
    """What the log check found: `failures` empty means every check held."""

    origin: str
    size: int
    signers: list[str]
    failures: list[str] = field(default_factory=list)
    rounds_checked: int = 0
    open_in_log: int = 0  # rounds the log shows opened whose receipt it does not hold yet
    # Ended rounds the log holds outside what the bundle covers: after its last nonce of a
    # chain, or of a chain it has no round of. Not failures (an export may end before the
    # checkpoint, or cover some rounds only), but shown: a cut tail or a left-out table.
    ended_after: int = 0
    ended_other_chains: int = 0

    @property
    def ok(self) -> bool:
        return not self.failures


class LogError(ValueError):
    """The checkpoint, the key or the log itself could not be used."""


def read_vkey(value: str) -> note.Verifier:
    """A vkey given as itself or as @path to a file holding it."""
    text = Path(value[1:]).read_text(encoding="utf-8") if value.startswith("@") else value
    try:
        return note.parse_vkey(text.strip())
    except note.NoteError as error:
        raise LogError(f"--vkey: {error}") from error


def open_checkpoint(text: str, verifier: note.Verifier) -> tuple[str, int, bytes, list[str]]:
    """(origin, size, root, names that signed it) of a checkpoint the log's key signed."""
    try:
        body, names = note.open_note(text, [verifier])
        origin, size, root = note.parse_checkpoint(body)
    except note.NoteError as error:
        raise LogError(f"checkpoint: {error}") from error
    if origin != verifier.name:
        raise LogError(f"checkpoint: origin {origin!r} is not the key's name {verifier.name!r}")
    return origin, size, root, names


def _pages(source: str, size: int, timeout: float) -> Iterator[list[tuple[int, bytes]]]:
    if source.startswith(("http://", "https://")):
        client = Client(source, timeout)
        for start in range(0, size, PAGE):
            end = min(start + PAGE, size)
            try:
                body = client.get_json(f"leaves?start={start}&end={end}")
            except Unavailable as error:
                raise LogError(str(error)) from error
            leaves = body.get("leaves")
            if not isinstance(leaves, list):
                raise LogError(f"{source}/leaves?start={start}&end={end}: no list of leaves")
            yield [_leaf(leaf, f"{source}/leaves?start={start}&end={end}") for leaf in leaves]
        return
    with open(source, encoding="utf-8") as handle:  # one {"index", "data"} per line
        page: list[tuple[int, bytes]] = []
        for number, line in enumerate(handle, 1):
            if line.strip():
                try:
                    leaf = json.loads(line)
                except ValueError:
                    raise LogError(f"{source} line {number}: not valid JSON") from None
                page.append(_leaf(leaf, f"{source} line {number}"))
                if len(page) == PAGE:
                    yield page
                    page = []
        yield page


def _leaf(leaf: Any, where: str) -> tuple[int, bytes]:
    """(index, data) of one {"index", "data"} leaf; a LogError naming `where` if it is not one
    (a traceback told the auditor nothing about which file or page)."""
    try:
        if not isinstance(leaf, dict):
            raise TypeError("not a JSON object")
        index = leaf["index"]
        if isinstance(index, bool) or not isinstance(index, int):
            raise TypeError("index is not an integer")
        return index, base64.b64decode(leaf["data"], validate=True)
    except KeyError as error:
        raise LogError(f'{where}: not a leaf {{"index", "data"}} (no {error})') from None
    except (TypeError, ValueError) as error:
        raise LogError(f'{where}: not a leaf {{"index", "data"}} ({error})') from None


def read_leaves(
    source: str,
    size: int,
    root: bytes,
    *,
    timeout: float = 30.0,
    progress: Callable[[int, int], None] | None = None,
) -> list[bytes]:
    """Leaves 0..size-1 of the log at `source` (its /api/log URL, or a JSON Lines file of
    {"index", "data"}), proved against `root`: they must rebuild it exactly. `progress(read,
    size)` is called after each page (a large log is many requests)."""
    out: list[bytes] = []
    for page in _pages(source, size, timeout):
        if progress is not None and page:
            progress(min(len(out) + len(page), size), size)
        for index, data in page:
            if index != len(out):
                raise LogError(f"the log's leaves skip from {len(out)} to {index}")
            if index < size:
                out.append(data)
    if len(out) < size:
        raise LogError(f"the log gave {len(out)} leaves, the checkpoint signs {size}")
    if tlog.MemoryTiles().append(0, [tlog.leaf_hash(data) for data in out]) != root:
        raise LogError(f"the log's {size} leaves do not rebuild the checkpoint's root")
    return out


def check_rounds(rounds: Iterable[Round], leaves: Sequence[bytes], result: LogResult) -> None:
    """The bundle's rounds against the log's round leaves (see the module docstring)."""
    opened: dict[str, dict[str, Any]] = {}
    signed: dict[str, set[str]] = {}
    for data in leaves:
        leaf = json.loads(data)
        if leaf.get("kind") == "round_opened":
            opened[str(leaf["round_id"])] = leaf
        elif leaf.get("kind") == "round_receipt":
            signed.setdefault(str(leaf["round_id"]), set()).add(str(leaf["signature"]))
    fail = result.failures.append
    covered: dict[str, list[int]] = {}  # chain -> the bundle's nonces
    bundled: set[str] = set()
    for report in rounds:
        if report.kind != "round":
            continue
        result.rounds_checked += 1
        bundled.add(report.round_id)
        if report.chain_id is not None and report.nonce is not None:
            covered.setdefault(report.chain_id, []).append(report.nonce)
        leaf = opened.get(report.round_id)
        if leaf is None:
            fail(f"round {report.round_id}: not in the log (no round_opened leaf)")
            continue
        for name in ("chain_id", "nonce", "commitment", "table_id", "opened_at"):
            if leaf.get(name) != getattr(report, name):
                fail(
                    f"round {report.round_id}: {name} {getattr(report, name)!r} differs from "
                    f"the log's round_opened leaf ({leaf.get(name)!r})"
                )
        if report.signature not in signed.get(report.round_id, set()):
            fail(f"round {report.round_id}: its receipt is not in the log (no round_receipt leaf)")
    for round_id, leaf in opened.items():
        nonces = covered.get(str(leaf["chain_id"]))
        if round_id in bundled:
            continue
        if nonces is None:
            result.ended_other_chains += round_id in signed
            continue
        if round_id not in signed:
            result.open_in_log += 1  # opened, not ended yet (or ended after the checkpoint)
            continue
        if int(leaf["nonce"]) > max(nonces):
            result.ended_after += 1
        elif min(nonces) <= int(leaf["nonce"]):
            fail(
                f"chain {leaf['chain_id']}: round {round_id} (nonce {leaf['nonce']}) is in the "
                "log but not in the bundle"
            )


def check(
    rounds: Iterable[Round],
    *,
    checkpoint: str,
    vkey: str,
    log: str,
    timeout: float = 30.0,
    progress: Callable[[int, int], None] | None = None,
) -> LogResult:
    """The whole log check of a bundle's verified rounds."""
    verifier = read_vkey(vkey)
    origin, size, root, names = open_checkpoint(checkpoint, verifier)
    result = LogResult(origin=origin, size=size, signers=names)
    leaves = read_leaves(log, size, root, timeout=timeout, progress=progress)
    check_rounds(rounds, leaves, result)
    return result


def format_result(result: LogResult) -> str:
    head = (
        f"log {result.origin}: checkpoint at size {result.size} signed by "
        f"{', '.join(result.signers)}; {result.rounds_checked} rounds checked against it"
    )
    if result.open_in_log:
        head += f" ({result.open_in_log} rounds of these chains opened in the log, not ended)"
    outside = [
        f"{result.ended_after} rounds after the bundle's last nonce of their chain"
        if result.ended_after
        else "",
        f"{result.ended_other_chains} rounds of chains the bundle has no round of"
        if result.ended_other_chains
        else "",
    ]
    if any(outside):
        head += "; ended in the log, outside the bundle: " + ", ".join(filter(None, outside))
    return "\n".join([f"{'OK  ' if result.ok else 'FAIL'} {head}", *result.failures])
