"""audit, export_rounds + fairness.verify, reconcile and rebuild_projections on real rounds,
untouched and tampered with (bypassing the append-only triggers as a superuser would)."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection

from casino.eventstore.models import StoredEvent
from casino.models import Round
from casino.tables.play import play
from fairness import verify
from ledger.management.commands.flush import triggers_suspended

pytestmark = pytest.mark.django_db


@pytest.fixture
def rounds() -> list[str]:
    return play(ruleset="classic", rounds=3, players=1, seed=3).round_ids


def run_audit(*args: str) -> tuple[int, dict[str, object]]:
    out = io.StringIO()
    try:
        call_command("audit", "--json", *args, stdout=out)
        code = 0
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    return code, json.loads(out.getvalue())


def export_and_verify(tmp_path: Path) -> tuple[int, str]:
    bundle = tmp_path / "rounds.jsonl"
    call_command("export_rounds", "--out", str(bundle), stdout=io.StringIO())
    out = io.StringIO()
    return verify.main([str(bundle)], out=out), out.getvalue()


def tamper(sql: str, params: list[object]) -> None:
    with triggers_suspended(connection), connection.cursor() as cursor:
        cursor.execute(sql, params)


def card_events(round_id: str) -> Iterator[StoredEvent]:
    return iter(
        StoredEvent.objects.filter(stream_id=round_id, type="PlayerCardDealt").order_by("version")
    )


def test_untouched_rounds_pass_audit_export_verify_and_reconcile(
    rounds: list[str], tmp_path: Path
) -> None:
    code, result = run_audit()
    assert code == 0
    assert result["rounds"] == 3 and result["failed"] == 0 and result["ok"] is True
    code, printed = export_and_verify(tmp_path)
    assert code == 0, printed
    assert printed.count("OK") >= 3
    out = io.StringIO()
    call_command("reconcile", "--json", stdout=out)
    report = json.loads(out.getvalue())
    assert report["ok"] is True and report["total_micro"] == 0
    assert "round_legs" in report["checks"]


def test_a_changed_card_is_caught_by_audit_and_by_the_verifier(
    rounds: list[str], tmp_path: Path
) -> None:
    target = rounds[1]
    event = next(card_events(target))
    data = dict(event.data)
    data["card"] = "AS" if data["card"] != "AS" else "KS"
    tamper(
        "UPDATE eventstore_storedevent SET data = %s WHERE position = %s",
        [json.dumps(data), event.position],
    )
    code, result = run_audit()
    assert code == 1
    failed = {p["round"]: p["problems"] for p in result["problems"]}  # type: ignore[union-attr]
    assert list(failed) == [target]
    assert any(f"version {event.version}" in p for p in failed[target])
    assert any("position" in p and data["card"] in p for p in failed[target])
    code, printed = export_and_verify(tmp_path)
    assert code == 1
    assert target in printed


def test_a_deleted_middle_event_is_caught(rounds: list[str], tmp_path: Path) -> None:
    target = rounds[0]
    middle = StoredEvent.objects.filter(stream_id=target, version=3).get()
    tamper("DELETE FROM eventstore_storedevent WHERE position = %s", [middle.position])
    code, result = run_audit("--round", target)
    assert code == 1
    problems = result["problems"][0]["problems"]  # type: ignore[index]
    assert any("version" in p for p in problems)
    code, _ = export_and_verify(tmp_path)
    assert code == 1


def test_two_reordered_cards_are_caught(rounds: list[str], tmp_path: Path) -> None:
    target = rounds[2]
    dealt = list(
        StoredEvent.objects.filter(stream_id=target, type__endswith="CardDealt").order_by("version")
    )
    # Two cards that differ (a fair shoe deals four equal cards first about once in 10^5).
    first = dealt[0]
    second = next(e for e in dealt[1:] if e.data["card"] != first.data["card"])
    for event, other in ((first, second), (second, first)):
        tamper(
            "UPDATE eventstore_storedevent SET data = %s WHERE position = %s",
            [json.dumps({**event.data, "card": other.data["card"]}), event.position],
        )
    code, result = run_audit("--round", target)
    assert code == 1
    problems = result["problems"][0]["problems"]  # type: ignore[index]
    assert any(f"position {first.data['position']}" in p for p in problems)
    code, _ = export_and_verify(tmp_path)
    assert code == 1


def test_rebuilt_projections_equal_the_live_ones_and_repair_drift(rounds: list[str]) -> None:
    out = io.StringIO()
    call_command("rebuild_projections", "--check", "--json", stdout=out)
    assert json.loads(out.getvalue())["differences"] == 0
    Round.objects.filter(id=rounds[0]).update(stake_total=1)  # a projection drifted
    with pytest.raises(SystemExit):
        call_command("rebuild_projections", "--check", stdout=io.StringIO())
    call_command("rebuild_projections", stdout=io.StringIO())
    call_command("rebuild_projections", "--check", stdout=io.StringIO())
    assert Round.objects.get(id=rounds[0]).stake_total != 1


def test_audit_names_an_unknown_round() -> None:
    from django.core.management import CommandError

    with pytest.raises(CommandError, match="no such round: missing"):
        call_command("audit", "--round", "missing")


def test_export_names_a_round_it_cannot_export(rounds: list[str], tmp_path: Path) -> None:
    """Asked for two rounds, one unknown: no bundle of the other alone (it would verify)."""
    from django.core.management import CommandError

    bundle = tmp_path / "rounds.jsonl"
    with pytest.raises(CommandError) as raised:
        call_command(
            "export_rounds", "--out", str(bundle), "--round", rounds[0], "--round", "missing"
        )
    assert str(raised.value) == "no such finished round: missing"
    assert not bundle.exists()


@pytest.mark.parametrize("where", ["missing/rounds.jsonl", "a-directory"])
def test_export_to_a_path_it_cannot_write_is_an_error(
    rounds: list[str], tmp_path: Path, where: str
) -> None:
    """A traceback before (a directory given as --out: after writing the whole .partial, which
    stayed behind)."""
    from django.core.management import CommandError

    (tmp_path / "a-directory").mkdir()
    out = tmp_path / where
    with pytest.raises(CommandError) as raised:
        call_command("export_rounds", "--out", str(out), stderr=io.StringIO())
    why = "No such file or directory" if where.startswith("missing") else "Is a directory"
    assert str(raised.value) == f"cannot write {out}: {why}"
    assert not list(tmp_path.rglob("*.partial"))


def test_export_reports_what_it_wrote_on_stdout(rounds: list[str], tmp_path: Path) -> None:
    """On stderr, Django drew the success line in an error's red on a terminal."""
    bundle = tmp_path / "rounds.jsonl"
    out, err = io.StringIO(), io.StringIO()
    call_command("export_rounds", "--out", str(bundle), stdout=out, stderr=err)
    assert out.getvalue() == f"wrote 1 chain lines and 3 rounds to {bundle}\n"
    assert err.getvalue() == ""


