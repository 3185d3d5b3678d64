"""What each viewer may see of a round. Every REST response and WebSocket message about a
round goes through `view`, so a hidden card can leak only through here.

Hidden until revealed: the dealer's hole card (banked) and, in a duel, each player's
second card and hits from everyone but their owner. The server seed appears only once
revealed. `can_see_hole` (staff tools) lifts the card rule; nothing else does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from casino.engine.cards import CARD_POINTS
from casino.engine.events import (
    DealerCardDealt,
    Event,
    PlayerCardDealt,
    beacon_round_time,
    event_to_dict,
)
from casino.engine.evolve import (
    BETTING,
    DUELING,
    INS_EVEN_MONEY_OFFERED,
    INS_OFFERED,
    INSURANCE,
    OPEN,
    PLAYING,
    Hand,
    RoundState,
)
from casino.engine.rules import DUEL, RuleSet
from casino.engine.strategy import DOUBLE, HIT, SPLIT, STAND, Move

ROLES: Final = ("player", "public", "staff", "auditor")
HIDDEN: Final[dict[str, Any]] = {"hidden": True}


@dataclass(frozen=True, slots=True)
class Viewer:
    role: str  # player, public, staff, auditor
    player_id: str | None = None
    can_see_hole: bool = False


def allowed_moves(rules: RuleSet, state: RoundState) -> set[Move]:
    """What the rules let the hand in turn do (the decider checks again): the view's actions,
    the bots' and the simulator's choices."""
    box = state.boxes[state.turn]
    hand = box.hands[state.turn_hand]
    allowed: set[Move] = {HIT, STAND}
    if len(hand.cards) == 2:
        if not hand.split or rules.double_after_split:
            allowed.add(DOUBLE)
        if (
            CARD_POINTS[hand.cards[0]] == CARD_POINTS[hand.cards[1]]
            and len(box.hands) < rules.max_hands
            and not (hand.split_aces and not rules.resplit_aces)
        ):
            allowed.add(SPLIT)
    return allowed


def _cards(hand: Hand, visible: int) -> list[dict[str, Any]]:
    """The first `visible` cards face up, the rest as {"hidden": true}."""
    return [
        {"card": card, "position": pos} if i < visible else dict(HIDDEN)
        for i, (card, pos) in enumerate(zip(hand.cards, hand.positions, strict=True))
    ]


def _hand_view(hand: Hand, visible: int) -> dict[str, Any]:
    everything = visible >= len(hand.cards)
    return {
        "cards": _cards(hand, visible),
        "card_count": len(hand.cards),
        "total": hand.total if everything else None,
        "soft": hand.is_soft if everything else None,
        "stake": hand.stake,
        # Others' status would leak a duel blackjack (it finishes at the deal): hidden too.
        "status": hand.status if everything else None,
        "doubled": hand.doubled,
        "split": hand.split,
    }


def view(state: RoundState, viewer: Viewer) -> dict[str, Any]:
    """A JSON-native dict of the round as `viewer` may see it."""
    if viewer.role not in ROLES:
        raise ValueError(f"unknown viewer role {viewer.role!r}")
    o = state.opened
    duel = state.rules.kind == DUEL
    see_all = viewer.can_see_hole or state.revealed
    boxes = []
    for box in state.boxes:
        own = viewer.role == "player" and viewer.player_id == box.player_id
        hands = []
        for hand in box.hands:
            visible = len(hand.cards) if (not duel or own or see_all) else 1
            hands.append(_hand_view(hand, visible))
        boxes.append(
            {
                "player_id": box.player_id,
                "box": box.box,
                "bet": box.bet,
                "insurance": box.insurance,
                "insurance_status": box.insurance_status,
                "hands": hands,
            }
        )
    out: dict[str, Any] = {
        "round_id": o.round_id,
        "table_id": o.table_id,
        "ruleset": o.ruleset,
        "ruleset_hash": o.ruleset_hash,
        "chain_id": o.chain_id,
        "nonce": o.nonce,
        "commitment": o.commitment,
        "phase": state.phase,
        "participants": [
            {"player_id": p.player_id, "seat": i, "client_seed": p.client_seed}
            for i, p in enumerate(o.participants)
        ],
        "options": {
            "min_bet": o.options.min_bet,
            "max_bet": o.options.max_bet,
            "chip_unit": o.options.chip_unit,
            "stake": o.options.stake,
        },
        "client_material": state.client_material,
        "deadline_ms": state.deadline_ms,
        "boxes": boxes,
        "turn": _turn(state),
        "server_seed": state.server_seed,
        "settlement": event_to_dict(state.settlement) if state.settlement else None,
        "voided": event_to_dict(state.voided) if state.voided else None,
        "actions": actions(state, viewer.player_id) if viewer.role == "player" else [],
    }
    if o.beacon is not None:  # a shared table: the public randomness the deal waits for
        out["beacon"] = {
            "name": o.beacon.name,
            "public_key": o.beacon.public_key,
            "round": state.beacon_round or None,  # None until betting closes
            "round_time": beacon_round_time(o.beacon, state.beacon_round)
            if state.beacon_round
            else None,
        }
    if viewer.role == "player" and viewer.player_id is not None:
        for p in o.participants:
            if p.player_id == viewer.player_id:
                out["my_options"] = {
                    "offer_insurance": p.offer_insurance,
                    "safety_net": p.safety_net,
                }
    if not duel:
        hole = state.rules.hole_card_index
        dealer = state.dealer
        cards = [
            {"card": card, "position": pos} if (i != hole or see_all) else dict(HIDDEN)
            for i, (card, pos) in enumerate(zip(dealer.cards, dealer.positions, strict=True))
        ]
        everything = see_all or len(dealer.cards) <= hole
        out["dealer"] = {
            "cards": cards,
            "total": dealer.total if everything else None,
            "blackjack": state.dealer_blackjack if state.phase != "insurance" else None,
        }
    return out


# The order `actions` lists them in (the WebSocket command names).
ACTIONS: Final = ("deal", "insurance", "even_money", HIT, STAND, DOUBLE, SPLIT)


def actions(state: RoundState, player_id: str | None) -> list[str]:
    """The commands `player_id` may send now, by the rules the decider applies (a deadline
    that has passed is not known here: the next command applies it first)."""
    if player_id is None or state.finished:
        return []
    if not any(p.player_id == player_id for p in state.opened.participants):
        return []
    phase = state.phase
    own = [box for box in state.boxes if box.player_id == player_id]
    if phase == BETTING:
        return ["deal"] if state.rules.kind != DUEL and not own else []
    if phase == INSURANCE:
        offers = {box.insurance_status for box in own}
        return [
            name
            for name, offer in (("insurance", INS_OFFERED), ("even_money", INS_EVEN_MONEY_OFFERED))
            if offer in offers
        ]
    if phase == DUELING:
        open_hand = any(box.hands and box.hands[0].status == OPEN for box in own)
        return [HIT, STAND] if open_hand else []
    if phase == PLAYING and state.turn >= 0 and state.boxes[state.turn].player_id == player_id:
        allowed = allowed_moves(state.rules, state)
        if state.boxes[state.turn].hands[state.turn_hand].split_aces:
            allowed.discard(HIT)  # split aces take one card each
        return [name for name in ACTIONS if name in allowed]
    return []


def _turn(state: RoundState) -> dict[str, Any] | None:
    if state.turn < 0:
        return None
    box = state.boxes[state.turn]
    return {"player_id": box.player_id, "box": box.box, "hand": state.turn_hand}


def event_for_viewer(event: Event, viewer: Viewer) -> dict[str, Any]:
    """The event as `viewer` may see it when it happens (for WebSocket pushes).

    A face-down dealer card, and a duel card hidden from everyone but its owner, go out with
    "card": None; HoleCardRevealed / CardsRevealed later carry the cards themselves.
    """
    data = event_to_dict(event)
    if viewer.can_see_hole:
        return data
    owner = viewer.role == "player" and viewer.player_id == data.get("player_id")
    hole = isinstance(event, DealerCardDealt) and event.hole
    if hole or (isinstance(event, PlayerCardDealt) and event.hidden and not owner):
        data["card"] = None
    return data
