"""RTP simulator: plays rounds through the real decider (`step` = decide + evolve) with basic
strategy, over several processes, and reports the return to player with confidence intervals.

Determinism: the run is cut into fixed chunks of rounds; chunk c draws its shoes from seeds
derived from (seed, c) only, and chunk tallies (exact integers) are merged in chunk order.
So a seed gives the same figures for ANY worker count, not just the same one.

- ``fast`` shoe: one `FastShoe` a chunk (Mersenne Twister seeded from (seed, c), lazy
  Fisher-Yates), reshuffled for each round: rounds in chunk order draw from its one stream.
- ``fair`` shoe: `fairness.shoe.FairShoe(server_seed_c, client_material, nonce)` with a
  per-chunk server seed sha256("simulate:<seed>:<chunk>") and the round number as nonce.

Pure (no Django, no I/O apart from the optional progress callback).
"""

from __future__ import annotations

import gc
import hashlib
import math
import multiprocessing
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Final

from casino.engine.cards import CARD_POINTS
from casino.engine.commands import (
    Command,
    DeclineInsurance,
    Double,
    Hit,
    OpenRound,
    PlaceBet,
    Split,
    Stand,
)
from casino.engine.decider import step
from casino.engine.events import Participant, RoundOptions
from casino.engine.evolve import (
    INS_EVEN_MONEY_OFFERED,
    INS_OFFERED,
    INSURANCE,
    OPEN,
    RoundState,
)
from casino.engine.rules import DUEL, RULESETS, USDC, RuleSet
from casino.engine.shoe import FastShoe, Shoe
from casino.engine.strategy import (
    DOUBLE,
    HIT,
    SPLIT,
    STAND,
    DuelStrategy,
    Move,
    basic_strategy,
)
from casino.engine.views import allowed_moves

CHUNK_ROUNDS: Final = 5_000  # rounds per work unit (and per progress tick)
Z95: Final = 1.959963984540054
Z99: Final = 2.5758293035489004
SHOES: Final = ("fast", "fair")
_NOW: Final = 1_700_000_000_000  # a fixed clock: the simulator never reaches a deadline
_BET: Final = USDC  # every box bets 1 USDC (RTP is scale free)

# Counters kept per chunk (all integers, so merging is exact and order free).
_COUNTERS: Final = (
    "rounds",
    "wagered",
    "returned",
    "sum_w2",
    "sum_r2",
    "sum_wr",
    "hands",
    "blackjacks",
    "busts",
    "pushes",
    "wins",
    "losses",
    "doubles",
    "splits",
    "insurance_offered",
    "insurance_taken",
    "dealer_busts",
    "dealer_blackjacks",
    "fee",
    "pot",
    "initial",
)


@dataclass(frozen=True, slots=True)
class SimulationConfig:
    """What to simulate. ``players`` is the number of seats (duel: 2..8, banked: 1)."""

    ruleset: str
    rounds: int
    seed: int = 0
    shoe: str = "fast"
    players: int = 0  # 0 = the rule set's minimum seats
    boxes: int = 1  # boxes per player on banked tables
    duel_hit_until: int = 16
    chunk_rounds: int = CHUNK_ROUNDS  # part of the seed's meaning: same chunks, same shoes

    def check(self) -> RuleSet:
        """The rule set, or ValueError for an impossible configuration."""
        rules = RULESETS.get(self.ruleset)
        if rules is None:
            raise ValueError(f"unknown rule set {self.ruleset!r} (have: {', '.join(RULESETS)})")
        if self.rounds < 1:
            raise ValueError("simulate at least one round")
        if self.shoe not in SHOES:
            raise ValueError(f"shoe must be one of {', '.join(SHOES)}")
        if not rules.min_seats <= self.seats(rules) <= rules.max_seats:
            raise ValueError(f"{rules.name} seats {rules.min_seats}..{rules.max_seats} players")
        if self.chunk_rounds < 1:
            raise ValueError("chunk_rounds must be at least 1")
        if not 1 <= self.boxes <= rules.max_boxes:
            raise ValueError(f"{rules.name} allows 1..{rules.max_boxes} boxes")
        return rules

    def seats(self, rules: RuleSet) -> int:
        return self.players or rules.min_seats


def _chunk_key(seed: int, chunk: int) -> bytes:
    return hashlib.sha256(f"simulate:{seed}:{chunk}".encode("ascii")).digest()


