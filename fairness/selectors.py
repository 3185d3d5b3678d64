"""Reads of the fairness app: published keys and round proofs."""

from __future__ import annotations

from typing import Any

from django.conf import settings

from casino.eventstore.models import StoredEvent, format_recorded_at
from casino.platform.errors import ApplicationError, ConflictError
from fairness.models import RoundProof, SeedChain, SigningKey
from fairness.receipt import key_id, private_key_from_hex, public_key_bytes


def signing_keys() -> list[dict[str, Any]]:
    """Every public key that ever signed a receipt, plus the current one, oldest first."""
    current = public_key_bytes(private_key_from_hex(settings.RECEIPT_SIGNING_KEY))
    current_id = key_id(current)
    keys = [
        {"key_id": k.key_id, "public_key": k.public_key, "created_at": k.created_at}
        for k in SigningKey.objects.all()
    ]
    if all(k["key_id"] != current_id for k in keys):
        keys.append({"key_id": current_id, "public_key": current.hex(), "created_at": None})
    for key in keys:
        key["algorithm"] = "Ed25519"
        key["current"] = key["key_id"] == current_id
    return keys


def round_proof_get(*, round_id: str) -> RoundProof:
    """The public proof of an ended round; 409 while it is in play, 404 if unknown."""
    proof = RoundProof.objects.filter(round_id=round_id).first()
    if proof is not None:
        return proof

    opened = StoredEvent.objects.filter(stream_id=round_id, version=1).first()
    if opened is None or opened.type != "RoundOpened":
        raise ApplicationError(
            f"No round {round_id} exists.", code="unknown_round", status_code=404
        )
    data = opened.data
    raise ConflictError(
        "The round has not ended: its proof is published with the seed when it ends.",
        code="proof_not_ready",
        extra={  # public facts only: the commitment was shown before the round opened
            "round_id": round_id,
            "chain_id": data.get("chain_id"),
            "nonce": data.get("nonce"),
            "commitment": data.get("commitment"),
        },
    )


def seed_chain_get(*, chain_id: str) -> dict[str, Any]:
    """A seed chain's public facts, for every chain ever made (used, in use or prepared): 404
    unknown_chain if there is none. `created_at` is written as a bundle's chain line writes it
    (YYYY-MM-DDTHH:MM:SS.ffffffZ)."""

    number = chain_id.isascii() and chain_id.isdigit() and len(chain_id) <= 18  # fits a bigint
    chain = SeedChain.objects.filter(pk=int(chain_id)).first() if number else None
    if chain is None:
        raise ApplicationError(
            f"No seed chain {chain_id} exists.",
            code="unknown_chain",
            status_code=404,
            extra={"chain_id": chain_id},
        )
    return {
        "chain_id": str(chain.pk),
        "table_id": chain.table_id,
        "terminal": chain.terminal,
        "length": chain.length,
        "created_at": format_recorded_at(chain.created_at),
        "status": chain.status,
    }
