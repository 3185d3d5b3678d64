"""The verifier's fast card check (`fairness.verify._cards_ok`) passes a round only where
`check_cards` finds nothing wrong, with its count: on sample rounds, and on cards, reveals,
receipts and shoe inputs tampered in every way a forger could (Hypothesis)."""

from __future__ import annotations

import copy
import hashlib
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairness import verify
from fairness.chain import create_chain
from fairness.checks import check_cards, check_event_chain
from fairness.receipt import private_key_from_hex
from fairness.sample import sample_bundle
from fairness.verify import KeyRing, load_engine_replay, verify_round

KEY = private_key_from_hex(hashlib.sha256(b"cards").hexdigest())
CHAIN = create_chain(8, head=hashlib.sha256(b"cards chain").hexdigest())
LINES = [
    sample_bundle(
        round_id=f"c{nonce}", server_seed=CHAIN.seed(nonce), client_seeds=seeds, nonce=nonce,
        private_key=KEY, ruleset=ruleset,
    )
    for seeds, ruleset in (
        (["alice"], "classic"), (["alice"], "atlantic_city"), (["a", "b", "c"], "duel_classic"),
        (["a", "b", "c"], "duel"), (["a", "b"], "duel"),
    )
    for nonce in range(1, 7)
]  # fmt: skip


def _card_events(line: dict[str, Any]) -> list[Any] | None:
    return check_event_chain(line["receipt"], line["events"], lambda _: None).card_events


def _slow(line: dict[str, Any]) -> tuple[list[str], int | str]:
    """check_cards' failures and count (or the exception verify_round would report)."""
    failures: list[str] = []
    try:
        count: int | str = check_cards(
            line["receipt"], line["events"], failures.append, _card_events(line)
        )
    except Exception as exc:
        count = type(exc).__name__
    return failures, count


def _assert_agrees(line: dict[str, Any]) -> bool:
    """_cards_ok gives a count only when check_cards passes with that count."""
    try:
        card_events = _card_events(line)
    except Exception:
        return False  # verify_round stops before the cards
    fast = verify._cards_ok(line["receipt"], card_events)
    failures, count = _slow(line)
    if fast is not None:
        assert failures == [] and count == fast
    return fast is not None


def test_sample_rounds_take_the_fast_check() -> None:
    for line in LINES:
        assert _assert_agrees(line)
        count = verify._cards_ok(line["receipt"], _card_events(line))
        assert count == len(line["receipt"]["cards"])


_VALUES: tuple[Any, ...] = (
    0,
    1,
    2,
    5,
    -1,
    416,
    True,
    False,
    None,
    "0",
    "AS",
    "KD",
    "5H",
    "ZZ",
    "",
    [],
    {},
)


@st.composite
def _tampered(draw: st.DrawFn) -> dict[str, Any]:
    line: dict[str, Any] = copy.deepcopy(draw(st.sampled_from(LINES)))
    receipt, events = line["receipt"], line["events"]
    how = draw(st.sampled_from(["card", "reveal", "receipt", "input", "event", "drop"]))
    cards = [e for e in events if e["type"].endswith("CardDealt")]
    if how == "card" and cards:
        data = draw(st.sampled_from(cards))["data"]
        key = draw(st.sampled_from(["position", "card"]))
        if draw(st.booleans()):
            data[key] = draw(st.sampled_from(_VALUES))
        else:
            del data[key]
    elif how == "reveal":
        shown = [
            item
            for e in events
            if e["type"] in ("HoleCardRevealed", "CardsRevealed")
            for item in ([e["data"]] if e["type"] == "HoleCardRevealed" else e["data"]["cards"])
        ]
        if shown:
            item = draw(st.sampled_from(shown))
            item[draw(st.sampled_from(["position", "card"]))] = draw(st.sampled_from(_VALUES))
    elif how == "receipt" and receipt["cards"]:
        k = draw(st.integers(0, len(receipt["cards"]) - 1))
        if draw(st.booleans()):
            receipt["cards"][k][draw(st.sampled_from(["position", "card"]))] = draw(
                st.sampled_from(_VALUES)
            )
        else:
            del receipt["cards"][k]
    elif how == "input":
        name = draw(st.sampled_from(["server_seed", "client_material", "nonce"]))
        receipt[name] = draw(
            st.sampled_from([*_VALUES, "a|b", "a||b", "x" * 65, "A" * 64, CHAIN.seed(1), 2**70])
        )
    elif how == "event" and cards:
        event = draw(st.sampled_from(cards))
        event["type"] = draw(
            st.sampled_from(["HoleCardRevealed", "CardsRevealed", "XCardDealt", "Other"])
        )
    elif cards:  # a dealt card dropped or repeated
        index = events.index(draw(st.sampled_from(cards)))
        if draw(st.booleans()):
            del events[index]
        else:
            events.insert(index, copy.deepcopy(events[index]))
    return line


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_tampered())
def test_tampered_cards_pass_only_where_check_cards_passes(line: dict[str, Any]) -> None:
    _assert_agrees(line)


@pytest.mark.parametrize("index", range(0, len(LINES), 3))
def test_verify_round_reports_alike_with_and_without_the_fast_check(
    index: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whole reports, on a sample round and on tampered copies of it."""
    replay = load_engine_replay()
    line = LINES[index]
    variants = [line]
    for position, card in ((0, "ZZ"), (1, True), (2, "AS")):
        tampered = copy.deepcopy(line)
        dealt = [e for e in tampered["events"] if e["type"].endswith("CardDealt")]
        dealt[position]["data"]["card" if isinstance(card, str) else "position"] = card
        variants.append(tampered)
    fast = [verify_round(v, KeyRing(), replay_check=replay) for v in variants]
    monkeypatch.setattr(verify, "_cards_ok", lambda receipt, events: None)
    slow = [verify_round(v, KeyRing(), replay_check=replay) for v in variants]
    assert fast == slow
    assert fast[0].ok and not any(r.ok for r in fast[1:])


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("nonce", 0),
        ("nonce", True),
        ("nonce", -3),
        ("server_seed", CHAIN.seed(1).upper()),
        ("server_seed", CHAIN.seed(1)[:-1] + "g"),
        ("client_material", "alice||bob"),
        ("client_material", "alice|" + "b" * 65),
        ("client_material", "al ice"),
    ],
)
def test_shoe_inputs_check_cards_refuses_are_refused(name: str, value: Any) -> None:
    """Inputs the shoe does not allow, with the cards dealt as that shoe would deal them:
    check_cards refuses the inputs, and so does the fast check."""
    from fairness.shoe import first_cards

    line = copy.deepcopy(LINES[0])
    receipt = line["receipt"]
    receipt[name] = value
    dealt = [e["data"] for e in line["events"] if e["type"].endswith("CardDealt")]
    shoe = first_cards(receipt["server_seed"], receipt["client_material"], receipt["nonce"], 9)
    for data, card in zip(dealt, shoe, strict=False):
        data["card"] = card
    receipt["cards"] = [{"position": d["position"], "card": d["card"]} for d in dealt]
    for event in line["events"]:
        if event["type"] == "HoleCardRevealed":
            event["data"]["card"] = dealt[event["data"]["position"]]["card"]
    failures, _ = _slow(line)
    assert failures and failures[0].startswith("cards: cannot rebuild the shoe")
    assert verify._cards_ok(receipt, _card_events(line)) is None
    receipt[name] = LINES[0]["receipt"][name]  # the same cards under the real inputs fail too
    assert _slow(line)[0]
