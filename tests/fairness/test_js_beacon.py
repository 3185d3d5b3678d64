"""The browser's fairness-v2 checks (play.js and verifier.js, on beacon.js) against the Python
ones, on shared-table rounds that wait for a beacon round, run in Node 20 through
tests/fairness/js/beacon_rounds.mjs.

The rounds are played through the rule engine (`beacon_line`): duel and duel_classic, 2 to 4
seats, at a table reading one of two operator-run local beacons or drand quicknet (real
quicknet rounds: the lock is placed so that the round with a published signature is the one
the table must wait for), with random choices, think times and timeouts, and the beacon never
coming (a void at its deadline). A forger who holds every key rewrites them (`TAMPERS`): a
signature byte flipped or another key's signature (the engine takes any 96 hex digits; the
cards are dealt from the material it makes of them), the randomness changed, an earlier or a
later round than the first after the lock, the shoe shuffled without the beacon's element, the
deal without waiting, a void before the deadline, the receipt naming another round, a round
recorded before the beacon published it; the
events, the hash chain, the receipt and its signature are rebuilt each time, so only the
beacon's own checks can tell. play.js's verdict must be the engine's proof of play's on the
same events and shoe, and verifier.js's the Python verifier's, with the rounds the forger
could not pass off failing both.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random
import re
import subprocess
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from casino.engine import commands as c
from casino.engine.decider import step
from casino.engine.errors import DomainError
from casino.engine.events import BeaconAwaited, BeaconSpec, Participant, RoundOptions, event_to_dict
from fairness.beacon import QUICKNET, Beacon, LocalBeacon, local_secret_key
from fairness.chain import create_chain
from fairness.receipt import private_key_from_hex, receipt_from_events
from fairness.replay import load
from fairness.sample import NOW_MS, beacon_round_line, bundle_line, signed_material, stored_events
from fairness.shoe import FairShoe
from fairness.verify import KeyRing, load_engine_replay, verify_round
from tests.fairness.rewrites import forge, play_round
from tests.fairness.test_beacon import KAT_ROUND, KAT_SIGNATURE, REAL_ROUNDS
from tests.fairness.test_js import NODE, ROOT

KEY = private_key_from_hex(hashlib.sha256(b"test_js_beacon").hexdigest())
CHAIN = create_chain(64, head=hashlib.sha256(b"test_js_beacon chain").hexdigest())
LOCALS = (
    LocalBeacon(local_secret_key("sample")),
    LocalBeacon(local_secret_key("tests/fairness/test_js_beacon")),
)
QUICKNET_ROUNDS = ((KAT_ROUND, KAT_SIGNATURE), *REAL_ROUNDS)
BEACONS = ("local", "local", "other local", "quicknet")
PLAY = load()
CHECK = load_engine_replay()
assert PLAY is not None and CHECK is not None

# What the forger does (see the module's docstring); "none" and "void" are honest rounds, and
# so is "early void": a staff void while the round waits is a void like any other.
TAMPERS = (
    "none", "none", "none", "void", "byte", "signer", "randomness", "earlier", "later",
    "material", "material event", "skip", "early void", "receipt round", "recorded early",
)  # fmt: skip
HONEST = ("none", "void", "early void")

Pick = Callable[[int], int]


def picker(seed: int | str) -> Pick:
    rng = random.Random(seed)
    return lambda n: rng.randrange(n) if n > 1 else 0


@dataclasses.dataclass
class Played:
    """A round as the forger leaves it: its (type, data) events, each one's command time (ms),
    what the receipt needs rewritten, and its seed."""

    pairs: list[tuple[str, dict[str, Any]]]
    times: list[int]
    nonce: int
    server_seed: str
    receipt_material: str | None = None  # the receipt's client material, when forged
    receipt_round: bool = False  # the receipt names another beacon round


def _choices(state: Any) -> list[c.Command]:
    """Every command a seat could send now (the rules refuse the wrong ones)."""
    out: list[c.Command] = []
    for box in state.boxes:
        p = box.player_id
        out += [c.Hit(p, True), c.Stand(p), c.Double(p), c.Split(p)]
        out += [c.DeclineInsurance(p, box.box), c.TakeInsurance(p, box.box, box.bet // 2)]
    return out


def _flip(signature: str, pick: Pick) -> str:
    raw = bytearray.fromhex(signature)
    raw[pick(len(raw))] ^= 1 + pick(255)
    return raw.hex()


def play(ruleset: str, seed: int, beacon: str, tamper: str, seats: int = 0) -> Played:
    """One shared-table round through the engine, as `tamper` says (see TAMPERS), of `seats`
    seats (0: 2 to 4)."""
    pick = picker(f"{ruleset}/{seed}/{beacon}/{tamper}")
    nonce = 1 + pick(63)
    server_seed = CHAIN.seed(nonce)
    seats = seats or 2 + pick(3)
    names = [f"p{i + 1}" for i in range(seats)]
    seeds = [f"b{seed}-{i}" for i in range(seats)]
    seats_material = "|".join(seeds)
    local = LOCALS[1] if beacon == "other local" else LOCALS[0]
    chain: Beacon = QUICKNET if beacon == "quicknet" else local.beacon
    margin, wait = (3, 4, 9)[pick(3)], (10, 30)[pick(2)]
    spec = BeaconSpec(
        chain.name, chain.chain_hash, chain.public_key, chain.genesis_time, chain.period,
        margin, wait,
    )  # fmt: skip
    # An earlier (later) round than the first after the lock: the engine run with a margin one
    # period shorter (longer) names it; the record then shows the table's own margin.
    shift = {"earlier": -chain.period, "later": chain.period}.get(tamper, 0)
    engine_spec = None if tamper == "skip" else dataclasses.replace(spec, margin_s=margin + shift)
    quicknet_round = QUICKNET_ROUNDS[pick(len(QUICKNET_ROUNDS))]
    if beacon == "quicknet":  # lock where the round with a known signature is the one awaited
        round_time = chain.genesis_time + (quicknet_round[0] - 1) * chain.period
        lock_s = round_time - (margin + shift) - 1 - pick(chain.period)
        now = lock_s * 1000 + pick(1000)
    else:
        now = NOW_MS + pick(10**9)
    plain = FairShoe(server_seed, seats_material, nonce)
    opening = c.OpenRound(
        f"beacon-{seed}", "table-shared", ruleset, "chain-beacon", nonce, CHAIN.seed(nonce - 1),
        tuple(Participant(n, s, offer_insurance=bool(pick(2))) for n, s in zip(
            names, seeds, strict=True)),
        RoundOptions(1_000_000, 100_000_000, stake=10_000_000 if ruleset == "duel" else 0),
        engine_spec,
    )  # fmt: skip
    events, state = step(None, opening, now, plain)
    times = [now] * len(events)

    def act(command: Any, shoe: Any) -> bool:
        nonlocal events, state
        try:
            more, state = step(state, command, now, shoe)
        except DomainError:
            return False
        events += more
        times.extend([now] * len(more))
        return True

    if ruleset != "duel":
        for name in names:
            if state.phase != "betting":
                break
            if beacon != "quicknet":
                now += pick(3) * 1_000
                if name == names[-1] and pick(5) == 0:  # the last seat sits out
                    now = max(now, state.deadline_ms or now)
                    act(c.Timeout(), plain)
                    break
            act(c.PlaceBet(name, (1_000_000 * (1 + pick(5)),)), plain)
    shoe: Any = plain
    if state.phase == "beacon":
        awaited = events[-1]
        assert isinstance(awaited, BeaconAwaited)
        round_ = awaited.round
        if tamper == "void":
            now = awaited.deadline_ms + pick(3) * 777
            act(c.Timeout(), plain)
        elif tamper == "early void":
            now = awaited.deadline_ms - 1 - pick(wait * 1000)
            evidence = f"{spec.name} round {round_} was not recorded within {wait} s"
            act(c.VoidRound("beacon_unavailable", evidence), plain)
        else:
            if beacon == "quicknet":
                assert round_ == quicknet_round[0], (round_, quicknet_round)
                signature = quicknet_round[1]
            else:
                signature = local.sign_round(round_)
            if tamper == "byte":
                signature = _flip(signature, pick)
            elif tamper == "signer":
                other = LOCALS[0] if beacon == "other local" else LOCALS[1]
                signature = other.sign_round(round_)
            material = signed_material(seats_material, spec, round_, signature)
            if tamper == "randomness":
                fake = hashlib.sha256(f"not the beacon's {seed}".encode()).hexdigest()
                material = f"{seats_material}|{spec.name}:{round_}:{fake}"
            elif tamper in ("material", "material event"):
                material = seats_material  # the shoe without the beacon
            shoe = FairShoe(server_seed, material, nonce)
            now = awaited.round_time * 1000 + pick(wait * 1000)
            assert act(c.RecordBeacon(round_, signature), shoe)
    while not state.finished:
        now += pick(4) * (pick(8) + 1) * 1_000  # sometimes past a deadline
        if state.deadline_ms is not None and now >= state.deadline_ms:
            act(c.Timeout(), shoe)
            continue
        options = _choices(state)
        start = pick(len(options)) if options else 0
        if not any(act(o, shoe) for o in options[start:] + options[:start]):
            now = max(now, state.deadline_ms or now)
    act(c.RevealSeed(server_seed), shoe)
    pairs = []
    for event in events:
        data = event_to_dict(event)
        pairs.append((data.pop("type"), data))
    played = Played(pairs, times, nonce, server_seed)
    data = {t: d for t, d in reversed(pairs)}  # the first event of each type
    if tamper == "skip":
        data["RoundOpened"]["beacon"] = dataclasses.asdict(spec)
    elif tamper in ("earlier", "later"):
        data["RoundOpened"]["beacon"]["margin_s"] = margin
    elif tamper == "randomness" and "BeaconRecorded" in data:
        recorded = data["BeaconRecorded"]
        recorded["client_material"] = material
        recorded["randomness"] = material.rsplit(":", 1)[1]
    elif tamper == "material event" and "BeaconRecorded" in data:
        data["BeaconRecorded"]["client_material"] = seats_material
    elif tamper == "material":
        played.receipt_material = seats_material  # the receipt names the shoe it was dealt from
    elif tamper == "recorded early" and "BeaconRecorded" in data:  # before its time: impossible
        round_time = data["BeaconAwaited"]["round_time"]
        data["BeaconRecorded"]["recorded_at_ms"] = round_time * 1000 - 1 - pick(margin * 1000)
    played.receipt_round = tamper == "receipt round"
    return played


def _at(ms: int, micros: int) -> str:
    moment = datetime.fromtimestamp(ms / 1000, UTC) + timedelta(microseconds=micros)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def line_of(played: Played) -> dict[str, Any]:
    """The round's signed bundle line: events chained, receipt built (and forged), signed."""
    stream = f"round-{played.pairs[0][1]['round_id']}"
    recorded = [_at(t, i) for i, t in enumerate(played.times, 1)]
    events = stored_events(stream, played.pairs, times=recorded)
    receipt = receipt_from_events(stream, events)
    if played.receipt_material is not None:
        receipt["client_material"] = played.receipt_material
    if played.receipt_round and receipt.get("beacon", {}).get("round") is not None:
        receipt["beacon"]["round"] += 1
    return bundle_line(receipt, events, KEY)


