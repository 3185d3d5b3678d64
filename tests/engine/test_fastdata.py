"""fastdata: the cheaper __init__ and the interned constructors give the classes' own values."""

from __future__ import annotations

import dataclasses

import pytest

from casino.engine.events import PlayerCardDealt, event_to_dict, new_player_card
from casino.engine.fastdata import interned


def test_an_interned_event_equals_the_one_the_class_builds_and_stays_frozen() -> None:
    made = new_player_card(3, "TS", "p0", 0, 1, True)
    built = PlayerCardDealt(3, "TS", "p0", 0, 1, True)
    assert type(made) is PlayerCardDealt
    assert made == built and hash(made) == hash(built)
    assert event_to_dict(made) == event_to_dict(built)
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.card = "AS"  # type: ignore[misc]


def test_equal_fields_give_the_same_instance_and_other_fields_another() -> None:
    first = new_player_card(4, "AS", "p1", 0, 0, False)
    assert new_player_card(4, "AS", "p1", 0, 0, False) is first
    by_name = new_player_card(position=4, card="AS", player_id="p1", box=0, hand=0, hidden=False)
    assert by_name is first
    other = new_player_card(4, "AS", "p1", 0, 0, True)
    assert other.hidden and not first.hidden


def test_the_memo_starts_over_when_full() -> None:
    make = interned(PlayerCardDealt, limit=2)
    a = make(0, "AS", "p0", 0, 0, False)
    make(1, "2S", "p0", 0, 0, False)
    make(2, "3S", "p0", 0, 0, False)  # full: emptied, then this one kept
    again = make(0, "AS", "p0", 0, 0, False)
    assert again == a and again is not a
