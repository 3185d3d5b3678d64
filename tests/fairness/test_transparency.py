"""The transparency log on the server: leaves queued by the game's own transactions, the
sequencer, signed checkpoints, proofs over HTTP, cosignatures, /healthz, and what `audit` and
`reconcile` catch (a forged journal entry, a dropped leaf, a checkpoint over another root)."""

from __future__ import annotations

import base64
import json
import time
import uuid
from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.core.management import call_command
from django.db import connection, transaction
from django.test import Client
from django.utils import timezone

from fairness import logaudit, note, tlog, transparency
from fairness.canonical import canonical_text
from fairness.models import (
    JournalLink,
    LogCheckpoint,
    LogCosignature,
    LogLeaf,
    LogPending,
    LogWitness,
)
from ledger.models import JournalEntry
from ledger.reconcile import ledger_reconcile
from tests.api.conftest import Api, make_player
from tests.api.test_rounds import deal, personal

pytestmark = pytest.mark.django_db


def leaves(kind: str | None = None) -> list[dict[str, Any]]:
    rows = LogLeaf.objects.order_by("index")
    return [json.loads(r.data) for r in rows if kind is None or r.kind == kind]


def played_round(api: Api) -> str:
    """A whole classic round at the player's personal table: dealt, stood, settled (the
    player declines insurance offers by preference, so a dealer's ace never leaves it open)."""
    api.patch("/api/me/preferences/", {"offer_insurance": False})
    table = personal(api)
    body = deal(api, table, "1")
    round_id = str(body["round_id"])
    if body["status"] != "settled":
        stood = api.post(f"/api/rounds/{round_id}/stand/").json()
        assert stood["status"] == "settled", stood
    return round_id


def opened_checkpoint(client: Client) -> tuple[str, int, bytes]:
    vkey = client.get("/api/log/vkey").content.decode().strip()
    text = client.get("/api/log/checkpoint").content.decode()
    body, names = note.open_note(text, [note.parse_vkey(vkey)])
    assert names
    return note.parse_checkpoint(body)


def test_a_round_queues_its_open_its_money_and_its_receipt_and_the_sequencer_logs_them() -> None:
    player = make_player()
    api = Api(player)
    round_id = played_round(api)
    kinds = list(LogPending.objects.order_by("id").values_list("kind", "ref"))
    assert ("round_opened", round_id) in kinds and ("round_receipt", round_id) in kinds
    assert sum(k == "journal_entry" for k, _ in kinds) == JournalEntry.objects.count()
    done = transparency.sequence()
    assert done.added == len(kinds) and done.size == len(kinds)
    assert not LogPending.objects.exists()
    opened = [leaf for leaf in leaves("round_opened") if leaf["round_id"] == round_id]
    assert len(opened) == 1
    proof = Client().get(f"/api/fairness/rounds/{round_id}").json()
    assert opened[0]["commitment"] == proof["receipt"]["commitment"]
    assert opened[0]["nonce"] == proof["receipt"]["nonce"]
    receipt_leaf = next(leaf for leaf in leaves("round_receipt") if leaf["round_id"] == round_id)
    assert receipt_leaf["receipt"] == proof["receipt"]
    assert receipt_leaf["signature"] == proof["signature"]
    log = proof["log"]
    assert log["pending"] == 0 and len(log["round_receipt"]) == 1
    assert log["max_merge_delay_s"] == 10.0  # what the verify page tells a pending round
    index = log["round_opened"]
    assert LogLeaf.objects.get(index=index).kind == "round_opened"
    # The leaf's inclusion at the checkpoint's size verifies against the signed root.
    client = Client()
    origin, size, root = opened_checkpoint(client)
    assert origin == "blackjack.local/log" and size == done.size
    answer = client.get("/api/log/proof/inclusion", {"index": index, "size": size}).json()
    served = client.get("/api/log/leaves", {"start": index, "end": index + 1}).json()
    data = base64.b64decode(served["leaves"][0]["data"])
    assert json.loads(data)["round_id"] == round_id
    hashes = [base64.b64decode(h) for h in answer["proof"]]
    tlog.verify_inclusion(index, size, tlog.leaf_hash(data), hashes, root)


def test_the_journal_entries_leaves_carry_no_amounts_and_chain_in_log_order() -> None:
    make_player(funds=5_000_000)
    transparency.sequence()
    (leaf,) = leaves("journal_entry")
    assert set(leaf) == {"kind", "entry_id", "entry_kind", "created_at", "sha256"}
    entry = JournalEntry.objects.get()
    assert leaf["entry_id"] == entry.id and leaf["entry_kind"] == "deposit"
    link = JournalLink.objects.get()
    assert (link.seq, link.prev_hash, link.entry_hash) == (1, "0" * 64, leaf["sha256"])
    assert link.chain_hash == transparency.chain_hash("0" * 64, leaf["sha256"])
    make_player(funds=7_000_000)
    transparency.sequence()
    second = JournalLink.objects.get(seq=2)
    assert second.prev_hash == link.chain_hash
    assert logaudit.log_problems() == []


