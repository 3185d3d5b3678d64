"""Events: past-tense facts, frozen data. Money is int micro-USDC; times are epoch ms.

Every card event carries the card and its shoe position; the k-th card dealt in event
order is shoe position k. `event_to_dict` / `event_from_dict` give JSON-native dicts
(ints, strs, bools, lists, dicts, None) that include "type".
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Final, TypeAlias

from casino.engine.fastdata import fast_init, interned


@fast_init
@dataclass(frozen=True, slots=True)
class Participant:
    """A seat in the round, in seat order. Options are the player's own settings."""

    player_id: str
    client_seed: str
    offer_insurance: bool = True  # seed 000 option "Offer Insurance"
    safety_net: bool = False  # seed 000 option "Safety Net"


def client_material(participants: tuple[Participant, ...]) -> str:
    """fairness-v1 section 2: the participants' client seeds in seat order, joined by "|"."""
    seeds = []  # a plain loop: a generator (or a list comprehension) is a function call more
    for p in participants:
        seeds.append(p.client_seed)
    return "|".join(seeds)


@fast_init
@dataclass(frozen=True, slots=True)
class RoundOptions:
    """The table's money settings for this round (limits are per betting field)."""

    min_bet: int
    max_bet: int
    chip_unit: int = 10_000
    stake: int = 0  # duel only: the fixed stake every player bets


@fast_init
@dataclass(frozen=True, slots=True)
class BeaconSpec:
    """A shared table's public randomness (fairness-v2): which beacon, and when to read it.

    At the lock (BettingClosed) of a round with two or more seats, the round waits for beacon
    round R, the first whose time comes after the lock plus `margin_s`; the shoe's client
    material gets the element "<name>:<R>:<randomness hex>". The round is voided when R is not
    recorded by its time plus `wait_s`."""

    name: str  # the material element's prefix: "drand-quicknet", "local-beacon"
    chain_hash: str  # drand's chain hash of the beacon (hex)
    public_key: str  # hex of the beacon's 96-byte compressed G2 key
    genesis_time: int  # Unix seconds of round 1
    period: int  # seconds between rounds
    margin_s: int  # R's time is strictly after lock + margin_s
    wait_s: int  # the round voids when R is not recorded by R's time + wait_s


def beacon_round_after(spec: BeaconSpec, lock_ms: int) -> int:
    """Beacon round R for a lock at `lock_ms`: the first round whose time (genesis + (R - 1) *
    period) is strictly after floor(lock_ms / 1000) + margin_s
    (fairness.beacon.first_round_after)."""
    t = lock_ms // 1000 + spec.margin_s
    if t < spec.genesis_time:
        return 1
    return (t - spec.genesis_time) // spec.period + 2


def beacon_round_time(spec: BeaconSpec, round: int) -> int:
    """Unix seconds at which beacon round `round` is published."""
    return spec.genesis_time + (round - 1) * spec.period


def beacon_material(client_material: str, spec: BeaconSpec, round: int, randomness: str) -> str:
    """The shoe's client material of a beacon round: the seats' seeds in seat order, then
    "<name>:<R>:<randomness hex>" (no client seed holds ':', so the parts stay apart)."""
    return f"{client_material}|{spec.name}:{round}:{randomness}"


@fast_init
@dataclass(frozen=True, slots=True)
class HandResult:
    player_id: str
    box: int
    hand: int
    outcome: str  # win, lose, push, blackjack, bust, even_money (duel: win, lose)
    stake: int
    gross_return: int  # everything handed back for this hand, stake included
    total: int  # the hand's final value (22+ means bust)


@fast_init
@dataclass(frozen=True, slots=True)
class InsuranceResult:
    player_id: str
    box: int
    stake: int
    gross_return: int


@fast_init
@dataclass(frozen=True, slots=True)
class PlayerAmount:
    player_id: str
    amount: int


@fast_init
@dataclass(frozen=True, slots=True)
class RevealedCard:
    player_id: str
    position: int
    card: str


@fast_init
@dataclass(frozen=True, slots=True)
class RoundOpened:
    type: ClassVar[str] = "RoundOpened"
    round_id: str
    table_id: str
    ruleset: str
    ruleset_hash: str
    chain_id: str
    nonce: int
    commitment: str
    participants: tuple[Participant, ...]
    options: RoundOptions
    opened_at_ms: int
    betting_deadline_ms: int
    beacon: BeaconSpec | None = None  # shared tables only; left out of the JSON when None


@fast_init
@dataclass(frozen=True, slots=True)
class BetPlaced:
    type: ClassVar[str] = "BetPlaced"
    player_id: str
    box: int
    amount: int


@fast_init
@dataclass(frozen=True, slots=True)
class BettingClosed:
    type: ClassVar[str] = "BettingClosed"
    client_material: str  # participants' client seeds in seat order joined by "|"
    closed_at_ms: int


