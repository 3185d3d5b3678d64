"""The RTP simulator: determinism, worker independence, sane figures, both shoes."""

from __future__ import annotations

import gc
import hashlib
import json
from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from casino.engine.commands import OpenRound, PlaceBet
from casino.engine.events import Participant, RoundOptions
from casino.engine.rules import RULESETS, USDC
from casino.engine.shoe import FastShoe, StackedShoe
from casino.engine.simulator import (
    SimulationConfig,
    play_banked_round,
    run_chunk,
    simulate,
    summarize,
)
from casino.platform.progress import ProgressBar

TIMING = ("rounds_per_s", "rounds_per_s_per_worker", "elapsed_s", "workers")


def _figures(report: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in report.items() if k not in TIMING}


def test_same_seed_same_figures_for_any_worker_count() -> None:
    config = SimulationConfig("atlantic_city", 1_200, seed=7, chunk_rounds=300)
    one = simulate(config, workers=1)
    two = simulate(config, workers=2)
    assert two["workers"] == 2
    assert _figures(one) == _figures(two)
    assert one["rounds"] == 1_200


@pytest.mark.parametrize("ruleset", sorted(RULESETS))
def test_a_chunk_leaves_no_cycle_and_resumes_the_collector(ruleset: str) -> None:
    """run_chunk pauses the cyclic collector because its rounds make no reference cycle:
    nothing is left for the collector, and it runs again afterwards (and stays off if it
    was off)."""
    gc.collect()
    gc.disable()
    try:
        run_chunk(SimulationConfig(ruleset, 300, seed=3, chunk_rounds=300), 0)
        assert gc.collect() == 0
        assert not gc.isenabled()
    finally:
        gc.enable()
    run_chunk(SimulationConfig(ruleset, 10, seed=3, chunk_rounds=10), 0)
    assert gc.isenabled()


def test_different_seeds_give_different_rounds() -> None:
    a = simulate(SimulationConfig("classic", 600, seed=1))
    b = simulate(SimulationConfig("classic", 600, seed=2))
    assert a["rtp"] != b["rtp"]


def test_atlantic_city_figures_are_in_range() -> None:
    report = simulate(SimulationConfig("atlantic_city", 4_000, seed=11))
    lo95, hi95 = report["ci95"]
    lo99, hi99 = report["ci99"]
    assert lo99 < lo95 < report["rtp"] < hi95 < hi99
    # 4,000 rounds: standard error ~1.8%; the seed's 99.51% must sit inside the 99% interval.
    assert lo99 < 0.9951 < hi99
    assert 0.012 < report["stderr"] < 0.025
    # Basic strategy never insures; an ace shows on ~7.7% of rounds.
    assert report["insurance_taken_rate"] == 0.0
    assert 0.06 < report["insurance_offered_rate"] < 0.095
    assert 0.035 < report["blackjack_rate"] < 0.06  # naturals: 4.75% of hands
    assert 0.035 < report["dealer_blackjack_rate"] < 0.06
    assert 0.08 < report["double_rate"] < 0.13
    assert 0.01 < report["split_rate"] < 0.04
    assert 1.08 < report["average_wager"] < 1.18


def test_duel_pays_out_the_pot_less_the_fee() -> None:
    report = simulate(SimulationConfig("duel", 800, seed=3, players=3))
    assert report["players"] == 3
    assert report["fee_take"] == pytest.approx(0.02)
    assert report["rtp"] == pytest.approx(0.98)  # 1 USDC stakes: the fee is exact
    seats = report["per_player_rtp"]
    assert len(seats) == 3
    assert sum(s["rtp"] for s in seats) / 3 == pytest.approx(0.98)
    assert all(0.8 < s["rtp"] < 1.15 for s in seats)


def test_duel_strategy_threshold_changes_play() -> None:
    cautious = simulate(SimulationConfig("duel", 600, seed=5, duel_hit_until=11))
    default = simulate(SimulationConfig("duel", 600, seed=5))
    assert cautious["bust_rate"] < default["bust_rate"]


def test_fair_shoe_runs_and_is_deterministic() -> None:
    config = SimulationConfig("atlantic_city", 400, seed=9, shoe="fair")
    first = run_chunk(config, 0)
    assert first == run_chunk(config, 0)
    assert first["tally"]["rounds"] == 400
    fast = run_chunk(SimulationConfig("atlantic_city", 400, seed=9), 0)
    assert first != fast


def test_fair_rounds_deal_the_fair_shoe() -> None:
    # The fair run's round n deals FairShoe(sha256("simulate:<seed>:<chunk>"), "sim0", n).
    from fairness.shoe import FairShoe

    server_seed = hashlib.sha256(b"simulate:9:0").hexdigest()
    rules = RULESETS["atlantic_city"]
    opening = OpenRound(
        "r",
        "t",
        "atlantic_city",
        "c",
        1,
        "0" * 64,
        (Participant("p0", "sim0"),),
        RoundOptions(min_bet=USDC, max_bet=USDC),
    )
    state = play_banked_round(
        rules, FairShoe(server_seed, "sim0", 1), opening, PlaceBet("p0", (USDC,))
    )
    expected = FairShoe(server_seed, "sim0", 1).cards(state.next_position)
    dealt = sorted(
        [*zip(state.dealer.positions, state.dealer.cards, strict=True)]
        + [
            pair
            for box in state.boxes
            for hand in box.hands
            for pair in zip(hand.positions, hand.cards, strict=True)
        ]
    )
    assert [card for _, card in dealt] == expected