def _shoe_factory(config: SimulationConfig, chunk: int, material: str) -> Callable[[int], Shoe]:
    """Round number (1-based, global) -> that round's shoe."""
    key = _chunk_key(config.seed, chunk)
    if config.shoe == "fair":
        from fairness.shoe import (
            FairShoe,
        )  # only the fair runs need the fairness package

        server_seed = key.hex()
        return lambda nonce: FairShoe(server_seed, material, nonce)
    shoe = FastShoe(int.from_bytes(key, "big"))
    return lambda nonce: shoe.reshuffle()  # the chunk's rounds are played in order


def _commands_for(player_id: str) -> dict[Move, Command]:
    """The four play commands of a player (immutable, so built once and reused)."""
    return {
        HIT: Hit(player_id),
        STAND: Stand(player_id),
        DOUBLE: Double(player_id),
        SPLIT: Split(player_id),
    }


class BankedBot:
    """Basic strategy for one rule set, memoised: the simulator asks it ~1.3 times a round.

    A move depends only on what `allowed_moves` and `basic_strategy` read: the up card's value,
    the hand's hard total and ace, whether it is a two-card pair (and of what value), its
    split flags, and whether the box may add a hand. The first time a combination comes up
    the real `basic_strategy(cards, up, allowed_moves(...))` decides, later it is one dict lookup.
    """

    __slots__ = ("_das", "_max_hands", "_memo", "_rules")

    def __init__(self, rules: RuleSet) -> None:
        self._rules = rules
        self._das = rules.double_after_split
        self._max_hands = rules.max_hands
        self._memo: dict[tuple[int, int, bool, bool, int, bool, bool, bool], Move] = {}

    def move(self, state: RoundState, up: str) -> Move:
        box = state.boxes[state.turn]
        hand = box.hands[state.turn_hand]
        cards = hand.cards
        two = len(cards) == 2  # only "exactly two cards" matters to the chart and the rules
        pair = 0
        if two:
            first = CARD_POINTS[cards[0]]
            if first == CARD_POINTS[cards[1]]:  # equal values: K and J are a pair too
                pair = first
        key = (
            CARD_POINTS[up],
            hand.hard,
            hand.has_ace,
            two,
            pair,
            hand.split,
            hand.split_aces,
            len(box.hands) < self._max_hands,
        )
        move = self._memo.get(key)
        if move is None:
            allowed = allowed_moves(self._rules, state)
            move = basic_strategy(cards, up, allowed, double_after_split=self._das)
            self._memo[key] = move
        return move


def play_banked_round(
    rules: RuleSet,
    shoe: Shoe,
    opening: OpenRound,
    bets: PlaceBet,
    bot: BankedBot | None = None,
    commands: dict[Move, Command] | None = None,
) -> RoundState:
    """One house-banked round with basic strategy: no insurance, no even money.

    `bot` and `commands` may be passed in to be reused across rounds (run_chunk does).
    """
    _, state = step(None, opening, _NOW, shoe)
    _, state = step(state, bets, _NOW, shoe)
    if state.settlement is not None:  # a blackjack or a dealer blackjack: over at the deal
        return state
    up = state.dealer.cards[1 - rules.hole_card_index]
    if bot is None:
        bot = BankedBot(rules)
    if commands is None:
        commands = _commands_for(bets.player_id)
    while state.settlement is None:
        command: Command
        if state.phase == INSURANCE:
            box = next(b for b in state.boxes if b.insurance_status in _OPEN_OFFERS)
            command = DeclineInsurance(box.player_id, box.box)
        else:
            command = commands[bot.move(state, up)]
        _, state = step(state, command, _NOW, shoe)
    return state


_OPEN_OFFERS: Final = (INS_OFFERED, INS_EVEN_MONEY_OFFERED)


def play_duel_round(
    shoe: Shoe,
    opening: OpenRound,
    strategy: DuelStrategy,
    moves: list[tuple[Hit, Stand]] | None = None,
) -> RoundState:
    """One duel: each seat in turn hits by `strategy` until it stands or busts.

    `moves` (each seat's Hit and Stand) may be passed in to be reused across rounds
    (run_chunk does: commands are immutable, and building them was a cost of every round).
    """
    _, state = step(None, opening, _NOW, shoe)
    if moves is None:
        moves = _duel_moves(opening.participants)
    until = min(strategy.hit_until, 20)  # DuelStrategy.hits: total <= hit_until and < 21
    for seat, (hit, stand) in enumerate(moves):
        while state.settlement is None:
            hand = state.boxes[seat].hands[0]
            if hand.status != OPEN:
                break
            # DuelStrategy.move, on the total the hand already keeps instead of its cards
            hard = hand.hard
            total = hard + 10 if hand.has_ace and hard <= 11 else hard
            _, state = step(state, hit if total <= until else stand, _NOW, shoe)
    return state


