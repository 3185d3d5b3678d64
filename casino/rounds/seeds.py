"""The round service's side of provable fairness: seeds in, shoe out, receipt at the end.

Everything secret stays in `fairness` (encrypted chain heads); this module only asks it for
the next commitment, the seed of a round that is being dealt, the reveal at the end, and the
signed receipt.

Each command of a round in play deals from the same server seed. The shoe is lazy (a command
that deals no card reads nothing), and the seed handed out by `seed_issue` or read once for
dealing is kept in process memory under (chain, nonce, commitment) until the round reveals
it, so the commands after the first do not read the seed chain again. The commitment in the
key is SHA-256 of the seed: a kept seed can only ever be used for the round that committed
to it (the process already holds the decrypted chain checkpoints, see
`fairness.services._checkpoints`, so this keeps no secret it could not derive anyway).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from casino.engine.commands import OpenRound, RecordBeacon
from casino.engine.events import RoundOpened, beacon_material
from casino.engine.evolve import RoundState
from casino.eventstore.models import StoredEvent
from fairness import services as fairness_services
from fairness import transparency
from fairness.shoe import FairShoe


@dataclass(frozen=True, slots=True)
class IssuedSeed:
    chain_id: str
    nonce: int
    commitment: str


SEEDS_KEPT = 4096  # rounds in play per process whose seed is kept (least recently used out)
_kept: OrderedDict[tuple[str, int, str], str] = OrderedDict()
_kept_lock = threading.Lock()


def _keep(chain_id: str, nonce: int, commitment: str, server_seed: str) -> None:
    with _kept_lock:
        _kept[(chain_id, nonce, commitment)] = server_seed
        _kept.move_to_end((chain_id, nonce, commitment))
        while len(_kept) > SEEDS_KEPT:
            _kept.popitem(last=False)


def _kept_seed(chain_id: str, nonce: int, commitment: str) -> str | None:
    with _kept_lock:
        return _kept.get((chain_id, nonce, commitment))


def _forget(chain_id: str, nonce: int) -> None:
    with _kept_lock:
        for key in [k for k in _kept if k[0] == chain_id and k[1] == nonce]:
            del _kept[key]


def seed_issue(*, table_id: str) -> IssuedSeed:
    """The next seed position of the table's chain (its commitment is already public)."""
    issued = fairness_services.seed_issue(table_id=table_id)
    chain_id = str(issued.chain_id)
    _keep(chain_id, issued.nonce, issued.commitment, issued.server_seed)
    return IssuedSeed(chain_id=chain_id, nonce=issued.nonce, commitment=issued.commitment)


def client_seed_of(user: AbstractBaseUser | int) -> str:
    return fairness_services.client_seed_get(user=user)


class LazyShoe:
    """The round's fair shoe, built on the first card asked for.

    A command that deals no card (a bet that does not close betting, a stand that settles
    nothing, opening a classic round) then never reads the seed chain at all.
    """

    __slots__ = ("_chain_id", "_client_material", "_commitment", "_nonce", "_shoe")

    def __init__(self, chain_id: str, nonce: int, commitment: str, client_material: str) -> None:
        self._chain_id, self._nonce, self._commitment = chain_id, nonce, commitment
        self._client_material = client_material
        self._shoe: FairShoe | None = None

    def card_at(self, position: int) -> str:
        if self._shoe is None:
            server_seed = _kept_seed(self._chain_id, self._nonce, self._commitment)
            if server_seed is None:
                server_seed = fairness_services.server_seed_for(
                    chain_id=self._chain_id, nonce=self._nonce
                )
                _keep(self._chain_id, self._nonce, self._commitment, server_seed)
            self._shoe = FairShoe(server_seed, self._client_material, self._nonce)
        return self._shoe.card_at(position)


def shoe_for_open(command: OpenRound) -> LazyShoe:
    material = "|".join(p.client_seed for p in command.participants)
    return LazyShoe(command.chain_id, command.nonce, command.commitment, material)


def shoe_for(state: RoundState) -> LazyShoe | None:
    """The round's shoe while it can still deal (None once finished: no secret is touched):
    from the material betting locked (with a beacon round's element once it is recorded),
    or, before the lock, the seats' client seeds."""
    if state.finished:
        return None
    material = state.client_material or "|".join(p.client_seed for p in state.opened.participants)
    o = state.opened
    return LazyShoe(o.chain_id, o.nonce, o.commitment, material)


def shoe_for_beacon(state: RoundState, command: RecordBeacon) -> LazyShoe | None:
    """The shoe of the deal that recording beacon round `command.round` makes: the locked
    material with the beacon's element, as the decider writes it into BeaconRecorded (the
    plain shoe when the command cannot be recorded: the decider refuses it)."""
    o = state.opened
    if o.beacon is None or state.finished:
        return shoe_for(state)
    try:
        signature = bytes.fromhex(command.signature)
    except (TypeError, ValueError):
        return shoe_for(state)
    randomness = hashlib.sha256(signature).hexdigest()
    material = beacon_material(state.client_material, o.beacon, command.round, randomness)
    return LazyShoe(o.chain_id, o.nonce, o.commitment, material)


def seed_reveal(*, chain_id: str, nonce: int) -> str:
    """Reveal the server seed of a finished round (settled or voided)."""
    _forget(chain_id, nonce)  # the round deals no more cards
    return fairness_services.seed_reveal(chain_id=chain_id, nonce=nonce)


def opened_log(*, round_id: str, opened: RoundOpened, event: StoredEvent) -> None:
    """Queue the round's `round_opened` leaf of the transparency log (in the open's
    transaction): which chain position and commitment the round took, and when."""
    transparency.queue_leaf(
        "round_opened",
        round_id,
        {
            "round_id": round_id,
            "table_id": opened.table_id,
            "chain_id": opened.chain_id,
            "nonce": opened.nonce,
            "commitment": opened.commitment,
            "opened_at": event.recorded_at_text,
        },
    )


def receipt_store(*, round_id: str, stored: Sequence[StoredEvent], first: bool = False) -> None:
    """Sign the finished round's receipt and keep its public proof (`first`: the seed reveal
    was just appended, so there is no proof yet to replace)."""
    fairness_services.round_proof_create(
        round_id=round_id, events=bundle_events(stored), first=first
    )


def bundle_events(stored: Sequence[StoredEvent]) -> list[dict[str, Any]]:
    """Events as a verifier reads them: the hashed body exactly as stored, plus its hash."""
    return [{**e.stored_body(), "hash": e.hash} for e in stored]
