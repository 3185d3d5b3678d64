"""The audit's reads: the JSON page decoder (msgspec first, the standard library for what it
refuses) gives the standard library's values and float verdict; the ledger nets read as one
raw statement equal the ORM query they replace, and a changed posting is reported."""

from __future__ import annotations

import io
import json
import re
from collections import defaultdict
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.models import Sum

from casino.engine.events import EVENT_TYPES
from casino.engine.money import MONEY_EVENTS, NO_MONEY_EVENTS, ledger_legs
from casino.eventstore import store
from casino.eventstore.store import FAST_ROW_LIMIT, decode_json_page
from casino.rounds.money import _abstract_account, recorded_nets_many
from casino.tables.play import play
from fairness.replay import load_decoders
from ledger.management.commands.flush import triggers_suspended
from ledger.models import Posting
from ledger.rounds import round_reference


class _Float(ValueError):
    pass


def _refuse(text: str) -> Any:
    raise _Float(text)


def stdlib_page(texts: list[str]) -> tuple[list[Any], bool]:
    """The reference: each text by the standard library, float-free unless one holds a float."""
    page = "[" + ",".join(texts) + "]"
    try:
        return json.loads(page, parse_float=_refuse, parse_constant=_refuse), True
    except _Float:
        return json.loads(page), False


PAGES = [
    ['{"a": 1}', '{"b": [1, 2, {"c": null}]}', "true", '"x"'],
    ['{"amount": 12345678901234567890123456789}', '{"n": -9223372036854775809}'],
    ['{"a": 1, "a": 2}', '{"k": "\\u00e9\\n\\/"}', '{"e": "\\ud83d\\ude00"}'],
    ['{"amount": 1.0}', '{"b": 2}'],  # a float: the standard library's path, not float-free
    ['{"amount": 1e3}'],
    ['{"amount": -0.0}'],
    ['{"x": NaN}'],  # msgspec refuses NaN; the standard library parses it as a float
    ['{"x": Infinity}'],
    ['{"s": "\\udc00"}'],  # an escaped lone surrogate: msgspec refuses, stdlib keeps it
    ['{"a": 0}', "[]", "{}", '""'],
    [],
]


def test_msgspec_is_installed() -> None:
    assert store._FAST_PAGE is not None  # a dependency (requirements.txt): the fast path runs


@pytest.mark.parametrize("texts", PAGES)
def test_a_page_decodes_as_the_standard_library_decodes_it(texts: list[str]) -> None:
    got, float_free = decode_json_page(texts)
    want, want_free = stdlib_page(texts)
    assert float_free == want_free
    assert json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True)
    assert [type(v) for v in got] == [type(v) for v in want]


def test_malformed_pages_raise_the_standard_library_error() -> None:
    for texts in (['{"a": 1'], ["[01]"], ['{"a": 1} x'], ['"\x01"']):
        with pytest.raises(json.JSONDecodeError):
            decode_json_page(texts)


def test_deeply_nested_rows_are_left_to_the_standard_library() -> None:
    # Nesting near Python's recursion limit: both parsers' verdicts would differ by a few
    # levels, so such a row never reaches msgspec and the standard library's error stands.
    deep = "[" * 5000 + "]" * 5000
    with pytest.raises(RecursionError):
        decode_json_page([deep])
    nested = "[" * (FAST_ROW_LIMIT + 1) + "]" * (FAST_ROW_LIMIT + 1)
    assert decode_json_page([nested, "1"]) == stdlib_page([nested, "1"])
    wide = json.dumps({"k": ["x" * 40] * 100})  # long, shallow: still msgspec
    assert decode_json_page([wide]) == stdlib_page([wide])


def test_no_money_events_are_every_other_event_type() -> None:
    assert set(EVENT_TYPES.values()) == MONEY_EVENTS | NO_MONEY_EVENTS
    assert not MONEY_EVENTS & NO_MONEY_EVENTS


@pytest.mark.django_db
def test_ledger_legs_of_no_money_events_are_empty() -> None:
    from casino.eventstore.store import load_bundle_events

    decoders = load_decoders()
    assert decoders is not None
    seen = set()
    tables = (("classic", 1), ("atlantic_city", 1), ("duel_classic", 3), ("duel", 3))
    for ruleset, players in tables:
        ids = play(ruleset=ruleset, rounds=4, players=players, seed=5).round_ids
        read = load_bundle_events(ids)
        for i in ids:
            for stored, data in zip(read.events[i], read.current[i], strict=True):
                event = decoders[stored["type"]](data)
                if type(event) in NO_MONEY_EVENTS:
                    seen.add(type(event))
                    assert ledger_legs(event) == []
    assert len(seen) >= 8


def orm_nets(round_ids: list[str]) -> dict[str, dict[str, int]]:
    """recorded_nets_many as it was: the ORM query."""
    references = {round_reference(round_id): round_id for round_id in round_ids}
    rows = (
        Posting.objects.filter(entry__reference__in=list(references))
        .values("entry__reference", "account__type", "account__owner_id")
        .annotate(net=Sum("amount"))
    )
    nets: dict[str, dict[str, int]] = {round_id: defaultdict(int) for round_id in round_ids}
    for row in rows:
        account = _abstract_account(row["account__type"], row["account__owner_id"])
        nets[references[row["entry__reference"]]][account] += row["net"]
    return {r: {a: n for a, n in per.items() if n} for r, per in nets.items()}


@pytest.mark.django_db
def test_recorded_nets_equal_the_orm_query_and_a_changed_posting_is_reported() -> None:
    ids = [
        *play(ruleset="duel_classic", rounds=3, players=3, seed=7).round_ids,
        *play(ruleset="duel", rounds=3, players=3, seed=7).round_ids,
    ]
    nets = recorded_nets_many([*ids, "no-such-round"])
    assert nets == orm_nets([*ids, "no-such-round"])
    assert nets["no-such-round"] == {}
    assert all(nets[i] for i in ids)
    assert recorded_nets_many([]) == {}

    # 10,000 micro-USDC moved between two postings of one entry (the entry stays balanced).
    postings = list(Posting.objects.filter(entry__reference=round_reference(ids[0])))
    first = postings[0]
    other = next(p for p in postings if p.entry_id == first.entry_id and p.pk != first.pk)
    with triggers_suspended(connection), connection.cursor() as cursor:
        for pk, delta in ((first.pk, 10000), (other.pk, -10000)):
            cursor.execute(
                f"UPDATE {Posting._meta.db_table} SET amount = amount + %s WHERE id = %s",
                [delta, pk],
            )
    assert recorded_nets_many(ids) == orm_nets(ids)
    out = io.StringIO()
    with pytest.raises(SystemExit):
        call_command("audit", "--json", "--round", ids[0], stdout=out)
    problems = json.loads(out.getvalue())["problems"][0]["problems"]
    legs = [p for p in problems if p.startswith("ledger legs: ")]
    assert legs and all(
        re.search(r"net -?\d+\.\d{6} USDC .*has -?\d+\.\d{6} USDC$", p) for p in legs
    )