def _duel_moves(participants: tuple[Participant, ...]) -> list[tuple[Hit, Stand]]:
    return [(Hit(p.player_id), Stand(p.player_id)) for p in participants]


def run_chunk(config: SimulationConfig, chunk: int) -> dict[str, Any]:
    """Play rounds [chunk * chunk_rounds, ...) and return their integer tallies."""
    rules = config.check()
    first = chunk * config.chunk_rounds
    count = min(config.chunk_rounds, config.rounds - first)
    seats = config.seats(rules)
    participants = tuple(
        Participant(f"p{i}", f"sim{i}", offer_insurance=True) for i in range(seats)
    )
    material = "|".join(p.client_seed for p in participants)
    shoe_for = _shoe_factory(config, chunk, material)
    duel = rules.kind == DUEL
    options = (
        RoundOptions(min_bet=_BET, max_bet=_BET, stake=_BET)
        if duel
        else RoundOptions(min_bet=_BET, max_bet=_BET)
    )
    commitment = "0" * 64
    bets = PlaceBet("p0", (_BET,) * config.boxes)
    strategy = DuelStrategy(config.duel_hit_until)
    bot = BankedBot(rules)
    commands = _commands_for(bets.player_id)
    moves = _duel_moves(participants)
    # One OpenRound for every round of the chunk: the ids and nonce it records are read by
    # nothing here (each round's shoe comes from its own nonce), and building a command and
    # its round id every round cost about 3% of a round.
    opening = OpenRound(
        "sim", "sim", rules.name, "sim", first + 1, commitment, participants, options
    )
    nonces = range(first + 1, first + count + 1)
    # The cyclic garbage collector is paused while the chunk plays (as the audit pauses it
    # per chunk): a round makes thousands of short-lived objects and no cycle, reference
    # counting frees them all, and the collections their allocations set off walked them for
    # nothing. Whatever is left is collected once the collector resumes.
    collecting = gc.isenabled()
    gc.disable()
    try:
        if duel:
            played = (play_duel_round(shoe_for(n), opening, strategy, moves) for n in nonces)
            return _count_duels(played, seats)
        played = (
            play_banked_round(rules, shoe_for(n), opening, bets, bot, commands) for n in nonces
        )
        tally = _count_banked(played)
    finally:
        if collecting:
            gc.enable()
    return {"tally": tally, "seat_returns": [0] * seats, "seat_r2": [0] * seats}


# The counting below runs once a round on local variables (a dict update per counter and
# round cost about 2% of a round); the tally dict is built once at the end.


def _count_banked(states: Iterable[RoundState]) -> dict[str, int]:
    rounds = hands = wagered_sum = returned_sum = sum_w2 = sum_r2 = sum_wr = initial = 0
    naturals = busts = pushes = wins = losses = doubles = splits = 0
    offered = taken = dealer_busts = dealer_blackjacks = 0
    for state in states:
        settled = state.settlement
        assert settled is not None
        wagered = returned = 0
        for result in settled.hands:
            wagered += result.stake
            returned += result.gross_return
            outcome = result.outcome
            if result.total > 21:
                busts += 1
            if outcome == "win":
                wins += 1
            elif outcome in _LOSSES:
                losses += 1
            elif outcome in _PUSHES:
                pushes += 1
        hands += len(settled.hands)
        for insurance in settled.insurance:
            wagered += insurance.stake
            returned += insurance.gross_return
            taken += 1
        wagered_sum += wagered
        returned_sum += returned
        sum_w2 += wagered * wagered
        sum_r2 += returned * returned
        sum_wr += wagered * returned
        any_offer = False
        for box in state.boxes:
            box_hands = box.hands
            initial += box.bet
            first = box_hands[0]
            if first.hard == 11 and first.has_ace and len(first.cards) == 2 and not first.split:
                naturals += 1  # a player natural (Hand.is_blackjack inlined)
            if len(box_hands) > 1:
                splits += len(box_hands) - 1
                for hand in box_hands:
                    doubles += hand.doubled
            else:
                doubles += first.doubled
            if box.insurance_status:
                any_offer = True
        rounds += 1
        offered += any_offer
        if state.dealer_blackjack:
            dealer_blackjacks += 1
        elif settled.dealer_total > 21:
            dealer_busts += 1
    tally = dict.fromkeys(_COUNTERS, 0)
    tally.update(
        rounds=rounds,
        wagered=wagered_sum,
        returned=returned_sum,
        sum_w2=sum_w2,
        sum_r2=sum_r2,
        sum_wr=sum_wr,
        hands=hands,
        blackjacks=naturals,
        busts=busts,
        pushes=pushes,
        wins=wins,
        losses=losses,
        doubles=doubles,
        splits=splits,
        insurance_offered=offered,
        insurance_taken=taken,
        dealer_busts=dealer_busts,
        dealer_blackjacks=dealer_blackjacks,
        initial=initial,
    )
    return tally


