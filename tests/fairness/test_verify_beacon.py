"""fairness-v2: shared-table rounds that wait for a beacon round, as bundle lines the verifier
reads (fairness.sample.beacon_round_line), and the verifier's own checks of the beacon.

Each forgery is what an operator holding the receipt key could write: the round played
through the rule engine where the forgery allows (so its cards, play and settlement are
the engine's own for the shoe it was dealt from), the events rewritten consistently, the hash
chain recomputed and the receipt rebuilt and re-signed (`fairness.sample.timed_line`)."""

from __future__ import annotations

import copy
import hashlib
import io
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from casino.engine.events import BeaconSpec
from fairness.beacon import QUICKNET, LocalBeacon, local_secret_key
from fairness.beacon import verify as beacon_verify
from fairness.bundle import BUNDLE_FORMAT, BUNDLE_FORMAT_V2
from fairness.canonical import canonical_text
from fairness.checks import NO_BEACON_WARNING, beacon_words
from fairness.receipt import private_key_from_hex, sign_receipt
from fairness.replay import load
from fairness.sample import (
    BEACON_SAMPLE_KEY_HEX,
    STAKE,
    beacon_round_events,
    beacon_round_line,
    beacon_spec,
    sample_beacon,
    sample_bundle,
    timed_line,
)
from fairness.shoe import FairnessInputError, FairShoe, validate_client_material
from fairness.verify import KeyRing, main, verify_lines

PLAY = load()
KEY = private_key_from_hex(BEACON_SAMPLE_KEY_HEX)
RULESETS = ("duel", "duel_classic")
# A real quicknet round (the drand-verify package's known answer, as in test_beacon.py).
KAT_ROUND = 657413
KAT_SIGNATURE = (
    "b713718a38ae728dfd477991af2822e08d2f305e47718cef"
    "9f7848ce4050e7be41076862b98fad56e91a6b85b89cd97b"
)
KAT_RANDOMNESS = "fc1873a13f3545aeade8401532ef5519920652eee6b0d2b19ca12643b87b3587"


def report(line: dict[str, Any], replay: bool = True) -> Any:
    (found,) = verify_lines([canonical_text(line)], KeyRing(), PLAY if replay else None)
    return found


def failures(line: dict[str, Any]) -> list[str]:
    """The verifier's own failures (no proof of play); with it, the same come first."""
    own = report(line, replay=False).failures
    played = report(line).failures
    assert played[: len(own)] == own
    return own


def types_of(line: dict[str, Any]) -> list[str]:
    return [e["type"] for e in line["events"]]


def data_of(line: dict[str, Any], type_: str) -> dict[str, Any]:
    return next(e["data"] for e in line["events"] if e["type"] == type_)


def rebuilt(line: dict[str, Any]) -> dict[str, Any]:
    """The line's events (as they now are) re-chained at their own times, the receipt
    rebuilt from them and re-signed: a forger's best effort."""
    events = [(e["type"], e["data"]) for e in line["events"]]
    return timed_line(events, [e["recorded_at"] for e in line["events"]], KEY)


def resigned(line: dict[str, Any]) -> dict[str, Any]:
    """The line with its receipt (as it now is) signed again."""
    return {**line, "signature": sign_receipt(line["receipt"], KEY)}


def forged_round(ruleset: str = "duel", seed: int = 1, **options: Any) -> dict[str, Any]:
    return timed_line(*beacon_round_events(ruleset, seed=seed, **options), KEY)


# --- valid rounds ---------------------------------------------------------------------------


@pytest.mark.parametrize("ruleset", RULESETS)
@pytest.mark.parametrize("void", [False, True])
def test_sample_beacon_rounds_are_v2_lines_the_engine_re_enacts(ruleset: str, void: bool) -> None:
    line = beacon_round_line(ruleset, seed=1, void=void)
    receipt, events = line["receipt"], line["events"]
    assert line["format"] == "fairness-v2-bundle"
    assert (receipt["spec"], receipt["receipt_version"]) == ("fairness-v2", 2)
    types = types_of(line)
    assert types[types.index("BettingClosed") + 1] == "BeaconAwaited"
    beacon = receipt["beacon"]
    assert beacon["public_key"] == sample_beacon().beacon.public_key
    awaited = data_of(line, "BeaconAwaited")
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