@fast_init
@dataclass(frozen=True, slots=True)
class BeaconAwaited:
    """Betting closed at a shared table: the deal waits for beacon round `round`."""

    type: ClassVar[str] = "BeaconAwaited"
    round: int
    round_time: int  # Unix seconds at which the beacon publishes it
    deadline_ms: int  # (round_time + wait_s) * 1000: the round voids if it is not recorded


@fast_init
@dataclass(frozen=True, slots=True)
class BeaconRecorded:
    """Beacon round `round` as published (its signature) and the shoe's material with it."""

    type: ClassVar[str] = "BeaconRecorded"
    round: int
    signature: str  # hex of the 48-byte BLS signature on G1
    randomness: str  # hex SHA-256 of the signature
    client_material: str  # the seats' client seeds, then "<beacon>:<round>:<randomness>"
    recorded_at_ms: int


@fast_init
@dataclass(frozen=True, slots=True)
class PlayerCardDealt:
    type: ClassVar[str] = "PlayerCardDealt"
    position: int
    card: str
    player_id: str
    box: int
    hand: int
    hidden: bool  # duel: not shown to other players until CardsRevealed


@fast_init
@dataclass(frozen=True, slots=True)
class DealerCardDealt:
    type: ClassVar[str] = "DealerCardDealt"
    position: int
    card: str
    hole: bool  # face down until HoleCardRevealed


@fast_init
@dataclass(frozen=True, slots=True)
class InsuranceOffered:
    type: ClassVar[str] = "InsuranceOffered"
    deadline_ms: int


@fast_init
@dataclass(frozen=True, slots=True)
class InsuranceTaken:
    type: ClassVar[str] = "InsuranceTaken"
    player_id: str
    box: int
    amount: int


@fast_init
@dataclass(frozen=True, slots=True)
class InsuranceDeclined:
    type: ClassVar[str] = "InsuranceDeclined"
    player_id: str
    box: int
    auto: bool  # True when the deadline passed without an answer


@fast_init
@dataclass(frozen=True, slots=True)
class EvenMoneyTaken:
    type: ClassVar[str] = "EvenMoneyTaken"
    player_id: str
    box: int


@fast_init
@dataclass(frozen=True, slots=True)
class DealerPeeked:
    type: ClassVar[str] = "DealerPeeked"
    blackjack: bool


@fast_init
@dataclass(frozen=True, slots=True)
class HoleCardRevealed:
    type: ClassVar[str] = "HoleCardRevealed"
    position: int
    card: str


@fast_init
@dataclass(frozen=True, slots=True)
class TurnStarted:
    type: ClassVar[str] = "TurnStarted"
    player_id: str
    box: int
    hand: int
    deadline_ms: int


@fast_init
@dataclass(frozen=True, slots=True)
class PlayerStood:
    type: ClassVar[str] = "PlayerStood"
    player_id: str
    box: int
    hand: int
    auto: bool  # True when a deadline stood the hand


@fast_init
@dataclass(frozen=True, slots=True)
class HandDoubled:
    type: ClassVar[str] = "HandDoubled"
    player_id: str
    box: int
    hand: int
    amount: int  # the extra stake


@fast_init
@dataclass(frozen=True, slots=True)
class HandSplit:
    type: ClassVar[str] = "HandSplit"
    player_id: str
    box: int
    hand: int  # the new hand is hand + 1; later hands shift up by one
    amount: int  # the extra stake


@fast_init
@dataclass(frozen=True, slots=True)
class DuelTimerStarted:
    type: ClassVar[str] = "DuelTimerStarted"
    deadline_ms: int


@fast_init
@dataclass(frozen=True, slots=True)
class CardsRevealed:
    type: ClassVar[str] = "CardsRevealed"
    cards: tuple[RevealedCard, ...]  # every card that was hidden, in shoe order


@fast_init
@dataclass(frozen=True, slots=True)
class RoundSettled:
    type: ClassVar[str] = "RoundSettled"
    hands: tuple[HandResult, ...]
    insurance: tuple[InsuranceResult, ...]
    fee: int
    dealer_total: int  # 0 for duel
    settled_at_ms: int


@fast_init
@dataclass(frozen=True, slots=True)
class RoundVoided:
    type: ClassVar[str] = "RoundVoided"
    reason: str
    evidence: str
    refunds: tuple[PlayerAmount, ...]  # every stake handed back, per player
    reversed_payouts: tuple[PlayerAmount, ...]  # gross returns taken back (voided after settle)
    reversed_fee: int
    was_settled: bool  # the void came after RoundSettled: the settlement is reversed too
    voided_at_ms: int


@fast_init
@dataclass(frozen=True, slots=True)
class ServerSeedRevealed:
    type: ClassVar[str] = "ServerSeedRevealed"
    server_seed: str


