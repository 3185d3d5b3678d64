"""Table services: the demo tables (and, with the live tables, staff creation and seating)."""

from __future__ import annotations

from casino.engine.rules import DUEL, RULESETS
from casino.models import Table, TableStatus


def demo_table(ruleset: str) -> Table:
    """The open shared table of a rule set, created with the rule set's defaults if missing."""
    rules = RULESETS[ruleset]
    name = f"{ruleset.replace('_', ' ').title()} demo"
    table = Table.objects.filter(ruleset=ruleset, owner=None, status=TableStatus.OPEN).first()
    if table is not None:
        return table
    table, _ = Table.objects.get_or_create(
        name=name,
        ruleset=ruleset,
        owner=None,
        defaults={
            "min_bet": rules.default_min_bet,
            "max_bet": rules.default_max_bet,
            "stake": rules.default_min_bet if rules.kind == DUEL else 0,
            "seats": rules.max_seats,
        },
    )
    return table