def test_a_round_deleted_with_its_events_and_proof_is_named_from_the_log(
    rounds: list[str],
) -> None:
    """Every per-round check passed: the round was simply no longer there to check."""
    from casino.models import RoundPlayer
    from fairness import transparency
    from fairness.models import LogLeaf, RoundProof

    transparency.sequence()
    target = Round.objects.get(id=rounds[1])
    leaf = LogLeaf.objects.get(kind="round_opened", ref=target.id)
    with triggers_suspended(connection), connection.cursor() as cursor:
        cursor.execute("DELETE FROM eventstore_storedevent WHERE stream_id = %s", [target.id])
        RoundProof.objects.filter(round_id=target.id).delete()
        RoundPlayer.objects.filter(round=target).delete()
        target.delete()
    code, result = run_audit()
    assert code == 1
    assert result["rounds"] == 2 and result["failed"] == 0
    assert result["log"] == [
        {
            "check": "log_rounds",
            "message": f"round {rounds[1]} (chain {target.chain_id}, nonce {target.nonce}) is in "
            f"the transparency log (leaf {leaf.index}) but not in the database",
            "entry": None,
            "index": leaf.index,
        }
    ]


def test_a_cut_off_tail_is_caught_through_the_receipt(rounds: list[str], tmp_path: Path) -> None:
    target = rounds[0]
    last = StoredEvent.objects.filter(stream_id=target).order_by("-version").first()
    assert last is not None and last.type == "ServerSeedRevealed"
    tamper("DELETE FROM eventstore_storedevent WHERE position = %s", [last.position])
    code, result = run_audit("--round", target)
    assert code == 1
    problems = result["problems"][0]["problems"]  # type: ignore[index]
    assert any("final" in p or "ServerSeedRevealed" in p for p in problems), problems
    code, _ = export_and_verify(tmp_path)
    assert code == 1