Event: TypeAlias = (
    RoundOpened
    | BetPlaced
    | BettingClosed
    | BeaconAwaited
    | BeaconRecorded
    | PlayerCardDealt
    | DealerCardDealt
    | InsuranceOffered
    | InsuranceTaken
    | InsuranceDeclined
    | EvenMoneyTaken
    | DealerPeeked
    | HoleCardRevealed
    | TurnStarted
    | PlayerStood
    | HandDoubled
    | HandSplit
    | DuelTimerStarted
    | CardsRevealed
    | RoundSettled
    | RoundVoided
    | ServerSeedRevealed
)

# The hot paths' constructors (fastdata.interned): each gives what calling the class gives, an
# equal instance built earlier when there is one (events and results are immutable values).
new_bet_placed: Final = interned(BetPlaced)
new_betting_closed: Final = interned(BettingClosed)
new_player_card: Final = interned(PlayerCardDealt)
new_dealer_card: Final = interned(DealerCardDealt)
new_dealer_peeked: Final = interned(DealerPeeked)
new_hole_card_revealed: Final = interned(HoleCardRevealed)
new_turn_started: Final = interned(TurnStarted)
new_player_stood: Final = interned(PlayerStood)
new_duel_timer_started: Final = interned(DuelTimerStarted)
new_revealed_card: Final = interned(RevealedCard)
new_hand_result: Final = interned(HandResult)

# Each class above and its interned constructor (the same positional fields): a decoder that
# builds events through these hands back the very instance the decider builds for the same
# values, so comparing a recorded event with the derived one finds them identical at once.
INTERNED: Final[dict[type[Any], Callable[..., Any]]] = {
    BetPlaced: new_bet_placed,
    BettingClosed: new_betting_closed,
    PlayerCardDealt: new_player_card,
    DealerCardDealt: new_dealer_card,
    DealerPeeked: new_dealer_peeked,
    HoleCardRevealed: new_hole_card_revealed,
    TurnStarted: new_turn_started,
    PlayerStood: new_player_stood,
    DuelTimerStarted: new_duel_timer_started,
    RevealedCard: new_revealed_card,
    HandResult: new_hand_result,
}

EVENT_TYPES: Final[dict[str, type[Any]]] = {cls.type: cls for cls in typing.get_args(Event)}

_NESTED: Final[tuple[type[Any], ...]] = (
    Participant,
    RoundOptions,
    BeaconSpec,
    HandResult,
    InsuranceResult,
    PlayerAmount,
    RevealedCard,
)


def _field_kinds(cls: type[Any]) -> dict[str, tuple[str, type[Any] | None]]:
    """Per field: ("plain"|"one"|"many", nested class) from the type hints."""
    hints = typing.get_type_hints(cls)
    kinds: dict[str, tuple[str, type[Any] | None]] = {}
    for f in dataclasses.fields(cls):
        hint = hints[f.name]
        optional = [a for a in typing.get_args(hint) if a in _NESTED]
        if typing.get_origin(hint) in (typing.Union, types.UnionType) and optional:
            kinds[f.name] = ("maybe", optional[0])  # None is left out of the JSON
        elif hint in _NESTED:
            kinds[f.name] = ("one", hint)
        elif typing.get_origin(hint) is tuple:
            args = typing.get_args(hint)
            inner = args[0] if args else None
            kinds[f.name] = ("many", inner if inner in _NESTED else None)
        else:
            kinds[f.name] = ("plain", None)
    return kinds


_KINDS: Final[dict[type[Any], dict[str, tuple[str, type[Any] | None]]]] = {
    cls: _field_kinds(cls) for cls in (*EVENT_TYPES.values(), *_NESTED)
}


def _to_json(obj: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, (kind, nested) in _KINDS[type(obj)].items():
        value = getattr(obj, name)
        if kind == "one":
            out[name] = _to_json(value)
        elif kind == "maybe":
            if value is not None:
                out[name] = _to_json(value)
        elif kind == "many":
            out[name] = [_to_json(v) if nested else v for v in value]
        else:
            out[name] = value
    return out


def _from_json(cls: type[Any], data: dict[str, Any]) -> Any:
    kwargs: dict[str, Any] = {}
    for name, (kind, nested) in _KINDS[cls].items():
        if kind == "maybe":
            value = data.get(name)
            kwargs[name] = None if value is None else _from_json(nested, value)  # type: ignore[arg-type]
            continue
        value = data[name]
        if kind == "one" and nested is not None:
            kwargs[name] = _from_json(nested, value)
        elif kind == "many":
            kwargs[name] = tuple(_from_json(nested, v) if nested else v for v in value)
        else:
            kwargs[name] = value
    return cls(**kwargs)


def event_to_dict(event: Event) -> dict[str, Any]:
    """JSON-native dict of an event, with its "type"."""
    out = _to_json(event)
    out["type"] = event.type
    return out


def event_from_dict(data: dict[str, Any]) -> Event:
    """The event a dict from `event_to_dict` describes (unknown "type" -> KeyError)."""
    cls = EVENT_TYPES[data["type"]]
    event: Event = _from_json(cls, data)
    return event
