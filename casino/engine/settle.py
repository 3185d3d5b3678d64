"""Settlement arithmetic: per-hand outcomes and gross returns, insurance, and the duel split.

Gross return = everything handed back for a hand, stake included (0 for a loss).
"""

from __future__ import annotations

from casino.engine.events import HandResult, InsuranceResult, new_hand_result
from casino.engine.evolve import BLACKJACK, BUST, EVEN_MONEY, RoundState
from casino.engine.rules import RuleSet


def _pays(stake: int, ratio: tuple[int, int]) -> int:
    """Stake back plus the win at ratio num:den (exact for chip-unit stakes)."""
    return stake + stake * ratio[0] // ratio[1]


def banked_results(
    state: RoundState,
) -> tuple[tuple[HandResult, ...], tuple[InsuranceResult, ...]]:
    """Every hand against the dealer's final hand, and every insurance bet."""
    rules = state.rules
    dealer = state.dealer
    # Hand.total and .is_blackjack inlined: this runs for every round the simulator plays.
    hard, has_ace = dealer.hard, dealer.has_ace
    dealer_total = hard + 10 if has_ace and hard <= 11 else hard
    dealer_bj = len(dealer.cards) == 2 and not dealer.split and has_ace and hard == 11
    hands: list[HandResult] = []
    insurance: list[InsuranceResult] = []
    for box in state.boxes:
        for index, hand in enumerate(box.hands):
            hard = hand.hard
            total = hard + 10 if hand.has_ace and hard <= 11 else hard
            outcome, gross = _hand_outcome(
                rules, hand.status, total, hand.stake, dealer_total, dealer_bj
            )
            hands.append(
                new_hand_result(box.player_id, box.box, index, outcome, hand.stake, gross, total)
            )
        if box.insurance:
            gross = _pays(box.insurance, rules.insurance_pays) if dealer_bj else 0
            insurance.append(InsuranceResult(box.player_id, box.box, box.insurance, gross))
    return tuple(hands), tuple(insurance)


def _hand_outcome(
    rules: RuleSet, status: str, total: int, stake: int, dealer_total: int, dealer_bj: bool
) -> tuple[str, int]:
    if status == EVEN_MONEY:
        return "even_money", _pays(stake, rules.even_money_pays)
    if status == BUST:
        return "bust", 0  # 004 "if the player busts he loses, even if the dealer also busts"
    if status == BLACKJACK:
        if dealer_bj:
            return "push", stake
        if rules.blackjack_waits_for_dealer and dealer_total == 21:
            return "blackjack", _pays(stake, rules.blackjack_vs_dealer_21_pays)
        return "blackjack", _pays(stake, rules.blackjack_pays)
    if dealer_bj:
        return "lose", 0
    if dealer_total > 21 or total > dealer_total:
        return "win", _pays(stake, rules.win_pays)
    if total < dealer_total:
        return "lose", 0
    if total in rules.tie_loses_totals:
        return "lose", 0
    return "push", stake


def duel_fee(pot: int, bps: int) -> int:
    """The house fee on a duel pot, rounded down to the micro-USDC."""
    return pot * bps // 10_000


def duel_payouts(totals: list[tuple[int, bool]], stake: int, bps: int) -> tuple[list[int], int]:
    """Split a duel pot. `totals` = (final total, is blackjack) per player in seat order.

    Returns (gross return per player, fee), which sum to the pot exactly. Best total <= 21
    wins, a blackjack beats a plain 21, ties share, everyone bust shares among all (004).
    The distributable pot is divided evenly in whole micro-USDC; the remainder (fewer
    micro-USDC than winners) goes one micro-USDC each to the winners in seat order.
    """
    pot = stake * len(totals)
    fee = duel_fee(pot, bps)
    # Plain loops, no list comprehensions (each is a function call): this runs every duel round.
    ranks = []
    best = -1  # everyone bust: all rank -1 and share
    for total, bj in totals:
        rank = (22 if bj else total) if total <= 21 else -1
        ranks.append(rank)
        if rank > best:
            best = rank
    share, remainder = divmod(pot - fee, ranks.count(best))
    gross = []
    n = 0  # winners so far, in seat order: the first `remainder` get one micro-USDC more
    for rank in ranks:
        if rank == best:
            gross.append(share + 1 if n < remainder else share)
            n += 1
        else:
            gross.append(0)
    return gross, fee