@pytest.mark.parametrize("ruleset", RULESETS)
@pytest.mark.parametrize("seed", [0, 1, 2, 7])
def test_a_local_beacon_round_verifies_and_says_not_independent(ruleset: str, seed: int) -> None:
    line = beacon_round_line(ruleset, seed=seed)
    found = report(line)
    assert found.ok, found.failures
    assert found.replayed and found.cards == len(line["receipt"]["cards"]) >= 4
    key = sample_beacon().beacon.public_key[:16]
    round_ = line["receipt"]["beacon"]["round"]
    assert found.beacon == (
        f"beacon local-beacon round {round_}: operator-run beacon (key {key}…): not independent"
    )
    assert found.warning is None
    # the cards are the shoe of the material with the beacon's element, not the seeds' alone
    receipt = line["receipt"]
    shoe = FairShoe(receipt["server_seed"], receipt["client_material"], receipt["nonce"])
    assert [c["card"] for c in receipt["cards"]] == shoe.cards(len(receipt["cards"]))
    seeds = data_of(line, "BettingClosed")["client_material"]
    plain = FairShoe(receipt["server_seed"], seeds, receipt["nonce"])
    assert plain.cards(8) != shoe.cards(8)


def test_the_first_round_after_lock_plus_margin_is_awaited() -> None:
    line = beacon_round_line("duel_classic", seed=3)
    spec = data_of(line, "RoundOpened")["beacon"]
    lock = data_of(line, "BettingClosed")["closed_at_ms"] // 1000
    round_ = data_of(line, "BeaconAwaited")["round"]

    def time(r: int) -> int:
        return spec["genesis_time"] + (r - 1) * spec["period"]

    assert time(round_) > lock + spec["margin_s"] >= time(round_ - 1)
    assert (spec["margin_s"], spec["wait_s"]) == (3, 30)
    assert data_of(line, "BeaconAwaited")["deadline_ms"] == (time(round_) + 30) * 1000


def quicknet_spec() -> BeaconSpec:
    q = QUICKNET
    return BeaconSpec(q.name, q.chain_hash, q.public_key, q.genesis_time, q.period, 3, 30)


def quicknet_round(ruleset: str = "duel", **options: Any) -> dict[str, Any]:
    """A round at a table reading drand quicknet, locked 4 s before round KAT_ROUND's time (so
    that round is the first after lock + 3 s), recorded with its real signature."""
    lock = QUICKNET.genesis_time + (KAT_ROUND - 1) * QUICKNET.period - 4
    options.setdefault("sign", {KAT_ROUND: KAT_SIGNATURE}.__getitem__)
    options.setdefault("chain_id", f"quicknet-{ruleset}")  # its 2023 times: a chain of its own
    return forged_round(
        ruleset, seed=4, spec=quicknet_spec(), opened_at_ms=lock * 1000 + 123, **options
    )


@pytest.mark.parametrize("ruleset", RULESETS)
def test_a_drand_quicknet_round_verifies_and_says_independent(ruleset: str) -> None:
    line = quicknet_round(ruleset)
    assert line["receipt"]["beacon"]["round"] == KAT_ROUND
    assert line["receipt"]["beacon"]["randomness"] == KAT_RANDOMNESS
    assert line["receipt"]["client_material"].endswith(
        f"|drand-quicknet:{KAT_ROUND}:{KAT_RANDOMNESS}"
    )
    found = report(line)
    assert found.ok and found.replayed, found.failures
    assert found.beacon == f"beacon drand quicknet round {KAT_ROUND} (chain 52db…): independent"


