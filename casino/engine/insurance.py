"""Who is offered insurance or even money: one function both decide and evolve use."""

from __future__ import annotations

from casino.engine.state import (
    BLACKJACK,
    INS_EVEN_MONEY_OFFERED,
    INS_NONE,
    INS_OFFERED,
    Box,
    RoundState,
)


def insurance_offer(state: RoundState, box: Box) -> str:
    """The offer a box gets when the dealer shows an ace (INS_NONE if none).

    Seed 000: insurance only with the player's "Offer Insurance" option on; a blackjack is
    offered even money instead. Reading: with the option off, even money is not offered
    either (it is insurance on a blackjack).
    """
    rules = state.rules
    if rules.insurance == "none":
        return INS_NONE
    if rules.insurance_is_player_option:
        for p in state.opened.participants:
            if p.player_id == box.player_id and not p.offer_insurance:
                return INS_NONE
    if rules.even_money and box.hands[0].status == BLACKJACK:
        return INS_EVEN_MONEY_OFFERED
    return INS_OFFERED
