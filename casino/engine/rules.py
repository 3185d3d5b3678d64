"""Rule sets: declarative, versioned, frozen data. Code reads these; it never hard-codes a rule.

Each field's comment names the seed line it implements ("000" = 000_75ccea3adeabb2ad.txt
classic, "002" = 002_400c2f4efcde6aba.txt Atlantic City, "004" = 004_ca44145c343a4f8f.txt
duel and duel classic) or says "reading:" where the seed is silent. docs/rules.md has the
full sentences and the test proving each rule.

Money is integer micro-USDC (1 USDC = 1_000_000). Payout ratios are (numerator, denominator)
of the *win* on top of the returned stake: 3:2 -> (3, 2), so a 10 USDC blackjack returns 25.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from functools import cache
from typing import Final

USDC: Final = 1_000_000
CHIP_UNIT: Final = 10_000  # 0.01 USDC keeps 3:2 and half-bet insurance exact

BANKED: Final = "banked"
DUEL: Final = "duel"

INSURANCE_NONE: Final = "none"
INSURANCE_HALF: Final = "half"
INSURANCE_UP_TO_HALF: Final = "up_to_half"


@dataclass(frozen=True, slots=True)
class RuleSet:
    """Everything that differs between rule sets, in one place."""

    name: str
    version: int
    kind: str  # BANKED (player vs dealer) or DUEL (player vs player)
    decks: int
    min_seats: int
    max_seats: int
    max_boxes: int  # betting boxes per player
    hole_card_index: int  # which dealer card (0 = first, 1 = second) is dealt face down
    dealer_hits_soft_17: bool
    peek_up_points: tuple[int, ...]  # up-card points (1 = ace) on which the dealer peeks
    insurance: str
    insurance_pays: tuple[int, int]
    insurance_is_player_option: bool  # the player's "Offer Insurance" option applies
    even_money: bool  # a blackjack holder is offered even money instead of insurance
    even_money_pays: tuple[int, int]
    max_hands: int  # hands one box may become by splitting (4 = three splits)
    resplit_aces: bool
    split_aces_one_card: bool
    double_after_split: bool
    win_pays: tuple[int, int]
    blackjack_pays: tuple[int, int]
    blackjack_vs_dealer_21_pays: tuple[int, int]  # player blackjack when the dealer makes 21
    blackjack_waits_for_dealer: bool  # blackjack payout depends on the dealer's final total
    tie_loses_totals: tuple[int, ...]  # equal totals the player loses instead of pushing
    safety_net_available: bool
    min_table_bet: int  # bounds on the table minimum (or the duel's fixed stake)
    max_table_bet: int
    default_min_bet: int
    default_max_bet: int
    betting_timeout_ms: int
    insurance_timeout_ms: int
    turn_timeout_ms: int
    duel_timer_ms: int
    fee_bps: tuple[tuple[int, int], ...]  # (players, basis points), duel only

    def __hash__(self) -> int:
        # Cheap: caches key on rule sets per round; equality still compares every field.
        return hash((self.name, self.version))

    @property
    def version_hash(self) -> str:
        """sha256 hex of the canonical JSON of every parameter (stable across runs)."""
        return _version_hash(self)

    def fee_bps_for(self, players: int) -> int:
        """The fee in basis points for a duel of `players` players (0 if none applies)."""
        for count, bps in self.fee_bps:
            if count == players:
                return bps
        return 0


@cache
def _version_hash(rules: RuleSet) -> str:
    body = json.dumps(asdict(rules), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


CLASSIC: Final = RuleSet(
    name="classic",
    version=1,
    kind=BANKED,
    decks=8,  # 000 "played using eight standard 52-card decks" / "shuffled each round"
    min_seats=1,
    max_seats=1,  # reading: 000 describes one Player against the Dealer
    max_boxes=1,  # 000 one betting circle
    hole_card_index=0,  # 000 "The Dealer receives their first card facedown"
    dealer_hits_soft_17=False,  # 000 "Dealer must stand on all totals of 17 ... soft"
    peek_up_points=(1, 10),  # 000 checks facedown card after insurance (A) and with a 10 up
    insurance=INSURANCE_HALF,  # 000 "another bet equal to half the main bet"
    insurance_pays=(2, 1),  # 000 insurance "Paid 2 to 1"
    insurance_is_player_option=True,  # 000 Options: "Offer Insurance" Enable/Disable
    even_money=True,  # 000 "Even Money is an option offered to a Player with Blackjack"
    even_money_pays=(1, 1),  # 000 "paid for their Blackjack immediately at a rate of 1 to 1"
    max_hands=4,  # 000 "Players may split a maximum of three times, creating four hands"
    resplit_aces=False,  # 000 "Except for Aces" (aces split once)
    split_aces_one_card=True,  # 000 "Split Aces only receive one card per Ace"
    double_after_split=True,  # 000 "Doubling Down on the first two cards after a split"
    win_pays=(1, 1),  # 000 "The Player wins and is paid 1 to 1"
    blackjack_pays=(3, 2),  # 000 "paid 3 to 2 on the main bet"
    blackjack_vs_dealer_21_pays=(3, 2),  # 000 blackjack "outranks all other 21-point hands"
    blackjack_waits_for_dealer=False,  # 000 "Player automatically wins"
    tie_loses_totals=(),  # 000 "Tie: The bet pushes"
    safety_net_available=True,  # 000 Options: "Safety Net"
    min_table_bet=CHIP_UNIT,  # reading: 000 names no limits; any chip-unit amount
    max_table_bet=1_000_000 * USDC,
    default_min_bet=CHIP_UNIT * 10,  # reading: 0.10 USDC default minimum
    default_max_bet=1_000 * USDC,
    betting_timeout_ms=120_000,  # reading: an opened round with no DEAL is voided after 2 min
    insurance_timeout_ms=30_000,  # reading: no answer declines insurance
    turn_timeout_ms=60_000,  # reading: an abandoned hand stands after 60 s
    duel_timer_ms=0,
    fee_bps=(),
)

ATLANTIC_CITY: Final = RuleSet(
    name="atlantic_city",
    version=1,
    kind=BANKED,
    decks=8,  # 002 "8 decks are used, 52 cards each. Cards are shuffled after each game."
    min_seats=1,
    max_seats=1,
    max_boxes=3,  # 002 "allowed to bet on up to three hands ... central, right and left"
    hole_card_index=1,  # reading: 002 "one card face down, the other one face up" (2nd down)
    dealer_hits_soft_17=False,  # 002 "The Dealer stands on 17."
    peek_up_points=(1, 10),  # 002 "face-up card is 10, King, Queen, Jack or Ace ... checks"
    insurance=INSURANCE_HALF,  # 002 "an additional bet is placed, equal to half"
    insurance_pays=(2, 1),  # 002 "Insurance bet pays out 2 to 1"
    insurance_is_player_option=False,  # 002 always asks "Insurance?"
    even_money=False,  # reading: 002 names no even money; a blackjack may insure
    even_money_pays=(1, 1),
    max_hands=2,  # 002 "You can split your hand only once."
    resplit_aces=False,
    split_aces_one_card=True,  # 002 "allowed to draw only one card to each Ace"
    double_after_split=True,  # reading: needed for the advertised RTP 99.51% (docs/rules.md)
    win_pays=(1, 1),  # 002 "A regular winning hand pays out 1 to 1"
    blackjack_pays=(3, 2),  # 002 "Blackjack pays out 3 to 2"
    blackjack_vs_dealer_21_pays=(3, 2),  # 002 "BJ ... beats any hand including a regular 21"
    blackjack_waits_for_dealer=False,
    tie_loses_totals=(),  # 002 "In case of tie hands, you are returned your original bet"
    safety_net_available=False,
    min_table_bet=CHIP_UNIT,  # 002 "Min/Max ... on each betting field" (table data)
    max_table_bet=1_000_000 * USDC,
    default_min_bet=CHIP_UNIT * 10,
    default_max_bet=1_000 * USDC,
    betting_timeout_ms=120_000,
    insurance_timeout_ms=30_000,
    turn_timeout_ms=60_000,
    duel_timer_ms=0,
    fee_bps=(),
)

DUEL_CLASSIC: Final = RuleSet(
    name="duel_classic",
    version=1,
    kind=BANKED,
    decks=8,  # reading: 004 names no deck count; same 8-deck shoe as every table
    min_seats=1,
    max_seats=7,  # reading: "Each player has an independent game with the dealer"; 7 seats
    max_boxes=1,
    hole_card_index=1,  # 004 "The dealer also gets dealt 2 cards, one ... face down"
    dealer_hits_soft_17=False,  # reading: 004 silent; standard stand on all 17s
    peek_up_points=(1, 10),  # 004 "If the dealer has blackjack ... player automatically loses"
    insurance=INSURANCE_UP_TO_HALF,  # 004 "an amount up to half his original bet"
    insurance_pays=(2, 1),  # 004 "this bet by the player pays off 2:1"
    insurance_is_player_option=False,
    even_money=False,  # 004 names no even money
    even_money_pays=(1, 1),
    max_hands=4,  # reading: 004 silent; three splits (four hands) as classic
    resplit_aces=False,
    split_aces_one_card=True,  # reading: standard; 21 on a split ace is not blackjack
    double_after_split=True,  # reading: 004 silent; allowed as classic
    win_pays=(1, 1),  # 004 "2:1 (as any normal win)": total return 2x = 1:1 net
    blackjack_pays=(3, 2),  # 004 "dealer hits anything below 21 ... paid 2.5:1" (total)
    blackjack_vs_dealer_21_pays=(1, 1),  # 004 "dealer hits 21 without a Blackjack ... 2:1"
    blackjack_waits_for_dealer=True,  # 004: the payout depends on the dealer's final hand
    tie_loses_totals=(17, 18, 19),  # 004 "both end up at 17, 18 or 19, the player loses"
    safety_net_available=False,
    min_table_bet=USDC // 2,  # 004 "ranging from 0.5 USDC to 500 USDC"
    max_table_bet=500 * USDC,
    default_min_bet=USDC // 2,
    default_max_bet=5_000 * USDC,  # 004 "Players can opt to bet higher than the minimum"
    betting_timeout_ms=30_000,  # reading: seats that have not bet in 30 s sit the round out
    insurance_timeout_ms=20_000,
    turn_timeout_ms=30_000,
    duel_timer_ms=0,
    fee_bps=(),
)

DUEL_RULES: Final = RuleSet(
    name="duel",
    version=1,
    kind=DUEL,
    decks=8,  # reading: 004 silent; the same 8-deck shoe
    min_seats=2,  # reading: a duel needs an opponent
    max_seats=8,  # 004 fee table goes to "6-8 players"
    max_boxes=1,
    hole_card_index=-1,  # no dealer
    dealer_hits_soft_17=False,
    peek_up_points=(),
    insurance=INSURANCE_NONE,  # 004 "Doubling, Insurance and Splits are not available"
    insurance_pays=(0, 1),
    insurance_is_player_option=False,
    even_money=False,
    even_money_pays=(0, 1),
    max_hands=1,  # 004 no splits
    resplit_aces=False,
    split_aces_one_card=False,
    double_after_split=False,
    win_pays=(0, 1),  # the pot is shared, see casino/engine/settle.py
    blackjack_pays=(0, 1),
    blackjack_vs_dealer_21_pays=(0, 1),
    blackjack_waits_for_dealer=False,
    tie_loses_totals=(),
    safety_net_available=False,
    min_table_bet=USDC // 2,  # 004 "ranging from 0.5 USDC to 500 USDC"
    max_table_bet=500 * USDC,
    default_min_bet=USDC // 2,
    default_max_bet=USDC // 2,
    betting_timeout_ms=0,  # 004 "all players betting the set limit": stakes are automatic
    insurance_timeout_ms=0,
    turn_timeout_ms=0,
    duel_timer_ms=30_000,  # 004 "A timer of 30 sec then starts"
    # 004 FEES: 2 = 3%, 3 = 2%, 4 = 1.5%, 5 = 1.2%, 6-8 = 1%
    fee_bps=((2, 300), (3, 200), (4, 150), (5, 120), (6, 100), (7, 100), (8, 100)),
)

RULESETS: Final[dict[str, RuleSet]] = {
    r.name: r for r in (CLASSIC, ATLANTIC_CITY, DUEL_RULES, DUEL_CLASSIC)
}