def _count_duels(states: Iterable[RoundState], seats: int) -> dict[str, Any]:
    """_count_banked for duels (one hand a box, outcomes win, split or lose, no insurance),
    with each seat's returns."""
    rounds = hands = wagered_sum = returned_sum = sum_w2 = sum_r2 = sum_wr = initial = 0
    naturals = busts = pushes = wins = losses = fee = 0
    seat_returns = [0] * seats
    seat_r2 = [0] * seats
    for state in states:
        settled = state.settlement
        assert settled is not None
        wagered = returned = 0
        for i, result in enumerate(settled.hands):
            wagered += result.stake
            gross = result.gross_return
            returned += gross
            seat_returns[i] += gross
            seat_r2[i] += gross * gross
            outcome = result.outcome
            if result.total > 21:
                busts += 1
            if outcome == "win":
                wins += 1
            elif outcome in _LOSSES:
                losses += 1
            elif outcome in _PUSHES:
                pushes += 1
        hands += len(settled.hands)
        wagered_sum += wagered
        returned_sum += returned
        sum_w2 += wagered * wagered
        sum_r2 += returned * returned
        sum_wr += wagered * returned
        fee += settled.fee
        for box in state.boxes:
            initial += box.bet
            first = box.hands[0]
            if first.hard == 11 and first.has_ace and len(first.cards) == 2 and not first.split:
                naturals += 1  # a natural (Hand.is_blackjack inlined)
        rounds += 1
    tally = dict.fromkeys(_COUNTERS, 0)
    tally.update(
        rounds=rounds,
        wagered=wagered_sum,
        returned=returned_sum,
        sum_w2=sum_w2,
        sum_r2=sum_r2,
        sum_wr=sum_wr,
        hands=hands,
        blackjacks=naturals,
        busts=busts,
        pushes=pushes,
        wins=wins,
        losses=losses,
        fee=fee,
        pot=wagered_sum,
        initial=initial,
    )
    return {"tally": tally, "seat_returns": seat_returns, "seat_r2": seat_r2}


_LOSSES: Final = ("lose", "bust")
_PUSHES: Final = ("push", "split")


def _merge(total: dict[str, Any], part: dict[str, Any]) -> None:
    for key, value in part["tally"].items():
        total["tally"][key] += value
    for name in ("seat_returns", "seat_r2"):
        total[name] = [a + b for a, b in zip(total[name], part[name], strict=True)]


def _interval(center: float, stderr: float, z: float) -> list[float]:
    return [center - z * stderr, center + z * stderr]