def test_a_quicknet_key_with_another_genesis_or_period_is_refused() -> None:
    """Quicknet's key signs round numbers: a spec that moves the genesis would give a round
    already published a time after the lock."""
    for change in ({"genesis_time": QUICKNET.genesis_time + 30}, {"period": 30}):
        line = quicknet_round()
        line["events"][0]["data"]["beacon"].update(change)
        found = failures(rebuilt(line))
        assert found[0] == (
            "beacon: the table's beacon (RoundOpened.beacon) cannot be checked: it has "
            "quicknet's public key or chain hash but not all of quicknet's key, chain hash, "
            f"genesis time {QUICKNET.genesis_time} and period {QUICKNET.period}"
        )


def test_a_local_key_under_quicknets_chain_hash_is_refused() -> None:
    line = beacon_round_line("duel")
    line["events"][0]["data"]["beacon"]["chain_hash"] = QUICKNET.chain_hash
    assert "has quicknet's public key or chain hash" in failures(rebuilt(line))[0]


@pytest.mark.parametrize("ruleset", RULESETS)
def test_a_void_for_beacon_unavailable_verifies_with_refunds(ruleset: str) -> None:
    line = beacon_round_line(ruleset, seed=2, void=True)
    found = report(line)
    assert found.ok and found.replayed, found.failures
    assert found.cards == 0
    assert found.beacon is not None and "(never recorded)" in found.beacon
    receipt = line["receipt"]
    voided = data_of(line, "RoundVoided")
    assert voided["reason"] == "beacon_unavailable"
    awaited = data_of(line, "BeaconAwaited")
    assert voided["voided_at_ms"] == awaited["deadline_ms"]
    assert (
        voided["evidence"] == f"local-beacon round {awaited['round']} was not recorded within 30 s"
    )
    seats = len(receipt["participants"])
    assert receipt["payouts"]["refunds"] == [
        {"player_id": f"p{i + 1}", "amount": STAKE} for i in range(seats)
    ]  # every seat's 10 USDC back (the duel's stake, the duel_classic bets)
    spec = data_of(line, "RoundOpened")["beacon"]
    assert receipt["beacon"] == {
        **{k: spec[k] for k in ("name", "chain_hash", "public_key")},
        "round": awaited["round"], "round_time": awaited["round_time"],
        "signature": None, "randomness": None,
    }  # fmt: skip


def test_a_shared_round_without_a_beacon_is_a_warning_not_a_failure() -> None:
    seeds = hashlib.sha256(b"x").hexdigest()
    shared = sample_bundle(
        round_id="old", server_seed=seeds, client_seeds=["a", "b", "c"], nonce=2,
        private_key=KEY,
    )  # fmt: skip
    assert shared["format"] == BUNDLE_FORMAT and "beacon" not in shared["receipt"]
    found = report(shared)
    assert found.ok and found.beacon is None
    assert found.warning == f"{NO_BEACON_WARNING} (duel_classic, 3 seats)"
    assert NO_BEACON_WARNING == "no beacon: a seat could choose its cards"
    solo = sample_bundle(
        round_id="solo", server_seed=seeds, client_seeds=["a"], nonce=2, private_key=KEY
    )
    assert report(solo).ok and report(solo).warning is None and report(solo).beacon is None


