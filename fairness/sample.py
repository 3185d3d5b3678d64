"""Sample rounds in the bundle format, for tests, docs, benchmarks and demos. Pure: no Django.

`sample_bundle` plays a round (players hit below 12), chains its events' hashes as the event
store does, and signs its receipt. `beacon_round_line` plays a shared-table round that waits
for a beacon (fairness-v2), with the operator-run demo beacon `sample_beacon()`.
The rounds are played through the rule engine, exactly as the round service plays them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from casino.engine import commands as c
from casino.engine.decider import step
from casino.engine.events import (
    BeaconAwaited,
    BeaconSpec,
    Participant,
    RoundOptions,
    beacon_material,
    event_to_dict,
)
from fairness.beacon import LocalBeacon, local_secret_key
from fairness.bundle import line_format
from fairness.canonical import GENESIS, event_hash
from fairness.chain import Chain, create_chain, hash_seed
from fairness.receipt import (
    key_id,
    private_key_from_hex,
    public_key_bytes,
    receipt_from_events,
    sign_receipt,
)
from fairness.shoe import FairShoe

BASE_TIME = datetime(2026, 1, 1, tzinfo=UTC)
STAKE = 10_000_000  # 10 USDC in micro-USDC
NOW_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z: a fixed clock, no deadline ever passes


def sample_events(
    *,
    round_id: str,
    server_seed: str,
    client_seeds: list[str],
    nonce: int,
    ruleset: str | None = None,
    void_reason: str | None = None,
    table_id: str = "table-1",
    chain_id: str = "chain-1",
) -> list[tuple[str, dict[str, Any]]]:
    """The (type, data) events of one round played through the rule engine.

    Players hit below 12 and stand otherwise and decline insurance; `void_reason` voids the
    round once the cards are dealt. Classic for one player, duel_classic (banked, up to 7 seats)
    for more, unless `ruleset` says otherwise.
    """

    players = [f"p{i + 1}" for i in range(len(client_seeds))]
    name = ruleset or ("classic" if len(players) == 1 else "duel_classic")
    shoe = FairShoe(server_seed, "|".join(client_seeds), nonce)
    opening = c.OpenRound(
        round_id, table_id, name, chain_id, nonce, hash_seed(server_seed),
        tuple(Participant(p, s) for p, s in zip(players, client_seeds, strict=True)),
        RoundOptions(1_000_000, 100_000_000, stake=STAKE if name == "duel" else 0),
    )  # fmt: skip
    events, state = step(None, opening, NOW_MS, shoe)
    if name != "duel":
        for player in players:
            more, state = step(state, c.PlaceBet(player, (STAKE,)), NOW_MS, shoe)
            events += more
    if void_reason is not None:
        more, state = step(state, c.VoidRound(void_reason, "sample"), NOW_MS, shoe)
        events += more
    return play_out(events, state, shoe, server_seed)


def play_out(
    events: list[Any],
    state: Any,
    shoe: Any,
    server_seed: str,
    *,
    split_pairs: bool = False,
    now_ms: int = NOW_MS,
) -> list[tuple[str, dict[str, Any]]]:
    """Play a round to its end after `events` (players decline insurance, hit below 12 and
    stand otherwise; with `split_pairs` a box's first pair is split), every command at
    `now_ms`, reveal its seed, and give every event as (type, data)."""
    while not state.finished:
        command: Any
        if state.phase == "insurance":
            box = next(b for b in state.boxes if b.insurance_status.endswith("offered"))
            command = c.DeclineInsurance(box.player_id, box.box)
        elif state.phase == "dueling":
            box = next(b for b in state.boxes if b.hands[0].status == "open")
            command = (c.Hit if box.hands[0].total < 12 else c.Stand)(box.player_id)
        else:
            box = state.boxes[state.turn]
            hand = box.hands[state.turn_hand]
            pair = len(hand.cards) == 2 and hand.cards[0][0] == hand.cards[1][0]
            if split_pairs and pair and len(box.hands) == 1 and state.rules.max_hands > 1:
                command = c.Split(box.player_id)
            else:
                command = (c.Hit if hand.total < 12 else c.Stand)(box.player_id)
        more, state = step(state, command, now_ms, shoe)
        events += more
    more, state = step(state, c.RevealSeed(server_seed), now_ms, shoe)
    events += more
    out = []
    for event in events:
        data = event_to_dict(event)
        out.append((data.pop("type"), data))
    return out


def round_start(nonce: int) -> datetime:
    """When a sample round's events start: the round on nonce k opens k seconds after
    BASE_TIME, one event a millisecond, so a chain's rounds open after the previous reveal."""
    return BASE_TIME + timedelta(seconds=nonce)


def stored_events(
    stream: str,
    events: list[tuple[str, dict[str, Any]]],
    start: datetime = BASE_TIME,
    times: list[str] | None = None,
) -> list[dict[str, Any]]:
    """Events as the event store keeps them: body fields plus the chained hash. Version v is
    recorded v milliseconds after `start`, or at `times[v - 1]` when given."""
    stored, prev = [], GENESIS
    for version, (type_, data) in enumerate(events, start=1):
        at = (start + timedelta(milliseconds=version)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        body = {
            "stream": stream, "version": version, "type": type_, "schema_version": 1,
            "data": data, "recorded_at": at if times is None else times[version - 1],
        }  # fmt: skip
        prev = event_hash(prev, body)
        stored.append({**body, "hash": prev})
    return stored


def bundle_line(
    receipt: dict[str, Any],
    events: list[dict[str, Any]],
    private_key: Ed25519PrivateKey,
    *,
    include_public_key: bool = True,
) -> dict[str, Any]:
    """One bundle line: the receipt, its signature, the key id (and key), the events."""
    public = public_key_bytes(private_key)
    line: dict[str, Any] = {
        "format": line_format(receipt),
        "receipt": receipt,
        "signature": sign_receipt(receipt, private_key),
        "key_id": key_id(public),
        "events": events,
    }
    if include_public_key:
        line["public_key"] = public.hex()
    return line


def sample_bundle(
    *,
    round_id: str,
    server_seed: str,
    client_seeds: list[str],
    nonce: int,
    private_key: Ed25519PrivateKey,
    ruleset: str | None = None,
    void_reason: str | None = None,
) -> dict[str, Any]:
    """A complete, valid bundle line for one sample round."""
    stream = f"round-{round_id}"
    events = stored_events(
        stream,
        sample_events(
            round_id=round_id,
            server_seed=server_seed,
            client_seeds=client_seeds,
            nonce=nonce,
            ruleset=ruleset,
            void_reason=void_reason,
        ),
        round_start(nonce),
    )
    return bundle_line(receipt_from_events(stream, events), events, private_key)


def resign(
    line: dict[str, Any], private_key: Ed25519PrivateKey, *, keep_times: bool = False
) -> dict[str, Any]:
    """Re-chain the events and re-sign the receipt after a tamper (a forger's best effort).

    The events are recorded as `sample_bundle` records them for the receipt's nonce, or, with
    `keep_times`, at their own recorded_at (a forger's changed times)."""
    stream = line["receipt"]["stream"]
    events = stored_events(
        stream,
        [(e["type"], e["data"]) for e in line["events"]],
        round_start(line["receipt"]["nonce"]),
        [e["recorded_at"] for e in line["events"]] if keep_times else None,
    )
    receipt = {
        **line["receipt"],
        "final_event_hash": events[-1]["hash"],
        "final_event_version": events[-1]["version"],
    }
    return bundle_line(receipt, events, private_key)


# --- Beacon rounds (fairness-v2) ------------------------------------------------------------

BEACON_RULESETS = ("duel", "duel_classic")
BEACON_MARGIN_S = 3  # the product's defaults (docs/fairness.md, "fairness-v2")
BEACON_WAIT_S = 30
BEACON_FETCH_MS = 400  # how long after its time the sample's beacon round is recorded
BEACON_CHAIN_LENGTH = 1_000  # beacon_round_line's `seed` is 0 .. 998
# The operator's demo receipt key of the beacon samples (never use it for real).
BEACON_SAMPLE_KEY_HEX = hashlib.sha256(b"fairness sample beacon operator").hexdigest()


@cache
def sample_beacon() -> LocalBeacon:
    """The demo operator-run beacon: `LocalBeacon(local_secret_key("sample"))` (not independent)."""
    return LocalBeacon(local_secret_key("sample"))


def beacon_spec(
    beacon: LocalBeacon | None = None,
    *,
    margin_s: int = BEACON_MARGIN_S,
    wait_s: int = BEACON_WAIT_S,
) -> BeaconSpec:
    """The RoundOpened.beacon of a table reading `beacon` (default: `sample_beacon()`)."""
    b = (beacon or sample_beacon()).beacon
    return BeaconSpec(
        b.name, b.chain_hash, b.public_key, b.genesis_time, b.period, margin_s, wait_s
    )


@cache
def _beacon_chain() -> Chain:
    return create_chain(
        BEACON_CHAIN_LENGTH, head=hashlib.sha256(b"sample beacon chain").hexdigest()
    )


def signed_material(client_material: str, spec: BeaconSpec, round: int, signature: str) -> str:
    """The shoe's material once beacon round `round` is recorded with `signature`: the engine's
    `beacon_material` with the signature's randomness (its SHA-256)."""
    randomness = hashlib.sha256(bytes.fromhex(signature)).hexdigest()
    return beacon_material(client_material, spec, round, randomness)


def beacon_round_events(
    ruleset: str,
    *,
    seed: int = 0,
    void: bool = False,
    spec: BeaconSpec | None = None,
    sign: Callable[[int], str] | None = None,
    opened_at_ms: int | None = None,
    shoe_material: Callable[[str, str], str] | None = None,
    chain_id: str | None = None,
) -> tuple[list[tuple[str, dict[str, Any]]], list[int]]:
    """A finished beacon round played through the rule engine, as (type, data) events, and
    the time (ms) of the command that made each event. See `beacon_round_line`.

    For other beacons and for tests' forgeries: `spec` (default `beacon_spec()`), `sign`
    (round -> its signature; default `sample_beacon().sign_round`), `opened_at_ms` (default
    NOW_MS + nonce minutes), `shoe_material` ((the seats' seeds, the material the engine
    records) -> the material the shoe is built with; default the recorded one), `chain_id`
    (default "beacon-<ruleset>", "-void" after it for a void)."""
    if ruleset not in BEACON_RULESETS:
        raise ValueError(f"a beacon round is at a shared table: {BEACON_RULESETS}, not {ruleset!r}")
    if not 0 <= seed < BEACON_CHAIN_LENGTH - 1:
        raise ValueError(f"seed is 0 .. {BEACON_CHAIN_LENGTH - 2}")
    spec = spec or beacon_spec()
    sign = sign or sample_beacon().sign_round
    nonce, chain = seed + 1, _beacon_chain()
    server_seed = chain.seed(nonce)
    seats = 2 + seed % 3
    seeds = [f"seat{i + 1}-{seed}" for i in range(seats)]
    players = [f"p{i + 1}" for i in range(seats)]
    opened_at = NOW_MS + nonce * 60_000 if opened_at_ms is None else opened_at_ms
    suffix = "-void" if void else ""
    opening = c.OpenRound(
        f"{ruleset}-beacon-{seed}{suffix}", f"table-{ruleset}", ruleset,
        chain_id or f"beacon-{ruleset}{suffix}", nonce, chain.seed(nonce - 1),
        tuple(Participant(p, s) for p, s in zip(players, seeds, strict=True)),
        RoundOptions(1_000_000, 100_000_000, stake=STAKE if ruleset == "duel" else 0),
        spec,
    )  # fmt: skip
    seats_shoe = FairShoe(server_seed, "|".join(seeds), nonce)  # deals nothing before the beacon
    events, state = step(None, opening, opened_at, seats_shoe)
    times = [opened_at] * len(events)
    if ruleset != "duel":
        for player in players:
            more, state = step(state, c.PlaceBet(player, (STAKE,)), opened_at, seats_shoe)
            events += more
            times += [opened_at] * len(more)
    awaited = events[-1]
    assert isinstance(awaited, BeaconAwaited), awaited
    if void:  # the beacon never came: the round voids at its deadline
        now = awaited.deadline_ms
        more, state = step(state, c.Timeout(), now, seats_shoe)
        shoe: Any = seats_shoe
    else:
        round = awaited.round
        now = awaited.round_time * 1000 + BEACON_FETCH_MS
        signature = sign(round)
        locked = "|".join(seeds)
        material = signed_material(locked, spec, round, signature)
        if shoe_material is not None:
            material = shoe_material(locked, material)
        shoe = FairShoe(server_seed, material, nonce)
        more, state = step(state, c.RecordBeacon(round, signature), now, shoe)
    events += more
    played = play_out(events, state, shoe, server_seed, now_ms=now)
    return played, times + [now] * (len(played) - len(times))


def recorded_at_text(ms: int, micros: int = 0) -> str:
    """A recorded_at (YYYY-MM-DDTHH:MM:SS.ffffffZ) `micros` microseconds after time `ms`."""
    moment = datetime.fromtimestamp(ms / 1000, UTC) + timedelta(microseconds=micros)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def timed_line(
    events: list[tuple[str, dict[str, Any]]],
    times: Sequence[int | str],
    private_key: Ed25519PrivateKey | None = None,
) -> dict[str, Any]:
    """A signed bundle line of these (type, data) events: event v recorded at times[v - 1]
    (a recorded_at, or the ms of its command: then one microsecond after it per version),
    its receipt built from them (`receipt_from_events`) and signed by `private_key`
    (default BEACON_SAMPLE_KEY_HEX's)."""
    stream = f"round-{events[0][1]['round_id']}"
    texts = [t if isinstance(t, str) else recorded_at_text(t, v) for v, t in enumerate(times, 1)]
    stored = stored_events(stream, events, times=texts)
    key = private_key or private_key_from_hex(BEACON_SAMPLE_KEY_HEX)
    return bundle_line(receipt_from_events(stream, stored), stored, key)


def beacon_round_line(ruleset: str, *, seed: int = 0, void: bool = False) -> dict[str, Any]:
    """One signed fairness-v2 bundle line: a finished `duel` or `duel_classic` round at a
    table reading the demo local beacon (`sample_beacon()`, margin 3 s, wait 30 s).

    `seed` (0 .. 998) picks the round: nonce seed + 1 of a fixed chain (its seeds link from
    line to line), 2 + seed % 3 seats with client seeds "seat<i>-<seed>", opened at
    NOW_MS + nonce minutes. The seats lock at the open (duel) or on the last bet
    (duel_classic, everyone betting 10 USDC); the round waits for the first beacon round
    after lock + 3 s, recorded 400 ms after its time, and is then played out as `play_out`
    plays (hit below 12). `void`: the beacon never comes, and the round is voided
    (`beacon_unavailable`, stakes refunded) at its deadline, 30 s after the round's time
    (round id and chain id end in "-void"). Each event is recorded at its command's time,
    one microsecond apart; the receipt is signed by BEACON_SAMPLE_KEY_HEX, whose public key
    is in the line.
    """
    return timed_line(*beacon_round_events(ruleset, seed=seed, void=void))
