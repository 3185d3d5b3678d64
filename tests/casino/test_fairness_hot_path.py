"""Seeds handed out from cached chain segments are the chain's own; a proof's stored texts are
the canonical JSON of what they hold."""

from __future__ import annotations

import pytest

from fairness import services
from fairness.chain import create_chain
from fairness.seedcrypto import decrypt_secret

pytestmark = pytest.mark.django_db


def test_every_seed_of_a_chain_is_its_seed_at_that_position() -> None:
    row = services.chain_create(table_id="segments", length=250)  # not a multiple of 100
    chain = create_chain(row.length, head=decrypt_secret(row.head_encrypted))
    assert chain.terminal == row.terminal
    for k in reversed(range(row.length + 1)):  # each segment cached by its first lookup
        assert services._seed_of(row, k) == chain.seed(k), k
    for k in range(row.length + 1):  # and served from the cache
        assert services._seed_of(row, k) == chain.seed(k), k


def test_a_proofs_bundle_line_is_the_canonical_json_of_the_line() -> None:
    import json

    from casino.tables.play import play
    from fairness.canonical import canonical_json
    from fairness.models import RoundProof

    play(ruleset="classic", rounds=2)
    proofs = list(RoundProof.objects.all())
    assert proofs
    for proof in proofs:
        line = json.loads(proof.bundle_line)
        assert set(line) == {"format", "receipt", "signature", "key_id", "public_key", "events"}
        assert proof.bundle_line == canonical_json(line).decode("utf-8")
        assert proof.receipt_canonical == canonical_json(line["receipt"]).decode("utf-8")
        assert line["receipt"] == proof.receipt and line["signature"] == proof.signature
