"""Write tests/fairness/vectors.json: `python -m tests.fairness.gen_vectors`.

The vectors are the spec's known answers; both the Python and the JavaScript tests check them,
and docs/fairness.md prints them. Regenerate only if the spec changes (it must not).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from fairness.canonical import GENESIS, canonical_json, event_hash
from fairness.chain import create_chain
from fairness.receipt import key_id, private_key_from_hex, public_key_bytes, sign_receipt
from fairness.shoe import RandomStream, shoe_cards

PATH = Path(__file__).with_name("vectors.json")
HEAD = hashlib.sha256(b"fairness-v1 test vectors").hexdigest()
REJECTION_SEED = hashlib.sha256(b"rejection-search").hexdigest()


def shoe_vector(name: str, server_seed: str, material: str, nonce: int) -> dict[str, Any]:
    block0 = RandomStream(server_seed, material, nonce).blocks(1)
    cards = shoe_cards(server_seed, material, nonce)
    return {
        "name": name,
        "server_seed": server_seed,
        "client_material": material,
        "nonce": nonce,
        "block0_message": f"{material}:{nonce}:0",
        "block0_hex": block0.hex(),
        "first_words": [int.from_bytes(block0[i : i + 4], "big") for i in range(0, 32, 4)],
        "first_20": cards[:20],
        "shoe": cards,
    }


def build() -> dict[str, Any]:
    chain = create_chain(10, head=HEAD)
    big = create_chain(1, head=hashlib.sha256(b"large nonce").hexdigest())
    shoes = [
        shoe_vector("one participant, nonce 1", chain.seed(1), "alice", 1),
        shoe_vector("three participants in seat order", chain.seed(2), "alice|Bob_2|c.d-e", 2),
        shoe_vector("one participant, nonce 10", chain.seed(10), "player.one", 10),
        shoe_vector("large nonce", big.head, "alice|bob", 999_999),
        shoe_vector("longest client seed", chain.seed(5), "A-z_0.9" * 9 + "x", 5),
        # Block 0 word 7 is rejected by uniform(409) at step 7: the stream moves to word 8.
        shoe_vector("rejection sampling", REJECTION_SEED, "reject", 227_731),
    ]
    key = private_key_from_hex(hashlib.sha256(b"fairness-v1 test signing key").hexdigest())
    public = public_key_bytes(key)
    receipt = {"round_id": "r1", "nonce": 1, "cards": [{"position": 0, "card": "KD"}], "é": "ü"}
    body = {
        "stream": "round-r1", "version": 1, "type": "BettingClosed", "schema_version": 1,
        "data": {"client_material": "alice|bob", "closed_at_ms": 0},
        "recorded_at": "2026-01-01T00:00:00.000001Z",
    }  # fmt: skip
    return {
        "spec": "fairness-v1",
        "chain": {
            "head": HEAD,
            "length": 10,
            "seeds": [chain.seed(k) for k in range(10, -1, -1)],
            "terminal": chain.terminal,
        },
        "shoes": shoes,
        "event_hash": {
            "prev_hash": GENESIS,
            "body": body,
            "canonical": canonical_json(body).decode(),
            "hash": event_hash(GENESIS, body),
        },
        "receipt": {
            "private_key": hashlib.sha256(b"fairness-v1 test signing key").hexdigest(),
            "public_key": public.hex(),
            "key_id": key_id(public),
            "receipt": receipt,
            "canonical": canonical_json(receipt).decode(),
            "signature": sign_receipt(receipt, key),
        },
    }


if __name__ == "__main__":
    PATH.write_text(json.dumps(build(), indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {PATH}")
