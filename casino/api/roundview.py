"""The OpenAPI description of a round view: what a player sees of a round, as
`casino.rounds.publish.round_view_out(casino.engine.views.view(state, viewer))` gives it.

These serializers only describe: the view is built by the engine and its amounts printed by
`round_view_out`; `RoundViewField` is the field that answers carry it in.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field, extend_schema_serializer
from rest_framework import serializers

from casino.engine.views import ACTIONS
from casino.rounds.publish import round_view_out

PHASES = ["betting", "insurance", "playing", "dueling", "beacon", "settled", "voided"]
HAND_STATUSES = ["open", "stood", "bust", "blackjack", "even_money"]
INSURANCE_STATUSES = ["", "offered", "even_money_offered", "taken", "declined", "even_money"]
OUTCOMES = ["win", "lose", "push", "blackjack", "bust", "even_money"]


@extend_schema_field(
    {
        "type": "string",
        "pattern": r"^-?(0|[1-9][0-9]*)\.[0-9]{6}$",
        "example": "10.000000",
        "description": "USDC, a decimal string with exactly 6 places",
    }
)
class UsdcField(serializers.Field[Any, Any, str, Any]):
    """An amount already printed by `round_view_out` (documentation only)."""

    def to_representation(self, value: Any) -> Any:
        return value


def _usdc(help_text: str, **kwargs: Any) -> UsdcField:
    return UsdcField(help_text=help_text, **kwargs)


@extend_schema_serializer(component_name="RoundCard")
class CardOut(serializers.Serializer[Any]):
    card = serializers.CharField(
        required=False, help_text='rank and suit, e.g. "TS" (absent while face down)'
    )
    position = serializers.IntegerField(
        required=False, help_text="its place in the shoe (absent while face down)"
    )
    hidden = serializers.BooleanField(
        required=False, help_text="true for a card you may not see yet (face down)"
    )


@extend_schema_serializer(component_name="RoundHand")
class HandOut(serializers.Serializer[Any]):
    cards = CardOut(many=True)
    card_count = serializers.IntegerField()
    total = serializers.IntegerField(
        allow_null=True, help_text="the hand's value; null while one of its cards is hidden"
    )
    soft = serializers.BooleanField(
        allow_null=True, help_text="an ace counted as 11; null while a card is hidden"
    )
    stake = _usdc("what this hand has at stake (doubled: twice the bet)")
    status = serializers.ChoiceField(
        choices=HAND_STATUSES, allow_null=True, help_text="null while a card is hidden"
    )
    doubled = serializers.BooleanField()
    split = serializers.BooleanField(help_text="this hand came from a split")


@extend_schema_serializer(component_name="RoundBox")
class BoxOut(serializers.Serializer[Any]):
    player_id = serializers.CharField()
    box = serializers.IntegerField(help_text="the betting box (0 is the first)")
    bet = _usdc("the bet on this box")
    insurance = _usdc("the insurance taken on this box (0.000000 if none)")
    insurance_status = serializers.ChoiceField(
        choices=INSURANCE_STATUSES,
        allow_blank=True,
        help_text='"offered": insurance is on offer; "even_money_offered": your blackjack '
        'may take even money; "" when the dealer shows no ace',
    )
    hands = HandOut(many=True, help_text="one hand, or more after a split")


@extend_schema_serializer(component_name="RoundParticipant")
class ParticipantOut(serializers.Serializer[Any]):
    player_id = serializers.CharField()
    seat = serializers.IntegerField()
    client_seed = serializers.CharField(help_text="this player's seed, mixed into the shuffle")


@extend_schema_serializer(component_name="RoundLimits")
class OptionsOut(serializers.Serializer[Any]):
    min_bet = _usdc("the smallest bet per box")
    max_bet = _usdc("the largest bet per box")
    chip_unit = _usdc("bets are whole multiples of this")
    stake = _usdc("duel: the fixed stake of every player")


@extend_schema_serializer(component_name="RoundMyOptions")
class MyOptionsOut(serializers.Serializer[Any]):
    offer_insurance = serializers.BooleanField(help_text="you are offered insurance")
    safety_net = serializers.BooleanField(help_text="a risky hit asks you to confirm it")


@extend_schema_serializer(component_name="RoundDealer")
class DealerOut(serializers.Serializer[Any]):
    cards = CardOut(many=True)
    total = serializers.IntegerField(
        allow_null=True, help_text="the dealer's value; null while the hole card is face down"
    )
    blackjack = serializers.BooleanField(
        allow_null=True, help_text="the dealer has blackjack; null while insurance is on offer"
    )


@extend_schema_serializer(component_name="RoundTurn")
class TurnOut(serializers.Serializer[Any]):
    player_id = serializers.CharField(help_text="whose turn it is")
    box = serializers.IntegerField()
    hand = serializers.IntegerField(help_text="which hand of the box (after a split)")


@extend_schema_serializer(component_name="RoundHandResult")
class HandResultOut(serializers.Serializer[Any]):
    player_id = serializers.CharField()
    box = serializers.IntegerField()
    hand = serializers.IntegerField()
    outcome = serializers.ChoiceField(choices=OUTCOMES)
    stake = _usdc("what the hand had at stake")
    gross_return = _usdc("what the hand handed back, its stake included (0.000000 if lost)")
    total = serializers.IntegerField(help_text="the hand's final value (22 or more: bust)")


@extend_schema_serializer(component_name="RoundInsuranceResult")
class InsuranceResultOut(serializers.Serializer[Any]):
    player_id = serializers.CharField()
    box = serializers.IntegerField()
    stake = _usdc("the insurance taken")
    gross_return = _usdc("what it paid back, its stake included (0.000000 if lost)")


@extend_schema_serializer(component_name="RoundSettlement")
class SettlementOut(serializers.Serializer[Any]):
    type = serializers.CharField(help_text='"RoundSettled"')
    hands = HandResultOut(many=True)
    insurance = InsuranceResultOut(many=True)
    fee = _usdc("duel: the house's fee taken from the pot")
    dealer_total = serializers.IntegerField(help_text="the dealer's final value (0 in a duel)")
    settled_at_ms = serializers.IntegerField()


@extend_schema_serializer(component_name="RoundPlayerAmount")
class PlayerAmountOut(serializers.Serializer[Any]):
    player_id = serializers.CharField()
    amount = _usdc("the amount")


@extend_schema_serializer(component_name="RoundVoid")
class VoidOut(serializers.Serializer[Any]):
    type = serializers.CharField(help_text='"RoundVoided"')
    reason = serializers.CharField(help_text="why the round was called off")
    evidence = serializers.CharField()
    refunds = PlayerAmountOut(many=True, help_text="every stake handed back, per player")
    reversed_payouts = PlayerAmountOut(
        many=True, help_text="winnings taken back (a round called off after it was paid)"
    )
    reversed_fee = _usdc("the fee handed back")
    was_settled = serializers.BooleanField(help_text="the round had been paid before")
    voided_at_ms = serializers.IntegerField()


@extend_schema_serializer(component_name="RoundBeacon")
class BeaconOut(serializers.Serializer[Any]):
    name = serializers.CharField(help_text="the beacon's name (GET /api/fairness/beacon)")
    public_key = serializers.CharField(help_text="the key its rounds are signed with")
    round = serializers.IntegerField(
        allow_null=True, help_text="the beacon round the deal waits for; null until betting closes"
    )
    round_time = serializers.IntegerField(
        allow_null=True, help_text="when that round is published (Unix seconds), or null"
    )


@extend_schema_serializer(component_name="RoundView")
class RoundView(serializers.Serializer[Any]):
    """A round as you may see it. Cards you may not see yet (the dealer's face-down card, in a
    duel the other players' cards after their first) are `{"hidden": true}`, and what they
    would give away (a hand's total and status, the server seed) is null until revealed."""

    round_id = serializers.CharField()
    table_id = serializers.CharField()
    ruleset = serializers.CharField(help_text="classic, atlantic_city, duel_classic or duel")
    ruleset_hash = serializers.CharField(help_text="fingerprint of the exact rules played")
    chain_id = serializers.CharField(help_text="the seed chain this round's seed comes from")
    nonce = serializers.IntegerField(help_text="this round's number in the seed chain")
    commitment = serializers.CharField(help_text="hash of the server seed, published in advance")
    phase = serializers.ChoiceField(choices=PHASES)
    participants = ParticipantOut(many=True)
    options = OptionsOut(help_text="the table's limits for this round")
    client_material = serializers.CharField(
        allow_blank=True, help_text="everyone's client seeds, once betting closed"
    )
    deadline_ms = serializers.IntegerField(
        allow_null=True, help_text="when the current timer runs out (ms since 1970), or null"
    )
    boxes = BoxOut(many=True)
    turn = TurnOut(allow_null=True, help_text="the hand that must act now, or null")
    server_seed = serializers.CharField(
        allow_null=True, help_text="revealed once the round ended, to verify the shuffle"
    )
    settlement = SettlementOut(allow_null=True, help_text="the results, once settled")
    voided = VoidOut(allow_null=True, help_text="why and how the round was called off")
    actions = serializers.ListField(
        child=serializers.ChoiceField(choices=list(ACTIONS)),
        help_text="what you may send now: deal, insurance, even_money, hit, stand, double, "
        "split (empty when nothing waits for you, and for spectators)",
    )
    my_options = MyOptionsOut(required=False, help_text="your options in this round")
    dealer = DealerOut(required=False, help_text="the dealer's hand (not in a duel)")
    beacon = BeaconOut(
        required=False,
        help_text="shared tables (duel, duel_classic): the public randomness the deal waits for",
    )


@extend_schema_field(RoundView)
class RoundViewField(serializers.Field[Any, Any, dict[str, Any], Any]):
    """A round view, its amounts printed as USDC strings (`round_view_out`)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs["read_only"] = True
        super().__init__(**kwargs)

    def to_representation(self, value: Any) -> dict[str, Any]:
        return round_view_out(value)
