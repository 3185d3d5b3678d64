"""`manage.py export_rounds` writes a chain line per seed chain before the rounds, and
`python -m fairness.verify` checks the rounds across the chain; GET /api/fairness/chains/{id}
serves every chain's public facts. Real rounds, played through the round service."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from casino.models import Round
from casino.tables.play import play
from fairness import verify
from fairness.bundle import CHAIN_FIELDS, CHAIN_FORMAT
from fairness.models import RoundProof, SeedChain

pytestmark = pytest.mark.django_db


@pytest.fixture
def rounds() -> list[str]:
    return play(ruleset="classic", rounds=6, players=1, seed=5).round_ids


def export(tmp_path: Path, *args: str) -> list[dict[str, Any]]:
    bundle = tmp_path / "rounds.jsonl"
    call_command("export_rounds", "--out", str(bundle), *args, stdout=io.StringIO())
    return [json.loads(line) for line in bundle.read_text().splitlines()]


def verified(tmp_path: Path) -> tuple[int, list[str]]:
    out = io.StringIO()
    code = verify.main([str(tmp_path / "rounds.jsonl")], out=out)
    return code, out.getvalue().splitlines()


def the_chain(round_ids: list[str]) -> SeedChain:
    (chain_id,) = set(Round.objects.filter(id__in=round_ids).values_list("chain_id", flat=True))
    return SeedChain.objects.get(pk=int(chain_id))


def test_a_full_export_states_its_chain_and_verifies_complete_from_the_terminal(
    rounds: list[str], tmp_path: Path
) -> None:
    lines = export(tmp_path)
    chain = the_chain(rounds)
    first, *rest = lines
    assert list(first) == sorted(CHAIN_FIELDS)  # canonical JSON: sorted keys
    assert first == {
        "format": CHAIN_FORMAT, "chain_id": str(chain.pk), "table_id": chain.table_id,
        "terminal": chain.terminal, "length": chain.length, "first_nonce": 1, "last_nonce": 6,
        "created_at": first["created_at"],
    }  # fmt: skip
    assert [line["receipt"]["round_id"] for line in rest] == rounds
    # the chain line says what the public API says of the chain, forever
    served = APIClient().get(f"/api/fairness/chains/{chain.pk}").json()
    assert served == {
        "chain_id": str(chain.pk), "table_id": chain.table_id, "terminal": chain.terminal,
        "length": chain.length, "created_at": first["created_at"], "status": "active",
    }  # fmt: skip
    code, output = verified(tmp_path)
    assert code == 0, output
    assert output[-2:] == [
        f"OK   chain {chain.pk}: complete from its terminal (nonces 1..6, table {chain.table_id})",
        "1 chain: 1 complete from the terminal, 0 partial, 0 coverage unknown, 0 failed",
    ]


def test_a_round_lost_from_a_partial_export_is_named(rounds: list[str], tmp_path: Path) -> None:
    since = Round.objects.get(id=rounds[2]).opened_at.isoformat()
    lines = export(tmp_path, "--since", since)
    chain = the_chain(rounds)
    assert (lines[0]["first_nonce"], lines[0]["last_nonce"]) == (3, 6)
    assert verified(tmp_path)[0] == 0
    # the operator loses one round's proof: an export from the same date no longer has it
    lost = Round.objects.get(id=rounds[4])
    RoundProof.objects.filter(round_id=lost.id).delete()
    lines = export(tmp_path, "--since", since)
    assert (lines[0]["first_nonce"], lines[0]["last_nonce"]) == (3, 6)
    assert [line["receipt"]["nonce"] for line in lines[1:]] == [3, 4, 6]
    code, output = verified(tmp_path)
    assert code == 1
    assert output[-2:] == [
        f"FAIL chain {chain.pk}: nonce {lost.nonce} missing (range 3..6)",
        "1 chain: 0 complete from the terminal, 0 partial, 0 coverage unknown, 1 failed",
    ]


def test_a_lost_last_round_is_named_in_a_full_export(rounds: list[str], tmp_path: Path) -> None:
    RoundProof.objects.filter(round_id=rounds[-1]).delete()
    lines = export(tmp_path)
    assert lines[0]["last_nonce"] == 6  # the chain revealed six seeds
    code, output = verified(tmp_path)
    assert code == 1 and output[-2].endswith(": nonce 6 missing (range 1..6)")


def test_named_rounds_state_the_range_between_them(rounds: list[str], tmp_path: Path) -> None:
    lines = export(tmp_path, "--round", rounds[1], "--round", rounds[2])
    assert (lines[0]["first_nonce"], lines[0]["last_nonce"]) == (2, 3)
    code, output = verified(tmp_path)
    assert code == 0, output
    assert "nonces 2..3, none missing (partial: from nonce 2" in output[-2]


def test_export_then_the_verifier_cli_passes_end_to_end(rounds: list[str], tmp_path: Path) -> None:
    export(tmp_path)
    out = subprocess.run(
        [sys.executable, "-m", "fairness.verify", str(tmp_path / "rounds.jsonl"), "--jobs", "2"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    rows = out.stdout.splitlines()
    assert all(row.startswith("OK   line ") for row in rows[:6])
    assert rows[6].startswith("6 rounds: 6 verified, 0 failed")
    assert rows[7].startswith("OK   chain ") and ": complete from its terminal (" in rows[7]
    assert (
        rows[8] == "1 chain: 1 complete from the terminal, 0 partial, 0 coverage unknown, 0 failed"
    )


def test_every_chain_is_served_and_unknown_ones_are_404(rounds: list[str]) -> None:
    client = APIClient()
    for chain in SeedChain.objects.all():  # the active one and any prepared or used up
        body = client.get(f"/api/fairness/chains/{chain.pk}/").json()
        assert body["terminal"] == chain.terminal and body["status"] == chain.status
    for bad, status, code in (
        ("999999", 404, "unknown_chain"),
        ("chain-1", 404, "unknown_chain"),
        ("9" * 40, 404, "unknown_chain"),
        ("a b", 400, "invalid_chain_id"),
    ):
        response = client.get(f"/api/fairness/chains/{bad}")
        assert response.status_code == status, response.content
        assert response.json()["error"]["code"] == code
