"""Real rounds with random choices, and the rewrites a dishonest operator could make of them.

`play_round` plays one round of any rule set through the rule engine (`step`, the code the
round service runs) with random players' choices and random think times, on the fair shoe,
applying expiry first as the service does (so timeouts happen). `forge` turns any list of
engine events into a bundle line as an operator holding the signing key would: the cards
re-dealt from the true shoe in event order (so every card check passes), the settlement
recomputed by the engine's own settlement code from the forged state, the hash chain
recomputed and the receipt rebuilt and re-signed. Only the proof of play can then tell.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from casino.engine import commands as c
from casino.engine.audit import reenact_states
from casino.engine.decider import evolve, settle, step
from casino.engine.errors import DomainError
from casino.engine.events import (
    DealerCardDealt,
    Event,
    HoleCardRevealed,
    Participant,
    PlayerCardDealt,
    PlayerStood,
    RoundOptions,
    RoundSettled,
    event_to_dict,
)
from casino.engine.rules import RULESETS
from fairness.chain import create_chain
from fairness.receipt import private_key_from_hex, receipt_from_events
from fairness.sample import NOW_MS, bundle_line, stored_events
from fairness.shoe import FairShoe

KEY = private_key_from_hex(hashlib.sha256(b"rewrites test key").hexdigest())
CHAIN = create_chain(64, head=hashlib.sha256(b"rewrites chain head").hexdigest())  # reproducible
RULESET_NAMES = ("classic", "atlantic_city", "duel", "duel_classic")
SEATS = {"classic": 1, "atlantic_city": 1, "duel": 2, "duel_classic": 3}
MIN, MAX, STAKE = 1_000_000, 100_000_000, 10_000_000


def _choices(state: Any) -> list[c.Command]:
    """Every command some seated player could send now (the rules refuse the wrong ones)."""
    if state.phase == "betting":
        return []
    out: list[c.Command] = []
    for box in state.boxes:
        p = box.player_id
        out += [c.Hit(p, True), c.Stand(p), c.Double(p), c.Split(p)]
        out += [c.TakeInsurance(p, box.box), c.DeclineInsurance(p, box.box)]
        out += [c.TakeEvenMoney(p, box.box)]
    return out


def play_round(
    ruleset: str,
    nonce: int,
    pick: Callable[[int], int],
    *,
    players: int | None = None,
    void_at: int | None = None,
    tag: str = "",
) -> tuple[list[Event], FairShoe]:
    """One round on the chain's seed `nonce`; `pick(n)` chooses 0..n-1 (random choices and
    think times). `void_at`: staff void the round at that decision (None: never; -1: after
    it settled). `tag` goes into the client seeds (another shoe for the same nonce)."""
    seats = players or SEATS[ruleset]
    client_seeds = [f"seed-{nonce}-{i}{tag}" for i in range(seats)]
    shoe = FairShoe(CHAIN.seed(nonce), "|".join(client_seeds), nonce)
    names = [f"p{i + 1}" for i in range(seats)]
    rules = RULESETS[ruleset]
    opening = c.OpenRound(
        f"r{nonce}", "table-1", ruleset, "chain-1", nonce, CHAIN.seed(nonce - 1),
        tuple(Participant(n, s, offer_insurance=bool(pick(2))) for n, s in zip(
            names, client_seeds, strict=True)),
        RoundOptions(MIN, MAX, stake=STAKE if rules.kind == "duel" else 0),
    )  # fmt: skip
    now = NOW_MS
    events, state = step(None, opening, now, shoe)
    decisions = 0
    for name in names:
        if state.phase != "betting":
            break
        now += pick(3) * 1_000
        boxes = 1 + pick(rules.max_boxes)
        amounts = tuple(MIN * (1 + pick(5)) * (pick(4) != 0 or b == 0) for b in range(boxes))
        if pick(6) == 0 and len(names) > 1 and name != names[0]:
            continue  # this seat sits the round out: betting closes at its deadline
        more, state = step(state, c.PlaceBet(name, amounts), now, shoe)
        events += more
    while not state.finished:
        decisions += 1
        if void_at is not None and decisions >= void_at:
            more, state = step(state, c.VoidRound("malfunction", "test"), now, shoe)
            events += more
            break
        now += pick(4) * (pick(8) + 1) * 5_000  # sometimes past a deadline
        if state.deadline_ms is not None and now >= state.deadline_ms:
            more, state = step(state, c.Timeout(), now, shoe)
            events += more
            continue
        options = _choices(state)
        start = pick(len(options)) if options else 0
        for command in options[start:] + options[:start]:
            try:
                more, state = step(state, command, now, shoe)
            except DomainError:
                continue
            events += more
            break
        else:  # nobody can act: the clock runs to the deadline
            now = max(now, state.deadline_ms or now)
    more, state = step(state, c.RevealSeed(CHAIN.seed(nonce)), now, shoe)
    events += more
    if void_at is not None and void_at < 0 and state.phase == "settled":
        more, state = step(state, c.VoidRound("found later", "test"), now + 1_000, shoe)
        events += more
    return events, shoe


@st.composite
def rounds(draw: st.DrawFn, rulesets: tuple[str, ...] = RULESET_NAMES) -> tuple[list[Event], Any]:
    """A real round of one of `rulesets`, with random choices (Hypothesis)."""
    ruleset = draw(st.sampled_from(rulesets))
    nonce = draw(st.integers(1, 63))
    void_at = draw(st.sampled_from([None] * 8 + [1, 2, 3, -1]))
    players = draw(st.integers(RULESETS[ruleset].min_seats, 3)) if SEATS[ruleset] > 1 else 1
    stream = st.integers(0, 2**32 - 1)

    def pick(n: int) -> int:
        return draw(stream) % n if n > 1 else 0

    return play_round(ruleset, nonce, pick, players=players, void_at=void_at)


def redeal(events: list[Event], shoe: FairShoe) -> list[Event]:
    """The events with every card re-dealt from the shoe in event order (positions 0, 1, 2,
    ...), the hole card's reveal showing the re-dealt hole card."""
    out: list[Event] = []
    position = 0
    hole: tuple[int, str] | None = None
    for event in events:
        if type(event) in (PlayerCardDealt, DealerCardDealt):
            card = shoe.card_at(position)
            event = dataclasses.replace(event, position=position, card=card)  # type: ignore[type-var]
            if type(event) is DealerCardDealt and event.hole:
                hole = (position, card)
            position += 1
        elif type(event) is HoleCardRevealed and hole is not None:
            event = HoleCardRevealed(*hole)
        out.append(event)
    return out


