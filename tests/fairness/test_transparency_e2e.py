"""The transparency log end to end over HTTP: `python -m fairness.verify --checkpoint --vkey
--log` against a live server finds a round the operator left out of a bundle and a round the
log does not hold; the witness follows the live log and cosigns it."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.core.management import call_command

from fairness import note, transparency
from fairness.models import LogCheckpoint, LogCosignature, LogLeaf, LogWitness
from fairness.verify import main as verify_main
from tests.api.conftest import Api, make_player
from tests.fairness.test_transparency import played_round

pytestmark = pytest.mark.django_db(transaction=True)
ROOT = Path(__file__).resolve().parents[2]


def export(tmp_path: Path, name: str = "bundle.jsonl") -> Path:
    out = tmp_path / name
    call_command("export_rounds", "--out", str(out), stdout=StringIO())
    return out


def verify(*args: str) -> tuple[int, str]:
    out = StringIO()
    code = verify_main(list(args), out=out)
    return code, out.getvalue()


def test_the_verifier_checks_a_bundle_against_the_live_log(
    live_server: Any, tmp_path: Path
) -> None:
    api = Api(make_player())
    rounds = [played_round(api) for _ in range(4)]
    first = transparency.sequence()
    late = played_round(api)  # ended after the first checkpoint
    transparency.sequence()
    bundle = export(tmp_path)
    checkpoint = tmp_path / "checkpoint.txt"
    checkpoint.write_text(LogCheckpoint.objects.order_by("-size")[0].note)
    vkey = transparency.signer().vkey
    log = f"{live_server.url}/api/log"
    code, text = verify(str(bundle), "--checkpoint", str(checkpoint), "--vkey", vkey, "--log", log)
    assert code == 0, text
    assert f"OK   log blackjack.local/log: checkpoint at size {LogLeaf.objects.count()}" in text
    assert "5 rounds checked against it" in text

    # The operator leaves the third round out of the bundle: the log names it.
    lines = bundle.read_text().splitlines(keepends=True)
    hidden = [line for line in lines if rounds[2] in line]
    partial = tmp_path / "partial.jsonl"
    partial.write_text("".join(line for line in lines if line not in hidden))
    args = ["--checkpoint", str(checkpoint), "--vkey", vkey, "--log", log]
    code, text = verify(str(partial), *args)
    assert code == 1
    assert f"round {rounds[2]} (nonce 3) is in the log but not in the bundle" in text

    # The operator cuts the last round and lowers the (unsigned) chain line to match: every
    # check holds, but the log line shows the ended round it holds past the bundle's end.
    chain = json.loads(lines[0])
    chain["last_nonce"] -= 1
    cut = tmp_path / "cut.jsonl"
    cut.write_text(json.dumps(chain) + "\n" + "".join(x for x in lines[1:] if late not in x))
    code, text = verify(str(cut), *args)
    assert code == 0, text
    assert text.splitlines()[-1].endswith(
        "4 rounds checked against it; ended in the log, outside the bundle: 1 rounds after the "
        "bundle's last nonce of their chain"
    )

    # Against the first, smaller checkpoint the late round is not in the log yet.
    older = tmp_path / "older.txt"
    older.write_text(LogCheckpoint.objects.get(size=first.size).note)
    code, text = verify(str(bundle), "--checkpoint", str(older), "--vkey", vkey, "--log", log)
    assert code == 1 and f"round {late}: not in the log (no round_opened leaf)" in text

    # A checkpoint signed by another key is refused before anything else.
    other = Ed25519PrivateKey.generate()
    forged = tmp_path / "forged.txt"
    body = LogCheckpoint.objects.order_by("-size")[0].note.split("\n\n")[0] + "\n"
    forged.write_text(note.sign_note(body, "blackjack.local/log", other))
    code, text = verify(str(bundle), "--checkpoint", str(forged), "--vkey", vkey, "--log", log)
    assert code == 1 and "FAIL log: checkpoint:" in text


def test_the_verifier_reads_a_saved_copy_of_the_leaves_and_refuses_a_changed_one(
    tmp_path: Path,
) -> None:
    api = Api(make_player())
    played_round(api)
    done = transparency.sequence()
    bundle = export(tmp_path)
    checkpoint = tmp_path / "checkpoint.txt"
    checkpoint.write_text(LogCheckpoint.objects.get(size=done.size).note)
    leaves = [
        {"index": leaf.index, "data": base64.b64encode(leaf.data.encode()).decode()}
        for leaf in LogLeaf.objects.order_by("index")
    ]
    saved = tmp_path / "leaves.jsonl"
    saved.write_text("".join(json.dumps(leaf) + "\n" for leaf in leaves))
    vkey = transparency.signer().vkey
    args = ["--checkpoint", str(checkpoint), "--vkey", vkey, "--log", str(saved)]
    code, text = verify(str(bundle), *args)
    assert code == 0, text
    leaves[0]["data"] = base64.b64encode(b'{"kind":"round_opened","round_id":"x"}').decode()
    saved.write_text("".join(json.dumps(leaf) + "\n" for leaf in leaves))
    code, text = verify(str(bundle), *args)
    assert code == 1
    assert f"FAIL log: the log's {done.size} leaves do not rebuild the checkpoint's root" in text


def test_a_witness_follows_the_live_log_and_cosigns_it(live_server: Any, tmp_path: Path) -> None:
    key = Ed25519PrivateKey.generate()
    raw = key.private_bytes_raw()
    vkey = note.make_cosigner_vkey("auditor.example", key.public_key().public_bytes_raw())
    LogWitness.objects.create(name="auditor.example", vkey=vkey)
    keyfile = tmp_path / "witness.key"
    keyfile.write_text(note.signer_key("auditor.example", raw, sig_type=note.COSIGNATURE_V1))
    api = Api(make_player())
    played_round(api)
    first = transparency.sequence()
    state = tmp_path / "state.json"
    command = [
        sys.executable, "-m", "fairness.witness", "--log", f"{live_server.url}/api/log",
        "--vkey", transparency.signer().vkey, "--state", str(state), "--cosign", str(keyfile),
    ]  # fmt: skip
    run = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert run.returncode == 0, run.stderr
    assert f"size {first.size}" in run.stdout
    played_round(api)
    second = transparency.sequence()
    run = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert run.returncode == 0, run.stderr
    assert f"ok: blackjack.local/log size {second.size}" in run.stdout
    assert f"(grew by {second.size - first.size})" in run.stdout
    cosigned = sorted(LogCosignature.objects.values_list("size", flat=True))
    assert cosigned == [first.size, second.size]
    served = api.client.get("/api/log/checkpoint").content.decode()
    assert "— auditor.example " in served