def beacon_line(spec: tuple[str, int, str, str]) -> dict[str, Any]:
    return line_of(play(*spec))


def run_node(payload: dict[str, Any]) -> dict[str, Any]:
    out = subprocess.run(
        [NODE, str(ROOT / "tests/fairness/js/beacon_rounds.mjs")],
        input=json.dumps(payload), capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def specs(seed: int, count: int) -> list[tuple[str, int, str, str]]:
    """`count` rounds drawn from `seed`: (rule set, seed, beacon, tamper), every tamper once
    at least."""
    rng = random.Random(seed)
    tampers = [*TAMPERS, *(rng.choice(TAMPERS) for _ in range(count - len(TAMPERS)))]
    return [
        (rng.choice(("duel", "duel_classic")), rng.randrange(2**32), rng.choice(BEACONS), t)
        for t in tampers
    ]


def _version(failures: list[str]) -> int | None:
    for failure in failures:
        if failure.startswith("play: version "):
            return int(failure.split()[2].rstrip(":"))
    return None


# --- play.js against the engine's proof of play ---------------------------------------------


@settings(
    max_examples=4, deadline=None, phases=(Phase.explicit, Phase.reuse, Phase.generate),
    suppress_health_check=[HealthCheck.too_slow],
)  # fmt: skip
@given(st.integers(0, 2**64 - 1))
def test_play_js_decides_beacon_rounds_as_the_engine_does(seed: int) -> None:
    """The proof of play alone: on the same events and the shoe of the receipt's material,
    play.js passes the rounds the engine re-enacts and fails the others at the same version."""
    made = [(spec, line_of(play(*spec))) for spec in specs(seed, 60)]
    plays = [
        {
            "events": line["events"],
            "server_seed": line["receipt"]["server_seed"],
            "client_material": line["receipt"]["client_material"],
            "nonce": line["receipt"]["nonce"],
        }
        for _, line in made
    ]
    found = run_node({"plays": plays})["plays"]
    outcomes = set()
    for (spec, line), js in zip(made, found, strict=True):
        python = PLAY(line["events"], line["receipt"])  # type: ignore[misc]
        where = (spec, python[:1], js["failures"][:1])
        assert js["ok"] == (not python), where
        if python:
            assert _version(js["failures"]) == _version(python), where
        outcomes.add((spec[3], js["ok"]))
    assert ("none", True) in outcomes and ("earlier", False) in outcomes, outcomes


# --- verifier.js: what it says of a round's beacon ----------------------------------------------


def test_the_sample_beacon_rounds_verify_in_the_browser_as_operator_run() -> None:
    """fairness.sample's lines (the demo local beacon): verified, the beacon named as the
    operator's own, not independent; the void says the round never came."""
    lines = [beacon_round_line(r, seed=s, void=v) for r in ("duel", "duel_classic")
             for s in (0, 5) for v in (False, True)]  # fmt: skip
    found = run_node({"bundles": lines})["bundles"]
    for line, js in zip(lines, found, strict=True):
        receipt = line["receipt"]
        round_ = receipt["beacon"]["round"]
        assert js["ok"], js["failures"]
        assert js["checks"]["beacon"] is True
        beacon = js["beacon"]
        assert (beacon["state"], beacon["round"], beacon["independent"]) == (
            "not-independent", round_, False,
        )  # fmt: skip
        assert beacon["text"].startswith(
            f"operator-run beacon: not independent (local-beacon round {round_}, key "
            f"{receipt['beacon']['public_key'][:16]}…"
        ), beacon["text"]
        if receipt["outcome"] == "voided":
            assert (
                "not recorded within 30 s: the round was voided, every stake refunded"
                in (beacon["text"])
            )
        else:
            assert js["play"]["states"]["beacon"] == "checked"
            assert "the shoe was shuffled with it" in beacon["text"]


def test_a_quicknet_round_is_independent() -> None:
    """A round that waited for a real drand quicknet round (its published signature): the
    page's own BLS check passes under the pinned quicknet key, and says so."""
    played = [play(r, s, "quicknet", "none") for r in ("duel", "duel_classic") for s in (1, 2)]
    lines = [line_of(p) for p in played]
    found = run_node({"bundles": lines})["bundles"]
    for line, js in zip(lines, found, strict=True):
        round_ = line["receipt"]["beacon"]["round"]
        assert round_ in {r for r, _ in QUICKNET_ROUNDS}
        assert js["ok"], js["failures"]
        assert (js["beacon"]["state"], js["beacon"]["independent"]) == ("independent", True)
        assert js["beacon"]["text"].startswith(f"drand quicknet round {round_}: independent. ")


def test_a_shared_round_without_a_beacon_is_a_warning_and_one_seat_needs_none() -> None:
    """Without a beacon a duel of two seats still verifies, with the warning; a classic round
    (one seat) needs none; a beacon table's round of one seat awaited no round."""
    duel, duel_shoe = play_round("duel", 3, picker(3), players=2)
    classic, classic_shoe = play_round("classic", 4, picker(4))
    alone = line_of(play("duel_classic", 9, "local", "none", seats=1))
    lines = [forge(duel, duel_shoe), forge(classic, classic_shoe), alone]
    found = run_node({"bundles": lines})["bundles"]
    assert [js["failures"] for js in found] == [[], [], []]
    warned, plain, single = (js["beacon"] for js in found)
    assert warned["state"] == "warning"
    assert warned["text"].startswith("no beacon: a seat could choose its cards. ")
    assert plain["state"] == "none" and plain["text"].startswith("No beacon: one seat's round")
    assert "beacon" not in found[1]["checks"]
    assert alone["receipt"]["beacon"]["round"] is None
    assert single["state"] == "not-needed"
    assert single["text"].startswith("operator-run beacon: not independent (local-beacon, key ")
    assert single["text"].endswith(
        "No beacon round was used: one seat, nobody else's seed to choose against."
    )


def test_a_receipt_alone_checks_its_beacon_round() -> None:
    """A fairness-v2 receipt without its events: its beacon round's signature and randomness,
    and the material with the beacon's element; a flipped signature byte fails it."""
    line = beacon_round_line("duel", seed=2)
    receipt = json.loads(json.dumps(line["receipt"]))
    receipt["beacon"]["signature"] = _flip(receipt["beacon"]["signature"], picker(2))
    forged = bundle_line(receipt, line["events"], KEY)
    keep = ("receipt", "signature", "key_id", "public_key")
    items = [{k: line[k] for k in keep}, {k: forged[k] for k in keep}]
    honest, flipped = run_node({"receipts": items})["receipts"]
    assert honest["ok"], honest["failures"]
    assert honest["beacon"]["state"] == "not-independent"
    assert not flipped["ok"] and flipped["beacon"]["state"] == "failed"
    round_ = receipt["beacon"]["round"]
    assert flipped["failures"][0].startswith(
        f"beacon: round {round_}'s signature does not verify under the beacon's public key ("
    ), flipped["failures"]


def test_the_browser_verifier_passes_honest_beacon_rounds_and_fails_forged_ones() -> None:
    """Every forgery of TAMPERS fails verifier.js and names what: the beacon's check, the
    client material alone (a shoe shuffled without the beacon's element, the receipt naming
    it), or the play (a round recorded before the beacon published it)."""
    made = [(spec, beacon_line(spec)) for spec in specs(11, 2 * len(TAMPERS))]
    found = run_node({"bundles": [line for _, line in made]})["bundles"]
    for (spec, _), js in zip(made, found, strict=True):
        tamper = spec[3]
        assert js["ok"] == (tamper in HONEST), (spec, js["failures"])
        if tamper in HONEST:
            continue
        failures = js["failures"]
        named = {f.split(": ")[0] for f in failures if not f.startswith("play: ")}
        if tamper == "material":
            assert named == {"client material"}, (spec, failures)
        elif tamper == "recorded early":  # the rules refuse a round before its time
            assert failures[0].startswith("play: version "), (spec, failures)
            assert failures[0].endswith(" ms)") and " is published at " in failures[0]
        else:
            assert "beacon" in named, (spec, failures)
            assert js["beacon"]["state"] == "failed"


# --- verifier.js against the Python verifier -------------------------------------------------


def python_failures(line: dict[str, Any]) -> list[str]:
    return verify_round(line, KeyRing(), replay_check=CHECK).failures


@settings(
    max_examples=4, deadline=None, phases=(Phase.explicit, Phase.reuse, Phase.generate),
    suppress_health_check=[HealthCheck.too_slow],
)  # fmt: skip
@given(st.integers(0, 2**64 - 1))
def test_the_browser_and_the_python_verifier_agree_on_beacon_rounds(seed: int) -> None:
    """Honest rounds pass both verifiers; every forgery the beacon's checks must catch fails
    both (a flipped byte, another signer, changed randomness, an earlier or a later round, the
    shoe without the beacon, a deal that did not wait, a receipt naming another round), with
    the same failures in the same words (but the BLS library's own reason for refusing a
    point), and a failed play at the same version."""
    made = [(spec, beacon_line(spec)) for spec in specs(seed, 40)]
    found = run_node({"bundles": [line for _, line in made]})["bundles"]
    for (spec, line), js in zip(made, found, strict=True):
        python = python_failures(line)
        where = (spec, python[:2], js["failures"][:2])
        assert js["ok"] == (not python), where
        assert js["ok"] == (spec[3] in HONEST), where
        assert _checks(js["failures"]) == _checks(python), where
        assert _version(js["failures"]) == _version(python), where


def _checks(failures: list[str]) -> list[str]:
    """The failures but the play's, the BLS library's words for a refused point left out."""
    return [
        re.sub(r"(public key \w+…) \(.*\)$", r"\1 (…)", f)
        for f in failures
        if not f.startswith("play: ")
    ]


def test_a_void_while_waiting_says_when_it_came() -> None:
    """A void at the deadline says the beacon round never came; one before it (a staff void,
    valid) says whether the beacon had published the round by then."""
    lines = [
        line_of(play("duel", seed, "local", t)) for seed, t in ((31, "void"), (32, "early void"))
    ]
    at_deadline, waiting = (js["beacon"] for js in run_node({"bundles": lines})["bundles"])
    assert re.search(
        r" and not recorded within (10|30) s: the round was voided, every stake refunded; no "
        r"card was dealt\.$",
        at_deadline["text"],
    ), at_deadline["text"]
    assert (
        ", and the round was voided while it waited ('beacon_unavailable'), before its "
        in (waiting["text"])
    )
    assert waiting["text"].endswith(" Every stake was refunded; no card was dealt.")


def test_a_difference_after_the_beacon_is_named_at_its_own_version() -> None:
    """The first card after the beacon round with its hidden flag flipped: both proofs of
    play name that card's version and the flag."""
    line = beacon_round_line("duel", seed=4)
    events = json.loads(json.dumps(line["events"]))
    i = next(k for k, e in enumerate(events) if e["type"] == "PlayerCardDealt")
    events[i]["data"]["hidden"] = not events[i]["data"]["hidden"]
    receipt = line["receipt"]
    shoe = {k: receipt[k] for k in ("server_seed", "client_material", "nonce")}
    (js,) = run_node({"plays": [{"events": events, **shoe}]})["plays"]
    assert _version(js["failures"]) == i + 1 and "(hidden: recorded " in js["failures"][0]
    python = PLAY(events, receipt)  # type: ignore[misc]
    assert _version(python) == i + 1, python
