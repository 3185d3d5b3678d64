"""Money at the game API's edge: USDC as a decimal string with exactly 6 places.

The engine, the events and the ledger keep integer micro-USDC (1 USDC = 1,000,000). Every
response and WebSocket message prints an amount with `ledger.money.format_amount`
(`1000000` -> `"1.000000"`); requests take a decimal string with at most 6 places
(`ledger.money.parse_amount`). A JSON number is never money. `round_view_out` is the one
conversion of a round view (`casino.engine.views.view`) for a client: REST answers, command
results, pushes and the recall list all pass through it. The fairness bundle and the
verifier keep their integer micro-USDC (their own spec).
"""

from __future__ import annotations

from typing import Any, Final

from casino.platform.errors import ApplicationError
from ledger.money import format_amount, parse_amount

# The money keys of a round view, by where they sit.
BOX_MONEY: Final = ("bet", "insurance")
HAND_MONEY: Final = ("stake",)
OPTIONS_MONEY: Final = ("min_bet", "max_bet", "chip_unit", "stake")
RESULT_MONEY: Final = ("stake", "gross_return")  # settlement.hands[], settlement.insurance[]
SETTLEMENT_MONEY: Final = ("fee",)
VOID_MONEY: Final = ("reversed_fee",)
VOID_LISTS: Final = ("refunds", "reversed_payouts")  # [{"player_id", "amount"}]


def usdc(value: Any) -> Any:
    """An int of micro-USDC as its 6-place string; anything else (None) as it is."""
    if type(value) is int:
        return format_amount(value)
    return value


def usdc_any(value: Any) -> Any:
    """An amount given as micro-USDC or as a decimal string, printed with 6 places (a string
    that is no amount, or None, stays as it is)."""
    if type(value) is str:
        try:
            return format_amount(parse_amount(value, allow_zero=True))
        except ApplicationError:  # not an amount this edge would take: shown as it came
            return value
    return usdc(value)


def _amounts(item: Any, keys: tuple[str, ...]) -> Any:
    if not isinstance(item, dict):
        return item
    out = dict(item)
    for key in keys:
        if key in out:
            out[key] = usdc(out[key])
    return out


def _each(items: Any, keys: tuple[str, ...]) -> Any:
    if not isinstance(items, list):
        return items
    return [_amounts(item, keys) for item in items]


def round_view_out(view: dict[Any, Any]) -> dict[str, Any]:
    """A round view for a client: the same keys, every amount a 6-place USDC string."""
    out = {str(key): value for key, value in view.items()}
    boxes = out.get("boxes")
    if isinstance(boxes, list):
        shown = []
        for box in boxes:
            box = _amounts(box, BOX_MONEY)
            if isinstance(box, dict) and "hands" in box:
                box["hands"] = _each(box["hands"], HAND_MONEY)
            shown.append(box)
        out["boxes"] = shown
    if "options" in out:
        out["options"] = _amounts(out["options"], OPTIONS_MONEY)
    settlement = out.get("settlement")
    if isinstance(settlement, dict):
        settlement = _amounts(settlement, SETTLEMENT_MONEY)
        for key in ("hands", "insurance"):
            if key in settlement:
                settlement[key] = _each(settlement[key], RESULT_MONEY)
        out["settlement"] = settlement
    voided = out.get("voided")
    if isinstance(voided, dict):
        voided = _amounts(voided, VOID_MONEY)
        for key in VOID_LISTS:
            if key in voided:
                voided[key] = _each(voided[key], ("amount",))
        out["voided"] = voided
    return out