def test_the_cli_names_each_rounds_beacon_and_counts_them(tmp_path: Path) -> None:
    shared = sample_bundle(
        round_id="old", server_seed="ab" * 32, client_seeds=["a", "b"], nonce=2, private_key=KEY
    )
    lines = [
        beacon_round_line("duel"), quicknet_round("duel_classic"),
        beacon_round_line("duel_classic", void=True), shared,
    ]  # fmt: skip
    file = tmp_path / "b.jsonl"
    file.write_text("".join(canonical_text(line) + "\n" for line in lines))
    out = io.StringIO()
    assert main([str(file)], out=out) == 0
    rows = out.getvalue().splitlines()
    local = sample_beacon().beacon.public_key[:16]
    r1 = lines[0]["receipt"]["beacon"]["round"]
    r3 = lines[2]["receipt"]["beacon"]["round"]
    assert rows[0] == (
        f"OK   line 1 round duel-beacon-0: 4 cards, play checked; beacon local-beacon round {r1}: "
        f"operator-run beacon (key {local}…): not independent"
    )
    assert rows[1].endswith(
        f"play checked; beacon drand quicknet round {KAT_ROUND} (chain 52db…): independent"
    )
    assert rows[2] == (
        f"OK   line 3 round duel_classic-beacon-0-void: 0 cards, play checked; beacon "
        f"local-beacon round {r3} (never recorded): operator-run beacon (key {local}…): "
        "not independent"
    )
    assert rows[3] == (
        "OK   line 4 round old: 7 cards, play checked; warning: no beacon: a seat could choose "
        "its cards (duel_classic, 2 seats)"
    )
    assert rows[4].startswith("4 rounds: 4 verified, 0 failed (")
    assert rows[4].endswith(
        "proof of play on); beacons: 1 drand quicknet (independent), 2 operator-run (not "
        "independent), 1 of them voided waiting for the beacon round, 1 shared-table rounds "
        "without one (warning: a seat could choose its cards)"
    )


def test_beacon_words() -> None:
    spec = {
        "name": "drand-quicknet", "chain_hash": QUICKNET.chain_hash,
        "public_key": QUICKNET.public_key, "genesis_time": QUICKNET.genesis_time,
        "period": QUICKNET.period, "margin_s": 3, "wait_s": 30,
    }  # fmt: skip
    assert beacon_words(spec, 5) == "beacon drand quicknet round 5 (chain 52db…): independent"
    assert beacon_words(spec, None) == (
        "beacon drand quicknet (no round awaited) (chain 52db…): independent"
    )
    other = LocalBeacon(local_secret_key("other"), name="house-beacon").beacon
    mine = {
        **spec,
        "name": "house-beacon",
        "public_key": other.public_key,
        "chain_hash": other.chain_hash,
    }
    assert beacon_words(mine, 9, recorded=False) == (
        f"beacon house-beacon round 9 (never recorded): operator-run beacon "
        f"(key {other.public_key[:16]}…): not independent"
    )


# --- forgeries --------------------------------------------------------------------------------


def flip(signature: str, index: int, mask: int) -> str:
    raw = bytearray(bytes.fromhex(signature))
    raw[index] ^= mask
    return raw.hex()


def with_signature(line: dict[str, Any], signature: str) -> dict[str, Any]:
    """The line with another signature in BeaconRecorded and the receipt, all else kept."""
    forged = copy.deepcopy(line)
    data_of(forged, "BeaconRecorded")["signature"] = signature
    return rebuilt(forged)


@settings(max_examples=40, deadline=None)
@given(index=st.integers(0, 47), mask=st.integers(1, 255))
def test_any_byte_flip_of_the_signature_fails(index: int, mask: int) -> None:
    line = LINE_DUEL
    round_ = line["receipt"]["beacon"]["round"]
    found = failures(
        with_signature(line, flip(line["receipt"]["beacon"]["signature"], index, mask))
    )
    assert any(
        f.startswith(f"beacon: round {round_}'s signature does not verify under the beacon's "
                     f"public key {line['receipt']['beacon']['public_key'][:16]}… (")
        for f in found
    ), found  # fmt: skip


LINE_DUEL = beacon_round_line("duel", seed=1)


