"""Regenerate the golden event streams: `.venv/bin/python -m tests.engine.golden.regenerate`.

Only on a deliberate rule change (or a deliberate change to the events): the golden files
are the event contract. tests/engine/test_golden.py replays every recorded command through
today's engine and requires the same events, field for field and in order (or the same
refusal); a change to the engine that moves any of them is a change to the contract. After
regenerating, review the diff: each changed line is a command whose answer changed.

Each rule set's file keeps a few rounds that together cover its branches: chosen greedily
from seeded random command scripts (a pair- and ace-rich stacked shoe, or FastShoe), the
round that adds the most branches not yet covered first (splits, re-splits, split aces,
doubles, insurance and even money, peeks, busts, naturals, pushes, timeouts, voids, the seed
reveal, refusals), plus two rounds played by the basic-strategy bots.
"""

from __future__ import annotations

import random
from typing import Any

from casino.engine.bots import bot_command
from casino.engine.cards import CARD_POINTS
from casino.engine.commands import (
    Command,
    DeclineInsurance,
    Double,
    Hit,
    PlaceBet,
    RevealSeed,
    Split,
    Stand,
    TakeEvenMoney,
    TakeInsurance,
    Timeout,
    VoidRound,
)
from casino.engine.evolve import RoundState
from casino.engine.rules import DUEL, RULESETS
from casino.engine.shoe import FastShoe, Shoe

from ..helpers import SERVER_SEED, usdc
from .codec import GOLDEN, command_to_dict, dump, opening, run_step, shoe_from

CANDIDATES = 600  # random scripts tried per rule set
MAX_SCENARIOS = 14  # chosen per rule set (besides the bot rounds)
SMALL_DECK = ["AS", "AH", "8S", "8D", "TS", "KH", "5C", "6D", "9C", "2H"]


def _shoe_spec(rng: random.Random) -> dict[str, Any]:
    if rng.random() < 0.7:  # pairs and aces: splits, insurance, even money come up often
        return {"stacked": [rng.choice(SMALL_DECK) for _ in range(80)]}
    return {"fast": rng.randrange(2**32)}


def _shoe(spec: dict[str, Any]) -> Shoe:
    """The shoe a round is played on: {"fast": seed} is a FastShoe (kept as the cards it
    dealt, `_kept`), a stacked spec its StackedShoe."""
    return FastShoe(spec["fast"]) if "fast" in spec else shoe_from(spec)


def _kept(spec: dict[str, Any], shoe: Shoe, state: RoundState) -> dict[str, Any]:
    """The spec the file keeps: a FastShoe's dealt cards, stacked (the files hold no card
    generator, so a change to FastShoe leaves them alone)."""
    if "fast" not in spec:
        return spec
    return {"stacked": [shoe.card_at(i) for i in range(state.next_position)]}