def test_consistency_between_two_checkpoints_verifies_and_bad_requests_are_refused() -> None:
    client = Client()
    make_player(funds=1_000_000)
    first = transparency.sequence()
    for _ in range(3):
        make_player(funds=2_000_000)
    second = transparency.sequence()
    old = LogCheckpoint.objects.get(size=first.size)
    _, size1, root1 = note.parse_checkpoint(old.note.split("\n\n")[0] + "\n")
    past = client.get("/api/log/checkpoints", {"size": first.size})
    assert past.status_code == 200 and past.content.decode() == old.note
    _, size2, root2 = opened_checkpoint(client)
    assert (size1, size2) == (first.size, second.size)
    answer = client.get("/api/log/proof/consistency", {"from": size1, "to": size2}).json()
    proof = [base64.b64decode(h) for h in answer["proof"]]
    tlog.verify_consistency(size1, size2, proof, root1, root2)
    with pytest.raises(tlog.ProofError):
        tlog.verify_consistency(size1, size2, proof, root1, bytes(32))
    cases: list[tuple[str, dict[str, Any], str]] = [
        ("/api/log/proof/inclusion", {"index": size2, "size": size2}, "out_of_range"),
        ("/api/log/proof/inclusion", {"index": 0, "size": size2 + 1}, "out_of_range"),
        ("/api/log/proof/inclusion", {"index": "x", "size": 1}, "invalid_index"),
        ("/api/log/proof/consistency", {"from": 3, "to": 2}, "out_of_range"),
        ("/api/log/leaves", {"start": 0, "end": 0}, "out_of_range"),
        ("/api/log/checkpoints", {"size": 10_000}, "not_found"),
    ]
    for url, params, code in cases:
        refused = client.get(url, params)
        assert refused.status_code in (400, 404), (url, params)
        assert refused.json()["error"]["code"] == code


def test_a_rolled_back_transaction_queues_nothing() -> None:
    player = make_player(funds=0)
    api = Api(player)
    table = personal(api)
    before = LogPending.objects.count()
    refused = api.post(f"/api/tables/{table}/deal/", {"mode": "bet", "bets": ["1"]})
    assert refused.status_code == 402 or refused.json()["error"]["code"] == "insufficient_funds"
    assert LogPending.objects.count() == before  # neither the open nor an entry


def forge_deposit(user_id: int, amount: int) -> int:
    """A balanced +amount deposit written straight into the journal's tables, as a superuser
    with SQL access could (no service, no leaf)."""
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO ledger_journalentry (kind, reference, idempotency_key, fingerprint, "
            "created_at) VALUES ('deposit', 'forged', %s, 'x', %s)",
            [f"forged-{uuid.uuid4().hex}", now],
        )
        cursor.execute("SELECT max(id) FROM ledger_journalentry")
        entry_id = int(cursor.fetchone()[0])
        cursor.execute(
            "SELECT id FROM ledger_account WHERE key = %s", [f"player_available:{user_id}"]
        )
        player_account = cursor.fetchone()[0]
        cursor.execute("SELECT id FROM ledger_account WHERE key = 'external:usdc'")
        external = cursor.fetchone()[0]
        cursor.execute(
            "INSERT INTO ledger_posting (entry_id, account_id, amount) VALUES (%s, %s, %s), "
            "(%s, %s, %s)",
            [entry_id, player_account, amount, entry_id, external, -amount],
        )
        cursor.execute(
            "UPDATE ledger_accountbalance SET balance = balance + %s WHERE account_id = %s",
            [amount, player_account],
        )
        cursor.execute(
            "UPDATE ledger_accountbalance SET balance = balance - %s WHERE account_id = %s",
            [amount, external],
        )
    return entry_id


def test_a_forged_deposit_is_caught_by_reconcile_and_by_audit_naming_the_entry() -> None:
    player = make_player(funds=1_000_000)
    transparency.sequence()
    assert ledger_reconcile().ok
    forged = forge_deposit(player.pk, 1_000_000_000)
    report = ledger_reconcile()
    assert not report.ok
    (problem,) = [p for p in report.problems if p.check == "journal_chain"]
    assert problem.entry == forged
    assert f"journal entry {forged} (deposit forged) has no journal_entry leaf" in problem.message
    out = StringIO()
    with pytest.raises(SystemExit) as exited:
        call_command("audit", stdout=out)
    assert exited.value.code == 1
    assert f"FAIL journal_chain: journal entry {forged} (deposit forged)" in out.getvalue()


def test_a_dropped_leaf_and_a_changed_leaf_are_caught_by_the_audit() -> None:
    for _ in range(3):
        make_player(funds=1_000_000)
    transparency.sequence()
    assert logaudit.tree_problems() == []
    LogLeaf.objects.filter(index=1).update(data='{"kind":"journal_entry","forged":true}')
    changed, *rest = logaudit.tree_problems()
    assert changed.index == 1 and "do not hash to the tree's hash" in changed.message
    assert "the leaves rebuild root" in rest[0].message  # and the signed root is not theirs
    LogLeaf.objects.filter(index=1).delete()
    dropped = logaudit.tree_problems()
    assert "the stored leaves skip from 1 to 2" in dropped[0].message


