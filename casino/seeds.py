"""The round service's side of provable fairness: seeds in, shoe out, receipt at the end.

Everything secret stays in `fairness` (encrypted chain heads); this module only asks it for
the next commitment, the seed of a round that is being dealt, the reveal at the end, and the
signed receipt.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from casino.engine.commands import OpenRound
from casino.engine.state import RoundState
from casino.eventstore.models import StoredEvent
from fairness import services as fairness_services
from fairness.shoe import FairShoe


@dataclass(frozen=True, slots=True)
class IssuedSeed:
    chain_id: str
    nonce: int
    commitment: str


def seed_issue(*, table_id: str) -> IssuedSeed:
    """The next seed position of the table's chain (its commitment is already public)."""
    issued = fairness_services.seed_issue(table_id=table_id)
    return IssuedSeed(
        chain_id=str(issued.chain_id), nonce=issued.nonce, commitment=issued.commitment
    )


def client_seed_of(user: AbstractBaseUser) -> str:
    return fairness_services.client_seed_get(user=user)


def _shoe(chain_id: str, nonce: int, client_material: str) -> FairShoe:
    server_seed = fairness_services.server_seed_for(chain_id=chain_id, nonce=nonce)
    return FairShoe(server_seed, client_material, nonce)


def shoe_for_open(command: OpenRound) -> FairShoe:
    material = "|".join(p.client_seed for p in command.participants)
    return _shoe(command.chain_id, command.nonce, material)


def shoe_for(state: RoundState) -> FairShoe | None:
    """The round's shoe while it can still deal (None once finished: no secret is touched)."""
    if state.finished:
        return None
    material = "|".join(p.client_seed for p in state.opened.participants)
    return _shoe(state.opened.chain_id, state.opened.nonce, material)


def seed_reveal(*, chain_id: str, nonce: int) -> str:
    """Reveal the server seed of a finished round (settled or voided)."""
    return fairness_services.seed_reveal(chain_id=chain_id, nonce=nonce)


def receipt_store(*, round_id: str, stored: Sequence[StoredEvent]) -> None:
    """Sign the finished round's receipt and keep its public proof."""
    fairness_services.round_proof_create(round_id=round_id, events=bundle_events(stored))


def bundle_events(stored: Sequence[StoredEvent]) -> list[dict[str, Any]]:
    """Events as a verifier reads them: the hashed body exactly as stored, plus its hash."""
    return [{**e.stored_body(), "hash": e.hash} for e in stored]