def problems_of(round_id: str) -> list[str]:
    code, result = run_audit("--round", round_id)
    assert code == 1
    return result["problems"][0]["problems"]  # type: ignore[index, no-any-return]


def test_one_changed_digit_of_a_stored_payout_is_caught(rounds: list[str], tmp_path: Path) -> None:
    target = rounds[1]
    settled = StoredEvent.objects.get(stream_id=target, type="RoundSettled")
    data = json.loads(json.dumps(settled.data))
    data["hands"][0]["gross_return"] += 1  # one micro-USDC more
    tamper(
        "UPDATE eventstore_storedevent SET data = %s WHERE position = %s",
        [json.dumps(data), settled.position],
    )
    problems = problems_of(target)
    assert any(
        p.startswith(f"event hash: version {settled.version} (RoundSettled)") for p in problems
    )
    code, printed = export_and_verify(tmp_path)
    assert code == 1 and f"round {target}: event hash: version {settled.version}" in printed


def test_a_changed_receipt_payout_or_signature_is_caught(rounds: list[str]) -> None:
    from fairness.models import RoundProof

    proof = RoundProof.objects.get(round_id=rounds[0])
    receipt = json.loads(json.dumps(proof.receipt))
    receipt["payouts"]["hands"][0]["gross_return"] += 1
    tamper(
        "UPDATE fairness_roundproof SET receipt = %s WHERE id = %s", [json.dumps(receipt), proof.pk]
    )
    problems = problems_of(rounds[0])
    assert (
        problems[0]
        == f"signature: not a valid Ed25519 signature of this receipt by key {proof.key_id}"
    )
    assert any("payouts.hands[0].gross_return" in p for p in problems)

    proof = RoundProof.objects.get(round_id=rounds[1])
    digit = "1" if proof.signature[10] != "1" else "2"
    signature = proof.signature[:10] + digit + proof.signature[11:]
    tamper("UPDATE fairness_roundproof SET signature = %s WHERE id = %s", [signature, proof.pk])
    assert problems_of(rounds[1]) == [
        f"signature: not a valid Ed25519 signature of this receipt by key {proof.key_id}"
    ]