def test_a_changed_signature_byte_fails_with_its_reasons() -> None:
    line = LINE_DUEL
    recorded = data_of(line, "BeaconRecorded")
    signature = flip(recorded["signature"], 47, 1)
    found = failures(with_signature(line, signature))
    round_ = recorded["round"]
    key = line["receipt"]["beacon"]["public_key"][:16]
    seeds = data_of(line, "BettingClosed")["client_material"]
    element = f"local-beacon:{round_}:{hashlib.sha256(bytes.fromhex(signature)).hexdigest()}"
    assert found[0] == (
        f"client material: {recorded['client_material']!r}, but the participants' seeds in seat "
        f"order and the beacon's element give {seeds + '|' + element!r}"
    )
    assert any(f.startswith(f"beacon: round {round_}'s signature does not verify under the "
                            f"beacon's public key {key}… (") for f in found)  # fmt: skip
    assert any(f.startswith("beacon: BeaconRecorded's randomness ") for f in found)


def test_another_rounds_signature_fails() -> None:
    line = LINE_DUEL
    round_ = line["receipt"]["beacon"]["round"]
    found = failures(with_signature(line, sample_beacon().sign_round(round_ + 1)))
    assert (
        f"beacon: round {round_}'s signature does not verify under the beacon's public key "
        f"{line['receipt']['beacon']['public_key'][:16]}… (the signature is not the beacon's "
        f"signature of round {round_})"
    ) in found


def test_another_keys_signature_fails() -> None:
    """A round signed by a key other than the table's: the operator's local key cannot pass
    for quicknet's."""
    local = sample_beacon()
    line = quicknet_round(sign=local.sign_round)
    found = failures(line)
    assert found == [
        f"beacon: round {KAT_ROUND}'s signature does not verify under the beacon's public key "
        f"{QUICKNET.public_key[:16]}… (the signature is not the beacon's signature of round "
        f"{KAT_ROUND})"
    ]


@pytest.mark.parametrize("ruleset", RULESETS)
def test_randomness_that_is_not_the_signatures_sha256_fails(ruleset: str) -> None:
    """The forger deals from a shoe of its own randomness and records it: the cards are that
    shoe's and the receipt's material says it, but the randomness is not SHA-256 of the
    signature."""
    chosen = hashlib.sha256(b"the house's choice").hexdigest()

    def shoe_material(seeds: str, recorded: str) -> str:
        return recorded.rsplit(":", 1)[0] + ":" + chosen

    line = forged_round(ruleset, seed=1, shoe_material=shoe_material)
    recorded = data_of(line, "BeaconRecorded")
    true = recorded["randomness"]
    recorded["randomness"] = chosen
    recorded["client_material"] = shoe_material("", recorded["client_material"])
    found = failures(rebuilt(line))
    seeds = data_of(line, "BettingClosed")["client_material"]
    element = f"local-beacon:{recorded['round']}:{true}"
    assert found == [
        f"client material: {recorded['client_material']!r}, but the participants' seeds in seat "
        f"order and the beacon's element give {seeds + '|' + element!r}",
        f"beacon: BeaconRecorded's randomness {chosen!r} is not the SHA-256 of the signature, "
        f"{true}",
        f"beacon: BeaconRecorded's client material {recorded['client_material']!r} is not the "
        f"locked seeds with the beacon's element, {seeds + '|' + element!r}",
    ]


@pytest.mark.parametrize("ruleset", RULESETS)
def test_a_beacon_round_earlier_than_lock_plus_margin_fails(ruleset: str) -> None:
    """Round R - 1, published before the lock + 3 s (the house could have known it): played
    at a table of margin 0 (where R - 1 is the first round after the lock), then the table's
    margin written back as 3 s, the events re-chained and the receipt re-signed."""
    honest = beacon_round_line(ruleset, seed=1)
    round_ = honest["receipt"]["beacon"]["round"]
    line = forged_round(ruleset, seed=1, spec=beacon_spec(margin_s=0))
    assert line["receipt"]["beacon"]["round"] == round_ - 1
    line["events"][0]["data"]["beacon"]["margin_s"] = 3
    forged = rebuilt(line)
    assert forged["receipt"]["beacon"]["signature"] == sample_beacon().sign_round(round_ - 1)
    lock = data_of(forged, "BettingClosed")["closed_at_ms"] // 1000
    time = data_of(forged, "BeaconAwaited")["round_time"]
    assert failures(forged) == [
        f"beacon: round {round_ - 1} (at {time} s) is not after the lock: its time must be after "
        f"the lock's {lock} s + 3 s = {lock + 3} s"
    ]
    assert report(forged).failures == failures(forged)  # the proof of play never ran on it
    # and the engine's proof of play refuses it on its own too
    assert PLAY is not None
    decided = PLAY(
        forged["events"], forged["receipt"], [c["card"] for c in forged["receipt"]["cards"]]
    )
    assert decided and decided[0].startswith("play: version ")