def test_banked_round_plays_basic_strategy() -> None:
    # Player 5+6 = 11 against a dealer 6 up: basic strategy doubles and takes one card.
    rules = RULESETS["atlantic_city"]
    opening = OpenRound(
        "r",
        "t",
        "atlantic_city",
        "c",
        1,
        "0" * 64,
        (Participant("p0", "s"),),
        RoundOptions(min_bet=USDC, max_bet=USDC),
    )
    # atlantic_city deal: player, dealer (up), player, dealer (hole); then the double card.
    shoe = StackedShoe(["5S", "6H", "6D", "TC", "9S", "TH"])
    state = play_banked_round(rules, shoe, opening, PlaceBet("p0", (USDC,)))
    hand = state.boxes[0].hands[0]
    assert hand.doubled and hand.cards == ("5S", "6D", "9S")
    assert state.settlement is not None
    assert state.settlement.hands[0].gross_return == 4 * USDC  # 20 beats 16+10 bust


def test_configuration_errors() -> None:
    with pytest.raises(ValueError):
        SimulationConfig("baccarat", 10).check()
    with pytest.raises(ValueError):
        SimulationConfig("classic", 0).check()
    with pytest.raises(ValueError):
        SimulationConfig("classic", 10, shoe="quantum").check()
    with pytest.raises(ValueError):
        SimulationConfig("duel", 10, players=9).check()
    with pytest.raises(ValueError):
        SimulationConfig("classic", 10, boxes=2).check()
    with pytest.raises(ValueError):
        simulate(SimulationConfig("classic", 10), workers=0)


def test_summary_interval_math() -> None:
    # Two rounds of 1 USDC: one returns 2, one 0 -> RTP 1, per-round sd 1 -> stderr 1/sqrt(2).
    config = SimulationConfig("classic", 2)
    tally = dict.fromkeys(run_chunk(SimulationConfig("classic", 1), 0)["tally"], 0)
    tally.update(
        rounds=2,
        hands=2,
        wagered=2 * USDC,
        returned=2 * USDC,
        sum_w2=2 * USDC**2,
        sum_r2=4 * USDC**2,
        sum_wr=2 * USDC**2,
        initial=2 * USDC,
    )
    report = summarize(config, {"tally": tally, "seat_returns": [0], "seat_r2": [0]}, 1.0, 1)
    assert report["rtp"] == 1.0
    assert report["stderr"] == pytest.approx(2**-0.5)
    assert report["ci95"] == pytest.approx([1 - 1.96 * 2**-0.5, 1 + 1.96 * 2**-0.5], abs=1e-4)
    assert report["rtp_per_wager"] == 1.0


def test_rtp_counts_per_initial_bet() -> None:
    # One round: bet 1, double to 2, win -> returned 4, wagered 2, initial 1.
    config = SimulationConfig("classic", 1)
    tally = dict.fromkeys(run_chunk(SimulationConfig("classic", 1), 0)["tally"], 0)
    tally.update(
        rounds=1,
        hands=1,
        wagered=2 * USDC,
        returned=4 * USDC,
        sum_w2=4 * USDC**2,
        sum_r2=16 * USDC**2,
        sum_wr=8 * USDC**2,
        initial=USDC,
    )
    report = summarize(config, {"tally": tally, "seat_returns": [0], "seat_r2": [0]}, 1.0, 1)
    assert report["rtp"] == 3.0  # +2 net on a 1 initial bet
    assert report["rtp_per_wager"] == 2.0
    assert report["average_wager"] == 2.0
    assert FastShoe(1).card_at(0) == FastShoe(1).card_at(0)


def test_simulate_command_prints_one_json_line() -> None:
    out = StringIO()
    call_command(
        "simulate", "--ruleset", "classic", "--rounds", "300", "--seed", "4", "--json", stdout=out
    )
    lines = out.getvalue().strip().splitlines()
    assert len(lines) == 1
    report = json.loads(lines[0])
    assert list(report)[:6] == ["ruleset", "rounds", "rtp", "ci95", "ci99", "stderr"]
    assert report["ruleset"] == "classic" and report["rounds"] == 300
    assert report["ci95"][0] < report["rtp"] < report["ci95"][1]
    assert report["rounds_per_s"] > 0


def test_simulate_command_readable_output_for_duel() -> None:
    out = StringIO()
    call_command("simulate", "--ruleset", "duel", "--rounds", "200", "--players", "4", stdout=out)
    text = out.getvalue()
    assert "RTP            98.5000%" in text
    assert "seat 4" in text
    assert "fee take       1.5000% of the pot (4 players, 150 bps)" in text


def test_simulate_command_rejects_bad_input() -> None:
    with pytest.raises(CommandError, match=r"seats 2\.\.8"):
        call_command("simulate", "--ruleset", "duel", "--rounds", "10", "--players", "1")


class _FakeTty(StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_draws_only_on_a_terminal() -> None:
    tty = _FakeTty()
    bar = ProgressBar("rounds", tty, width=10)
    bar(5, 10)
    bar(10, 10)
    assert "[#####-----]" in tty.getvalue()
    assert tty.getvalue().endswith("\n")
    pipe = StringIO()
    ProgressBar("rounds", pipe)(10, 10)
    assert pipe.getvalue() == ""