def test_a_re_chained_and_re_signed_payout_the_rules_do_not_give_is_caught(
    rounds: list[str],
) -> None:
    """The forger holds the signing key: hashes and receipt agree with the changed payout.
    Only the rules can tell, through the proof of play (the round decided anew)."""
    from fairness.canonical import event_hash
    from fairness.models import RoundProof
    from fairness.services import receipt_sign

    target = rounds[2]
    stored = list(StoredEvent.objects.filter(stream_id=target).order_by("version"))
    settled = next(e for e in stored if e.type == "RoundSettled")
    prev = settled.prev_hash
    for event in stored[settled.version - 1 :]:
        data = json.loads(json.dumps(event.data))
        if event is settled:
            data["hands"][0]["gross_return"] += 5_000_000
        body = {**event.stored_body(), "data": data}
        new_hash = event_hash(prev, body)
        tamper(
            "UPDATE eventstore_storedevent SET data = %s, prev_hash = %s, hash = %s "
            "WHERE position = %s",
            [json.dumps(data), prev, new_hash, event.position],
        )
        prev = new_hash
    proof = RoundProof.objects.get(round_id=target)
    receipt = json.loads(json.dumps(proof.receipt))
    receipt["payouts"]["hands"][0]["gross_return"] += 5_000_000
    receipt["final_event_hash"] = prev
    signature, _ = receipt_sign(receipt=receipt)
    tamper(
        "UPDATE fairness_roundproof SET receipt = %s, signature = %s WHERE id = %s",
        [json.dumps(receipt), signature, proof.pk],
    )
    problems = problems_of(target)
    assert not any(p.startswith(("event hash", "signature", "outcome")) for p in problems)
    # The ledger paid what the rules give, not the forged payout: its legs say so too.
    assert [p for p in problems if p.startswith("ledger legs: ")] == problems[:2]
    found = problems[2]
    assert len(problems) == 3, problems
    assert found.startswith(f"play: version {settled.version}: recorded RoundSettled {{"), found
    assert "(the settlement differs: hands[0].gross_return: recorded " in found


def test_a_payout_stored_as_an_equal_float_is_caught(rounds: list[str]) -> None:
    """The audit hashes float-free pages through orjson; a float (which append never writes)
    sends the page down canonical JSON's general path, and the hash no longer matches."""
    target = rounds[1]
    settled = StoredEvent.objects.get(stream_id=target, type="RoundSettled")
    data = json.loads(json.dumps(settled.data))
    gross = data["hands"][0]["gross_return"]
    text = json.dumps(data).replace(f'"gross_return": {gross}', f'"gross_return": {gross}.0', 1)
    assert f"{gross}.0" in text
    tamper(
        "UPDATE eventstore_storedevent SET data = %s WHERE position = %s", [text, settled.position]
    )
    assert problems_of(target)[0].startswith(
        f"event hash: version {settled.version} (RoundSettled) records {settled.hash}, recomputed "
    )
    code, result = run_audit()
    failed = [p["round"] for p in result["problems"]]  # type: ignore[union-attr]
    assert code == 1 and failed == [target]


def test_a_receipt_payout_stored_as_an_equal_float_fails_the_signature(
    rounds: list[str],
) -> None:
    from fairness.models import RoundProof

    proof = RoundProof.objects.get(round_id=rounds[0])
    gross = proof.receipt["payouts"]["hands"][0]["gross_return"]
    text = json.dumps(proof.receipt).replace(
        f'"gross_return": {gross}', f'"gross_return": {gross}.0', 1
    )
    tamper("UPDATE fairness_roundproof SET receipt = %s WHERE id = %s", [text, proof.pk])
    problems = problems_of(rounds[0])
    assert problems[0] == (
        f"signature: not a valid Ed25519 signature of this receipt by key {proof.key_id}"
    )
    assert problems[1].startswith("outcome: the receipt's payouts differ from the settled event's")
    assert len(problems) == 2


def test_a_changed_prev_hash_link_of_a_finished_round_is_caught(rounds: list[str]) -> None:
    target = rounds[2]
    event = StoredEvent.objects.get(stream_id=target, version=4)
    forged = "f" * 64
    tamper(
        "UPDATE eventstore_storedevent SET prev_hash = %s WHERE position = %s",
        [forged, event.position],
    )
    assert problems_of(target) == [
        f"event hash: version 4 ({event.type}) records prev_hash {forged}, "
        f"expected {StoredEvent.objects.get(stream_id=target, version=3).hash}"
    ]