def test_a_beacon_round_later_than_the_first_fails() -> None:
    """Round R + 1 (the house waits one round more, to pick between two)."""
    round_ = LINE_DUEL["receipt"]["beacon"]["round"]
    line = forged_round("duel", seed=1, spec=beacon_spec(margin_s=6))
    assert line["receipt"]["beacon"]["round"] == round_ + 1
    line["events"][0]["data"]["beacon"]["margin_s"] = 3
    forged = rebuilt(line)
    lock = data_of(forged, "BettingClosed")["closed_at_ms"] // 1000
    time = data_of(LINE_DUEL, "BeaconAwaited")["round_time"]
    assert failures(forged) == [
        f"beacon: round {round_ + 1} is not the first round after the lock ({lock} s + 3 s): "
        f"round {round_}, at {time} s, is"
    ]


def test_awaited_times_that_are_not_the_rounds_fail() -> None:
    line = copy.deepcopy(LINE_DUEL)
    awaited = data_of(line, "BeaconAwaited")
    round_, time = awaited["round"], awaited["round_time"]
    awaited["round_time"] += 3
    awaited["deadline_ms"] += 60_000
    assert failures(rebuilt(line))[:2] == [
        f"beacon: BeaconAwaited says round {round_} is at {time + 3} s; the beacon publishes it "
        f"at {time} s",
        f"beacon: BeaconAwaited's deadline {(time + 30) * 1000 + 60_000} ms is not round "
        f"{round_}'s time + 30 s, {(time + 30) * 1000} ms",
    ]


@pytest.mark.parametrize("ruleset", RULESETS)
def test_a_material_without_the_beacon_element_fails(ruleset: str) -> None:
    """The forger deals from the seats' seeds alone and records that material."""
    line = forged_round(ruleset, seed=2, shoe_material=lambda seeds, recorded: seeds)
    recorded = data_of(line, "BeaconRecorded")
    wanted = recorded["client_material"]
    seeds = data_of(line, "BettingClosed")["client_material"]
    recorded["client_material"] = seeds
    forged = rebuilt(line)
    assert forged["receipt"]["client_material"] == seeds
    assert failures(forged) == [
        f"client material: {seeds!r}, but the participants' seeds in seat order and the "
        f"beacon's element give {wanted!r}",
        f"beacon: BeaconRecorded's client material {seeds!r} is not the locked seeds with the "
        f"beacon's element, {wanted!r}",
    ]


def test_a_receipt_whose_material_or_beacon_differs_from_the_events_fails() -> None:
    line = copy.deepcopy(LINE_DUEL)
    seeds = data_of(line, "BettingClosed")["client_material"]
    line["receipt"]["client_material"] = seeds  # the seeds' shoe: the cards differ too
    found = failures(resigned(line))
    assert found[0].startswith(f"client material: {seeds!r}, but the participants' seeds")
    assert found[1].startswith("client material: BeaconRecorded's ")
    assert any(f.startswith("cards: position 0 dealt ") for f in found)
    other = copy.deepcopy(LINE_DUEL)
    round_ = other["receipt"]["beacon"]["round"]
    other["receipt"]["beacon"]["round"] = round_ - 1
    other["receipt"]["beacon"]["randomness"] = None
    assert failures(resigned(other)) == [
        f"beacon: the receipt's beacon round {round_ - 1} is not the events' {round_}",
        f"beacon: the receipt's beacon randomness None is not the events' "
        f"{other['receipt']['client_material'][-64:]!r}",
    ]