def summarize(
    config: SimulationConfig, merged: dict[str, Any], elapsed_s: float, workers: int
) -> dict[str, Any]:
    """The report: RTP as a fraction with 95%/99% confidence intervals.

    ``rtp`` is the return per initial bet, 1 + net / initial bets: the convention behind
    published blackjack RTPs and house edges (a double or split adds risk, not a new bet).
    ``rtp_per_wager`` is returned / everything wagered (doubles, splits and insurance
    included), a ratio estimator whose interval comes from the delta method.
    """
    rules = config.check()
    t = merged["tally"]
    n = t["rounds"]
    initial = t["initial"] / n  # the same every round
    net = (t["returned"] - t["wagered"]) / n
    net_var = (t["sum_r2"] - 2 * t["sum_wr"] + t["sum_w2"]) / n - net * net
    rtp = 1 + net / initial
    stderr = math.sqrt(max(net_var, 0.0) / n) / initial
    mean_w = t["wagered"] / n
    per_wager = t["returned"] / t["wagered"]
    # Var of (R - ratio * W) per round, over mean(W)^2 / n: the ratio estimator's variance.
    var_d = (
        t["sum_r2"] - 2 * per_wager * t["sum_wr"] + per_wager * per_wager * t["sum_w2"]
    ) / n - (t["returned"] / n - per_wager * mean_w) ** 2
    stderr_w = math.sqrt(max(var_d, 0.0) / n) / mean_w
    hands = max(t["hands"], 1)
    report: dict[str, Any] = {
        "ruleset": rules.name,
        "rounds": n,
        "rtp": rtp,
        "ci95": _interval(rtp, stderr, Z95),
        "ci99": _interval(rtp, stderr, Z99),
        "stderr": stderr,
        "rtp_per_wager": per_wager,
        "ci95_per_wager": _interval(per_wager, stderr_w, Z95),
        "ci99_per_wager": _interval(per_wager, stderr_w, Z99),
        "rounds_per_s": n / elapsed_s if elapsed_s > 0 else 0.0,
        "rounds_per_s_per_worker": n / elapsed_s / workers if elapsed_s > 0 else 0.0,
        "elapsed_s": elapsed_s,
        "workers": workers,
        "seed": config.seed,
        "shoe": config.shoe,
        "players": config.seats(rules),
        "hands_per_round": t["hands"] / n,
        "blackjack_rate": t["blackjacks"] / hands,
        "bust_rate": t["busts"] / hands,
        "push_rate": t["pushes"] / hands,
        "win_rate": t["wins"] / hands,
        "loss_rate": t["losses"] / hands,
        "average_wager": mean_w / initial,  # in initial bets
    }
    if rules.kind == DUEL:
        stake = _BET
        per_player = []
        for returned, r2 in zip(merged["seat_returns"], merged["seat_r2"], strict=True):
            mean = returned / n
            sd = math.sqrt(max(r2 / n - mean * mean, 0.0) / n) / stake
            per_player.append({"rtp": mean / stake, "ci95": _interval(mean / stake, sd, Z95)})
        report["per_player_rtp"] = per_player
        report["fee_take"] = t["fee"] / t["pot"]
        report["fee_bps"] = rules.fee_bps_for(config.seats(rules))
    else:
        report["boxes"] = config.boxes
        report["double_rate"] = t["doubles"] / hands
        report["split_rate"] = t["splits"] / (n * config.boxes)
        report["dealer_bust_rate"] = t["dealer_busts"] / n
        report["dealer_blackjack_rate"] = t["dealer_blackjacks"] / n
        report["insurance_offered_rate"] = t["insurance_offered"] / n
        report["insurance_taken_rate"] = t["insurance_taken"] / n
    return report


def _run_chunk_args(args: tuple[SimulationConfig, int]) -> dict[str, Any]:
    return run_chunk(*args)


def simulate(
    config: SimulationConfig,
    *,
    workers: int = 1,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Run the simulation over `workers` processes and return the report (see `summarize`).

    `progress(done_rounds, total_rounds)` is called after each chunk, in chunk order.
    """
    rules = config.check()
    if workers < 1:
        raise ValueError("workers must be at least 1")
    chunks = -(-config.rounds // config.chunk_rounds)
    seats = config.seats(rules)
    merged: dict[str, Any] = {
        "tally": dict.fromkeys(_COUNTERS, 0),
        "seat_returns": [0] * seats,
        "seat_r2": [0] * seats,
    }
    work = [(config, chunk) for chunk in range(chunks)]
    started = time.perf_counter()
    done = 0
    if workers == 1 or chunks == 1:
        results = map(_run_chunk_args, work)
        for part in results:
            _merge(merged, part)
            done += part["tally"]["rounds"]
            if progress is not None:
                progress(done, config.rounds)
        used = 1
    else:
        used = min(workers, chunks)
        with multiprocessing.get_context("fork").Pool(used) as pool:
            for part in pool.imap(_run_chunk_args, work):
                _merge(merged, part)
                done += part["tally"]["rounds"]
                if progress is not None:
                    progress(done, config.rounds)
    elapsed = time.perf_counter() - started
    return summarize(config, merged, elapsed, used)