def test_a_checkpoint_re_signed_over_another_root_is_caught() -> None:
    make_player(funds=1_000_000)
    done = transparency.sequence()
    checkpoint = LogCheckpoint.objects.get(size=done.size)
    current = transparency.signer()
    body = note.checkpoint_body(current.name, done.size, bytes(32))
    checkpoint.note = note.sign_note(body, current.name, current.key)
    checkpoint.save()
    (problem,) = logaudit.tree_problems()
    assert f"the checkpoint at size {done.size} signs root {'00' * 32}" in problem.message


def test_cosignatures_from_registered_witnesses_are_kept_and_served() -> None:
    make_player(funds=1_000_000)
    done = transparency.sequence()
    key = Ed25519PrivateKey.generate()
    vkey = note.make_cosigner_vkey("witness.example", key.public_key().public_bytes_raw())
    LogWitness.objects.create(name="witness.example", vkey=vkey)
    checkpoint = LogCheckpoint.objects.get(size=done.size)
    body = checkpoint.note.split("\n\n")[0] + "\n"
    line = note.cosign(body, "witness.example", key, int(time.time()))
    client = Client()
    posted = client.post(
        "/api/log/cosignatures", {"size": done.size, "line": line}, content_type="application/json"
    )
    assert posted.status_code == 201, posted.content
    again = client.post(
        "/api/log/cosignatures", {"size": done.size, "line": line}, content_type="application/json"
    )
    assert again.status_code == 200 and LogCosignature.objects.count() == 1
    served = client.get("/api/log/checkpoint").content.decode()
    assert served.endswith(line if line.endswith("\n") else line + "\n")
    other = Ed25519PrivateKey.generate()
    forged = note.cosign(body, "witness.example", other, int(time.time()))
    refused = client.post(
        "/api/log/cosignatures",
        {"size": done.size, "line": forged},
        content_type="application/json",
    )
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "bad_cosignature"
    stranger = note.cosign(body, "stranger.example", other, int(time.time()))
    refused = client.post(
        "/api/log/cosignatures",
        {"size": done.size, "line": stranger},
        content_type="application/json",
    )
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "unknown_witness"
    status = transparency.witness_status()
    assert status[0]["name"] == "witness.example" and status[0]["last_size"] == done.size
    assert status[0]["overdue"] is False


def test_healthz_fails_when_a_leaf_waits_past_the_maximum_merge_delay(settings: Any) -> None:
    settings.LOG_MAX_MERGE_DELAY_S = 10.0
    settings.TIMERS_STALE_S = 0.0  # this process is past its start-up grace
    make_player(funds=1_000_000)
    client = Client()
    assert client.get("/healthz").json()["checks"]["transparency_log"]["ok"] is True
    LogPending.objects.update(queued_at=timezone.now() - timedelta(seconds=11))
    settings.TIMERS_STALE_S = 1e9  # a process just started: its sequencer may be starting
    waiting = client.get("/healthz").json()["checks"]["transparency_log"]
    assert waiting["ok"] is True and waiting["waiting"] is True
    settings.TIMERS_STALE_S = 0.0
    answer = client.get("/healthz")
    assert answer.status_code == 503
    check = answer.json()["checks"]["transparency_log"]
    assert check["ok"] is False and "over the maximum merge delay of 10 s" in check["error"]
    transparency.sequence()
    assert client.get("/healthz").json()["checks"]["transparency_log"]["ok"] is True


def test_the_staff_log_page_shows_size_checkpoint_lag_witnesses_and_the_overdue_alarm() -> None:
    from tests.dashboard.conftest import make_staff  # the dashboard's staff users, made here

    make_player(funds=1_000_000)
    done = transparency.sequence()
    make_player(funds=1_000_000)  # two more entries wait for the next pass
    key = Ed25519PrivateKey.generate()
    vkey = note.make_cosigner_vkey("quiet.example", key.public_key().public_bytes_raw())
    LogWitness.objects.create(name="quiet.example", vkey=vkey)
    client = Client()
    client.force_login(make_staff("auditor"))  # type: ignore[arg-type]
    page = client.get("/admin/fairness/logcheckpoint/")
    assert page.status_code == 200
    html = page.content.decode()
    assert f'<td id="log-size">{done.size} leaves</td>' in html
    assert "1 leaves, the oldest for" in html or "2 leaves, the oldest for" in html
    assert "(maximum merge delay 10 s)" in html
    assert f"blackjack.local/log\n{done.size}\n" in html
    assert "No cosignature for over an hour from: quiet.example." in html
    assert client.get("/admin/fairness/logwitness/").status_code == 200
    assert client.get("/admin/fairness/logwitness/add/").status_code == 403  # superusers add them


def test_the_receipt_leaf_is_the_canonical_json_of_its_fields() -> None:
    api = Api(make_player())
    round_id = played_round(api)
    row = LogPending.objects.get(kind="round_receipt", ref=round_id)
    leaf = json.loads(row.data)
    assert set(leaf) == {"kind", "round_id", "receipt", "signature", "key_id"}
    assert row.data == canonical_text(leaf)