def test_cards_dealt_without_the_beacon_recorded_fail() -> None:
    line = copy.deepcopy(LINE_DUEL)
    line["events"] = [e for e in line["events"] if e["type"] != "BeaconRecorded"]
    found = failures(rebuilt(line))
    round_ = LINE_DUEL["receipt"]["beacon"]["round"]
    assert f"beacon: cards were dealt, but beacon round {round_} was never recorded" in found
    assert (
        f"beacon: beacon round {round_} was never recorded, and the round is not voided"
    ) in found


def test_a_round_that_awaited_no_beacon_after_locking_two_seats_fails() -> None:
    line = copy.deepcopy(beacon_round_line("duel_classic", seed=1, void=True))
    line["events"] = [e for e in line["events"] if e["type"] != "BeaconAwaited"]
    found = failures(rebuilt(line))
    assert found[0] == (
        "beacon: betting closed with 3 seats at a table reading local-beacon, but no "
        "BeaconAwaited names the beacon round the deal waits for"
    )


def test_a_recording_after_the_deadline_fails() -> None:
    line = copy.deepcopy(LINE_DUEL)
    awaited, recorded = data_of(line, "BeaconAwaited"), data_of(line, "BeaconRecorded")
    recorded["recorded_at_ms"] = awaited["deadline_ms"]
    found = failures(rebuilt(line))
    settled = types_of(line).index("RoundSettled") + 1
    assert found == [
        f"time: version {settled} (RoundSettled) settled_at_ms "
        f"{data_of(line, 'RoundSettled')['settled_at_ms']} is before version 7 (BeaconRecorded) "
        f"recorded_at_ms {awaited['deadline_ms']}",
        f"beacon: round {recorded['round']} was recorded at {awaited['deadline_ms']} ms, not "
        f"before its deadline {awaited['deadline_ms']} ms",
    ]


def test_receipt_versions_follow_the_table() -> None:
    # a beacon round's receipt written as fairness-v1
    line = copy.deepcopy(LINE_DUEL)
    line["receipt"]["spec"], line["receipt"]["receipt_version"] = "fairness-v1", 1
    found = failures(resigned(line))
    assert found[0] == (
        "bundle: a 'fairness-v1' receipt is in a fairness-v2-bundle line, not fairness-v1-bundle"
    )
    assert (
        "beacon: the round's table reads the beacon 'local-beacon', but its receipt is "
        "fairness-v1, not fairness-v2"
    ) in found
    odd = copy.deepcopy(LINE_DUEL)
    odd["receipt"]["receipt_version"] = 1
    assert failures(resigned(odd)) == [
        "receipt: a fairness-v2 receipt has receipt_version 2, not 1"
    ]


def test_a_v1_line_carrying_beacon_data_fails() -> None:
    line = {**LINE_DUEL, "format": BUNDLE_FORMAT}
    found = failures(line)
    assert found[:2] == [
        'bundle: unknown field "beacon" in receipt',
        'bundle: unknown field "beacon" in events[0].data (RoundOpened)',
    ]
    assert any('unknown event type "BeaconAwaited"' in f for f in found)
    assert LINE_DUEL["format"] == BUNDLE_FORMAT_V2 and report(LINE_DUEL).ok


# --- the shoe's material ----------------------------------------------------------------------

ELEMENT = "local-beacon:24807434:" + "ab" * 32


@pytest.mark.parametrize(
    "material",
    [f"a|{ELEMENT}", f"a.b|c-d|{ELEMENT}", "a|drand-quicknet:1:" + "0" * 64,
     "a|b|x:18446744073709551615:" + "f" * 64],
)  # fmt: skip
def test_the_material_may_end_with_a_beacon_element(material: str) -> None:
    validate_client_material(material)
    FairShoe("0" * 64, material, 1).cards(4)


