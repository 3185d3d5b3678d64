"""Commands: what a player, the table or the clock asks for. `decide` turns them into events.

Like the events, they are frozen slots dataclasses with `fastdata.fast_init`'s cheaper
`__init__`: the simulator builds an OpenRound every round (and a table every round too)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from casino.engine.events import BeaconSpec, Participant, RoundOptions
from casino.engine.fastdata import fast_init


@fast_init
@dataclass(frozen=True, slots=True)
class OpenRound:
    """Open a round. For `duel` every stake is placed and the cards dealt at once (needs a shoe)."""

    round_id: str
    table_id: str
    ruleset: str
    chain_id: str
    nonce: int
    commitment: str  # sha256 hex the revealed server seed must hash to
    participants: tuple[Participant, ...]  # seat order
    options: RoundOptions
    beacon: BeaconSpec | None = None  # shared tables: the public randomness the deal waits for


@fast_init
@dataclass(frozen=True, slots=True)
class PlaceBet:
    """One amount per betting box (0 = box left empty). The last bet closes betting and deals.

    REBET & DEAL and DOUBLE BET & DEAL are just amounts here (seed 000).
    """

    player_id: str
    amounts: tuple[int, ...]


@fast_init
@dataclass(frozen=True, slots=True)
class TakeInsurance:
    """Insure `box`. amount None = half the bet (the only amount classic/atlantic_city allow)."""

    player_id: str
    box: int = 0
    amount: int | None = None


@fast_init
@dataclass(frozen=True, slots=True)
class DeclineInsurance:
    """Decline insurance or even money on `box`."""

    player_id: str
    box: int = 0


@fast_init
@dataclass(frozen=True, slots=True)
class TakeEvenMoney:
    player_id: str
    box: int = 0


@fast_init
@dataclass(frozen=True, slots=True)
class Hit:
    """Draw a card. With the safety net on, a risky hit needs confirm=True (seed 000)."""

    player_id: str
    confirm: bool = False


@fast_init
@dataclass(frozen=True, slots=True)
class Stand:
    player_id: str


@fast_init
@dataclass(frozen=True, slots=True)
class Double:
    player_id: str


@fast_init
@dataclass(frozen=True, slots=True)
class Split:
    player_id: str


@fast_init
@dataclass(frozen=True, slots=True)
class Timeout:
    """Apply whatever an expired deadline implies (nothing if none expired)."""


@fast_init
@dataclass(frozen=True, slots=True)
class RecordBeacon:
    """Beacon round `round` arrived, with its signature (the service verified it first; every
    verifier checks it again): record it and deal."""

    round: int
    signature: str


@fast_init
@dataclass(frozen=True, slots=True)
class VoidRound:
    """Malfunction voids all pays and plays (seeds 000, 002): refund and reverse everything."""

    reason: str
    evidence: str = ""


@fast_init
@dataclass(frozen=True, slots=True)
class RevealSeed:
    """Record the server seed after the round ended; it must hash to the commitment."""

    server_seed: str


Command: TypeAlias = (
    OpenRound
    | PlaceBet
    | TakeInsurance
    | DeclineInsurance
    | TakeEvenMoney
    | Hit
    | Stand
    | Double
    | Split
    | Timeout
    | RecordBeacon
    | VoidRound
    | RevealSeed
)

# What a seated player sends (every command but the round's own life cycle).
PlayerCommand: TypeAlias = (
    PlaceBet | TakeInsurance | DeclineInsurance | TakeEvenMoney | Hit | Stand | Double | Split
)
