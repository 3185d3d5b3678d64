"""fairness-v2: shared-table rounds that wait for a beacon round, as bundle lines the verifier
reads (fairness.sample.beacon_round_line), and the verifier's own checks of the beacon."""

from __future__ import annotations

import hashlib

import pytest

from fairness.beacon import verify as beacon_verify
from fairness.replay import load
from fairness.sample import beacon_round_line, sample_beacon

PLAY = load()


@pytest.mark.parametrize("ruleset", ["duel", "duel_classic"])
@pytest.mark.parametrize("void", [False, True])
def test_sample_beacon_rounds_are_v2_lines_the_engine_re_enacts(ruleset: str, void: bool) -> None:
    line = beacon_round_line(ruleset, seed=1, void=void)
    receipt, events = line["receipt"], line["events"]
    assert line["format"] == "fairness-v2-bundle"
    assert (receipt["spec"], receipt["receipt_version"]) == ("fairness-v2", 2)
    types = [e["type"] for e in events]
    assert types[types.index("BettingClosed") + 1] == "BeaconAwaited"
    beacon = receipt["beacon"]
    assert beacon["public_key"] == sample_beacon().beacon.public_key
    awaited = events[types.index("BeaconAwaited")]["data"]
    assert (beacon["round"], beacon["round_time"]) == (awaited["round"], awaited["round_time"])
    seeds = "|".join(p["client_seed"] for p in receipt["participants"])
    if void:
        assert receipt["outcome"] == "voided" and receipt["cards"] == []
        assert receipt["payouts"]["reason"] == "beacon_unavailable"
        assert beacon["signature"] is None and beacon["randomness"] is None
        assert receipt["client_material"] == seeds
    else:
        randomness = beacon_verify(beacon["round"], beacon["signature"], beacon["public_key"])
        assert (
            beacon["randomness"]
            == randomness.hex()
            == hashlib.sha256(bytes.fromhex(beacon["signature"])).hexdigest()
        )
        element = f"local-beacon:{beacon['round']}:{beacon['randomness']}"
        assert receipt["client_material"] == f"{seeds}|{element}"
    assert PLAY is not None
    dealt = [card["card"] for card in receipt["cards"]]
    assert PLAY(events, receipt, dealt) == []