@pytest.mark.parametrize(
    "material",
    [
        ELEMENT,  # no seed before it
        "a:b",  # ':' inside a client seed
        "a:1|b",
        f"a|{ELEMENT}|b",  # not last
        f"a|{ELEMENT}|{ELEMENT}",
        "a|Local-Beacon:5:" + "ab" * 32,  # name: a-z 0-9 -
        "a|local_beacon:5:" + "ab" * 32,
        "a|local-beacon:05:" + "ab" * 32,  # decimal without leading zeros
        "a|local-beacon:0:" + "ab" * 32,
        "a|local-beacon:18446744073709551616:" + "ab" * 32,  # past 2**64 - 1
        "a|local-beacon:5:" + "AB" * 32,
        "a|local-beacon:5:" + "ab" * 31,
        "a|local-beacon:5",
        "a|:5:" + "ab" * 32,
    ],
)
def test_other_colons_in_the_material_are_refused(material: str) -> None:
    with pytest.raises(FairnessInputError):
        validate_client_material(material)


def test_the_docs_failure_examples_are_the_verifiers() -> None:
    """docs/fairness.md names these failures of the doc's example round (duel, seed 0)."""
    doc = " ".join((Path(__file__).parents[2] / "docs/fairness.md").read_text().split())
    honest = beacon_round_line("duel", seed=0)
    examples = []
    for margin in (0, 6):  # R - 1 and R + 1, the table's margin written back as 3 s
        line = forged_round("duel", seed=0, spec=beacon_spec(margin_s=margin))
        line["events"][0]["data"]["beacon"]["margin_s"] = 3
        examples += failures(rebuilt(line))
    examples.append(failures(with_signature(honest, flip(
        honest["receipt"]["beacon"]["signature"], 47, 1)))[1].split(" (")[0])  # fmt: skip
    stripped = copy.deepcopy(honest)
    stripped["events"] = [e for e in stripped["events"] if e["type"] != "BeaconRecorded"]
    examples.append(
        next(f for f in failures(rebuilt(stripped)) if f.startswith("beacon: cards were dealt"))
    )
    assert len(examples) == 4
    for example in examples:
        assert f"`{example}" in doc, example


# --- the vector file ------------------------------------------------------------------------

VECTORS = Path(__file__).parent / "vectors" / "beacon_rounds.jsonl"


def vector_lines() -> list[dict[str, Any]]:
    """The fairness-v2 vectors: each beacon rule set's round and void with the demo local
    beacon, and a round on a real drand quicknet round (657413), every one a signed line."""
    lines = [
        beacon_round_line(ruleset, seed=seed, void=void)
        for ruleset in RULESETS
        for seed, void in ((0, False), (1, False), (0, True))
    ]
    return [*lines, quicknet_round("duel"), quicknet_round("duel_classic")]


def write_vectors() -> None:
    """Regenerate the file: python -c 'from tests.fairness.test_verify_beacon import
    write_vectors; write_vectors()'."""
    VECTORS.write_text("".join(canonical_text(line) + "\n" for line in vector_lines()))


def test_the_vector_file_is_the_generators_and_verifies() -> None:
    assert VECTORS.read_text() == "".join(canonical_text(x) + "\n" for x in vector_lines()), (
        "regenerate with write_vectors()"
    )
    out = io.StringIO()
    assert main([str(VECTORS)], out=out) == 0, out.getvalue()
    rows = out.getvalue().splitlines()
    assert all(row.startswith("OK   line ") for row in rows[:8])
    assert rows[8].endswith(
        "beacons: 2 drand quicknet (independent), 6 operator-run (not independent), 2 of them "
        "voided waiting for the beacon round"
    )
    assert all(row.startswith("OK   chain ") for row in rows[9:-1])