def _candidates(state: RoundState, players: int, rng: random.Random) -> list[Command]:
    ids = [f"p{i + 1}" for i in range(players)]
    pid = rng.choice(ids)
    amount = usdc(rng.choice([1, 2.5, 10, 50]))
    if state.phase == "betting":
        waiting = [p for p in ids if all(b.player_id != p for b in state.boxes)] or ids
        bettor = rng.choice(waiting)
        boxes = rng.randint(1, state.rules.max_boxes)
        return [PlaceBet(bettor, (amount,) * boxes)] * 3 + [PlaceBet(bettor, (amount,)), Timeout()]
    if state.phase == "insurance":
        offered = [b for b in state.boxes if b.insurance_status.endswith("offered")]
        box = rng.choice(offered) if offered else state.boxes[0]
        if box.insurance_status == "even_money_offered":
            return [TakeEvenMoney(box.player_id, box.box)] * 3 + [
                TakeInsurance(box.player_id, box.box),
                DeclineInsurance(box.player_id, box.box),
                Timeout(),
            ]
        return [
            TakeInsurance(box.player_id, box.box, rng.choice([None, box.bet // 2])),
            DeclineInsurance(box.player_id, box.box),
            TakeEvenMoney(box.player_id, box.box),
            Timeout(),
        ]
    actor = state.boxes[state.turn].player_id if state.turn >= 0 else pid
    commands: list[Command] = [
        Hit(actor, confirm=rng.random() < 0.7),
        Stand(actor),
        Double(actor),
        Split(actor),
        Hit(pid),
        Timeout(),
        RevealSeed(SERVER_SEED),
    ]
    if rng.random() < 0.04:
        commands.append(VoidRound("malfunction", "golden"))
    if state.turn >= 0:
        hand = state.boxes[state.turn].hands[state.turn_hand]
        if len(hand.cards) == 2 and CARD_POINTS[hand.cards[0]] == CARD_POINTS[hand.cards[1]]:
            commands += [Split(actor)] * 4  # favour splitting pairs so re-splits come up
    return commands


def _tags(steps: list[dict[str, Any]], state: RoundState) -> set[str]:
    """The branches a recorded round went through."""
    tags: set[str] = set()
    for s in steps:
        if "error" in s:
            tags.add("refused:" + s["error"])
        for e in s.get("events", []):
            kind = e["type"]
            tags.add(kind)
            if kind == "DealerPeeked":
                tags.add(f"peek:{e['blackjack']}")
            elif kind in ("PlayerStood", "InsuranceDeclined") and e["auto"]:
                tags.add(f"timeout:{kind}")
            elif kind == "RoundVoided":
                tags.add(f"void:{e['reason']}:{'settled' if e['was_settled'] else 'open'}")
            elif kind == "RoundSettled":
                tags.update(f"outcome:{h['outcome']}" for h in e["hands"])
                tags.update("insurance_paid" for i in e["insurance"] if i["gross_return"])
                if e["dealer_total"] > 21:
                    tags.add("dealer_bust")
    for box in state.boxes:
        if len(box.hands) > 2:
            tags.add("resplit")
        for hand in box.hands:
            if hand.split_aces:
                tags.add("split_aces")
            if hand.split and hand.doubled:
                tags.add("double_after_split")
            if hand.total > 21:
                tags.add("player_bust")
    if len(state.boxes) > len({b.player_id for b in state.boxes}):
        tags.add("several_boxes")
    return tags


def _random_round(name: str, rng: random.Random) -> dict[str, Any]:
    rules = RULESETS[name]
    players = rng.randint(rules.min_seats, min(rules.max_seats, 3))
    stake = usdc(1) if rules.kind == DUEL else 0
    spec = _shoe_spec(rng)
    shoe = _shoe(spec)
    now = 0
    command: Command = opening(name, players, stake)
    steps = []
    answer, state = run_step(None, command, now, shoe)
    steps.append({"at": now, "command": command_to_dict(command), **answer})
    for _ in range(rng.randint(4, 30)):
        assert state is not None
        now += rng.choice([0, 0, 0, 1, 90_000])
        command = rng.choice(_candidates(state, players, rng))
        answer, after = run_step(state, command, now, shoe)
        if answer.get("error") == "deadline_passed":  # the service applies the timeout first
            command = Timeout()
            answer, after = run_step(state, command, now, shoe)
        steps.append({"at": now, "command": command_to_dict(command), **answer})
        state = after
    assert state is not None
    return {"ruleset": name, "players": players, "stake": stake,
            "shoe": _kept(spec, shoe, state), "steps": steps, "_state": state}  # fmt: skip


def _bot_round(name: str, seed: int) -> dict[str, Any]:
    rules = RULESETS[name]
    players = min(max(2, rules.min_seats), rules.max_seats)
    stake = usdc(1) if rules.kind == DUEL else 0
    spec = {"fast": seed}
    shoe = _shoe(spec)
    command: Command = opening(name, players, stake)
    answer, state = run_step(None, command, 0, shoe)
    steps = [{"at": 0, "command": command_to_dict(command), **answer}]
    while state is not None and not state.finished:
        for p in state.opened.participants:
            bets = (state.opened.options.min_bet,) * min(2, rules.max_boxes)
            bot = bot_command(state, p.player_id, bets)
            if bot is not None:
                break
        assert bot is not None, state.phase
        answer, state = run_step(state, bot, 0, shoe)
        assert "error" not in answer, answer
        steps.append({"at": 0, "command": command_to_dict(bot), **answer})
    assert state is not None
    return {"ruleset": name, "players": players, "stake": stake,
            "shoe": _kept(spec, shoe, state), "steps": steps}  # fmt: skip


def choose(name: str) -> list[dict[str, Any]]:
    """The bot rounds, then the random rounds that together cover the most branches."""
    rng = random.Random(f"golden:{name}")
    pool = []
    for _ in range(CANDIDATES):
        scenario = _random_round(name, rng)
        pool.append((_tags(scenario["steps"], scenario.pop("_state")), scenario))
    chosen: list[dict[str, Any]] = [_bot_round(name, seed) for seed in (1, 2)]
    covered: set[str] = set()
    while pool and len(chosen) < MAX_SCENARIOS + 2:
        gain, index = max((len(tags - covered), -i) for i, (tags, _) in enumerate(pool))
        if gain == 0:
            break
        tags, scenario = pool.pop(-index)
        covered |= tags
        scenario["covers"] = sorted(tags)
        chosen.append(scenario)
    return chosen


def main() -> None:
    for name in sorted(RULESETS):
        scenarios = choose(name)
        path = GOLDEN / f"{name}.json"
        dump(path, scenarios)
        print(f"{path.name}: {len(scenarios)} rounds, {path.stat().st_size // 1024} KB")


if __name__ == "__main__":
    main()