def resettle(events: list[Event]) -> list[Event]:
    """The events with a house-banked RoundSettled recomputed by the engine's settlement code
    from the state the events before it fold to (kept as is where they do not fold)."""
    out = list(events)
    for index, event in enumerate(events):
        if type(event) is RoundSettled:
            state: Any = None
            try:
                for before in out[:index]:
                    state = evolve(state, before)
                if state.rules.kind == "duel":
                    break
                derived = settle(state, event.settled_at_ms)
            except Exception:  # a stream the fold refuses: the forger keeps the settlement
                break
            if len(derived) == 1:
                out[index] = derived[0]
            break
    return out


def forge(events: list[Event], shoe: FairShoe, key: Any = KEY) -> dict[str, Any]:
    """A bundle line for these events as an operator holding the key would write it."""
    forged = resettle(redeal(events, shoe))
    pairs = []
    for event in forged:
        data = event_to_dict(event)
        pairs.append((data.pop("type"), data))
    stream = f"round-{getattr(forged[0], 'round_id', 'r')}"
    stored = stored_events(stream, pairs)
    return bundle_line(receipt_from_events(stream, stored), stored, key)


def card_indexes(events: list[Event], kind: type[Any] | None = None) -> list[int]:
    kinds = (PlayerCardDealt, DealerCardDealt) if kind is None else (kind,)
    return [i for i, e in enumerate(events) if type(e) in kinds]


# A rewrite: (events, the indexes of the events the rules force, drawn numbers) -> events.
Rewrite = Callable[[list[Event], list[int], Callable[[int], int]], list[Event]]


def forced(events: list[Event]) -> list[int]:
    """The indexes of the events the rules derive (every event but the first of each
    player's decision, the bets and the seed reveal): these a rewrite moves, drops, repeats."""
    problems, boundaries = reenact_states(events)
    assert problems == []
    starts = set(boundaries) - {len(events)}
    chosen = {
        i for i in starts
        if type(events[i]) is not PlayerStood or not events[i].auto  # type: ignore[attr-defined]
    }  # fmt: skip
    return [
        i for i, e in enumerate(events)
        if i not in chosen and e.type not in ("BetPlaced", "RoundOpened", "ServerSeedRevealed")
        and not (e.type == "InsuranceDeclined" and i in starts)
    ]  # fmt: skip


def _drop(events: list[Event], rules: list[int], pick: Callable[[int], int]) -> list[Event]:
    at = rules[pick(len(rules))]
    return [*events[:at], *events[at + 1 :]]


def _repeat(events: list[Event], rules: list[int], pick: Callable[[int], int]) -> list[Event]:
    at = rules[pick(len(rules))]
    return [*events[: at + 1], *events[at:]]


def _move(events: list[Event], rules: list[int], pick: Callable[[int], int]) -> list[Event]:
    at = rules[pick(len(rules))]
    rest = [*events[:at], *events[at + 1 :]]
    to = 1 + pick(len(rest))
    return [*rest[:to], events[at], *rest[to:]]


def _insert_card(events: list[Event], rules: list[int], pick: Callable[[int], int]) -> list[Event]:
    """One more card (the shoe's next, once re-dealt) for the dealer anywhere, or for a hand
    while the rules deal (a card to a hand in its own turn would be a hit: a choice)."""
    cards = card_indexes(events)
    source = events[cards[pick(len(cards))]] if cards else DealerCardDealt(0, "", False)
    if type(source) is PlayerCardDealt:
        dealt = next((i for i, e in enumerate(events) if e.type in _PLAY_STARTS), len(events) - 1)
        to = 1 + pick(dealt)
    else:
        to = 1 + pick(len(events) - 1)
    return [*events[:to], source, *events[to:]]


# Where the deal ends and the players' choices begin.
_PLAY_STARTS = frozenset(
    {"TurnStarted", "DuelTimerStarted", "InsuranceOffered", "DealerPeeked", "RoundSettled"}
)


def _next_dealer_card(
    events: list[Event], rules: list[int], pick: Callable[[int], int]
) -> list[Event]:
    """A dealer card replaced by the shoe's next card: the dealer's card event swapped with
    the card event after it, so that the forger's re-deal gives the dealer the next card of
    the shoe (and the other hand the dealer's)."""
    cards = card_indexes(events)
    dealer = [n for n, i in enumerate(cards[:-1]) if type(events[i]) is DealerCardDealt]
    if not dealer:
        return _drop(events, rules, pick)
    n = dealer[pick(len(dealer))]
    i, j = cards[n], cards[n + 1]
    out = list(events)
    out[i], out[j] = events[j], events[i]
    return out


REWRITES: tuple[Rewrite, ...] = (_drop, _repeat, _move, _insert_card, _next_dealer_card)
