"""The checks of fairness-v1 section 5 on one bundle line, fairness-v2's beacon checks, and the
key ring. Pure: no Django.

Each check appends failure messages naming what differs and where; `fairness.verify` runs them.
`check_beacon` checks a beacon table's round in this module's own code (docs/fairness.md,
"fairness-v2"): the BLS signature (`fairness.beacon.verify`), the randomness, the round's time
against the lock, the receipt's beacon; and says whose beacon it was.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from fairness import beacon as drand
from fairness.canonical import (
    GENESIS,
    canonical_json,
    canonical_json_float_free,
    first_difference,
    recomputed_hashes,
)
from fairness.chain import hash_seed, is_seed
from fairness.receipt import (
    BEACON_FIELDS,
    RECEIPT_VERSION,
    RECEIPT_VERSION_V2,
    SETTLED_FIELDS,
    SPEC,
    SPEC_V2,
    VOID_FIELDS,
    load_public_key,
    receipt_beacon,
    verify_receipt,
)
from fairness.receipt import key_id as compute_key_id
from fairness.shoe import (
    SHOE_SIZE,
    FairnessInputError,
    first_cards,
    validate_client_material,
    validate_nonce,
    validate_server_seed,
)

try:
    import orjson as _orjson
except ImportError:  # optional, as in fairness.canonical
    _orjson = None  # type: ignore[assignment]

_DUMPS = _orjson.dumps if _orjson is not None else None
_SORT_KEYS = _orjson.OPT_SORT_KEYS if _orjson is not None else 0


class KeyRing:
    """Public keys by key id, from a keys file and/or the bundle lines themselves."""

    def __init__(self, published: Mapping[str, str] | None = None) -> None:
        self.published = dict(published) if published is not None else None
        # public key hex -> (its key id, the key, its 32 raw bytes)
        self._loaded: dict[str, tuple[str, Ed25519PublicKey, bytes]] = {}

    @classmethod
    def from_keys_document(cls, document: Any) -> KeyRing:
        """Read the JSON of GET /api/fairness/keys ({"keys": [{"key_id", "public_key"}]})."""
        entries = document["keys"] if isinstance(document, dict) else document
        return cls({entry["key_id"]: entry["public_key"] for entry in entries})

    def resolve(self, key_id: str, line_key: str | None) -> tuple[Ed25519PublicKey | None, str]:
        """The key to check a signature with, or None and why not."""
        key, why, _ = self.resolve_raw(key_id, line_key)
        return key, why

    def resolve_raw(
        self, key_id: str, line_key: str | None
    ) -> tuple[Ed25519PublicKey | None, str, bytes]:
        """`resolve`, and the key's 32 raw bytes (b"" when there is no key)."""
        if self.published is not None:
            published = self.published.get(key_id)
            if published is None:
                return None, f"key: unknown key id {key_id} (not in the published keys)", b""
            if line_key is not None and line_key != published:
                why = f"key: the bundle's public key for {key_id} is not the published one"
                return None, why, b""
            line_key = published
        if line_key is None:
            return None, f"key: unknown key id {key_id} (no public key given)", b""
        cached = self._loaded.get(line_key)
        if cached is not None:
            loaded_id, loaded, raw = cached
            if loaded_id != key_id:  # a key seen on an earlier line, under another key id
                why = f"key: public key {line_key[:16]}... does not have key id {key_id}"
                return None, why, b""
            return loaded, "", raw
        try:
            raw = bytes.fromhex(line_key)
            if compute_key_id(raw) != key_id:
                why = f"key: public key {line_key[:16]}... does not have key id {key_id}"
                return None, why, b""
            key = load_public_key(line_key)
        except ValueError:
            return None, f"key: malformed public key for key id {key_id}", b""
        self._loaded[line_key] = (key_id, key, raw)
        return key, "", raw


def check_signature(
    bundle: Mapping[str, Any],
    receipt: Mapping[str, Any],
    keys: KeyRing,
    fail: Callable[[str], None],
    *,
    float_free: bool = False,
) -> None:
    """The Ed25519 signature covers canonical_json(receipt), whatever the line's layout."""
    key_id, signature = bundle.get("key_id"), bundle.get("signature")
    if not isinstance(key_id, str) or not isinstance(signature, str):
        fail("signature: the line needs key_id and signature strings")
        return
    public_key, why, raw = keys.resolve_raw(key_id, bundle.get("public_key"))
    if public_key is None:
        fail(why)
        return
    if not verify_receipt(receipt, signature, public_key, float_free=float_free, raw_key=raw):
        fail(f"signature: not a valid Ed25519 signature of this receipt by key {key_id}")


class Scan(NamedTuple):
    """What one pass over a round's events gathers for the checks after the hash chain."""

    by_type: dict[str, Mapping[str, Any]]  # the data of each type's first event
    card_events: list[Mapping[str, Any]] | None  # the dealt and revealed cards' events, or
    # None when an event's type is not a string (check_cards then reads every event)


_CARD_EVENTS = frozenset({"HoleCardRevealed", "CardsRevealed"})
# Whether an event type (a str) deals or reveals a card, by type, as check_event_chain finds
# it; at most _IS_CARD_EVENT_MAX types are remembered (a round has a dozen or so).
_IS_CARD_EVENT: dict[str, bool] = {}
_IS_CARD_EVENT_MAX = 256


def check_event_chain(
    receipt: Mapping[str, Any],
    events: list[Any],
    fail: Callable[[str], None],
    *,
    float_free: bool = False,
) -> Scan:
    """Recompute every event hash from GENESIS over the canonical JSON of its body (never over
    the line's own text: a body hashed in any other layout is not the spec's hash); return the
    events' data grouped by type, and the card events.

    With `float_free` and orjson, each body's canonical JSON is orjson's (as in
    `fairness.canonical.recomputed_hashes`, which computes the other cases), in this loop.
    """
    by_type: dict[str, Mapping[str, Any]] = {}
    cards: list[Mapping[str, Any]] | None = []
    prev, stream = GENESIS, receipt["stream"]
    hashes = None if float_free and _DUMPS is not None else recomputed_hashes(events)
    dumps, sha256, sort_keys, is_card = _DUMPS, hashlib.sha256, _SORT_KEYS, _IS_CARD_EVENT.get
    version = 0
    for index, event in enumerate(events):
        version, type_, data = event["version"], event["type"], event["data"]
        if hashes is None:
            body = {
                "data": data,
                "recorded_at": event["recorded_at"],
                "schema_version": event["schema_version"],
                "stream": (event_stream := event["stream"]),
                "type": type_,
                "version": version,
            }
            try:
                text = dumps(body, None, sort_keys)
            except TypeError:  # past 64-bit ints, surrogates, odd keys: the exact encoder
                text = canonical_json(body)
            computed = sha256(prev.encode("ascii") + text).hexdigest()
        else:
            computed = hashes[index]
            event_stream = event["stream"]
        recorded = event.get("hash")
        if (
            event_stream != stream
            or version != index + 1
            or ("prev_hash" in event and event["prev_hash"] != prev)
        ):
            _chain_position_failures(event, index, prev, stream, fail)
        if recorded != computed:
            fail(
                f"event hash: version {version} ({type_}) records {recorded}, recomputed {computed}"
            )
            computed = recorded if isinstance(recorded, str) else computed  # check the rest
        prev = computed
        by_type.setdefault(type_, data)
        if cards is not None:
            card = is_card(type_)
            if card is None:  # a type not seen before
                if type(type_) is not str:
                    cards = None
                    continue
                card = type_.endswith("CardDealt") or type_ in _CARD_EVENTS
                if len(_IS_CARD_EVENT) < _IS_CARD_EVENT_MAX:
                    _IS_CARD_EVENT[type_] = card
            if card:
                cards.append(event)
    if prev != receipt["final_event_hash"] or version != receipt["final_event_version"]:
        fail(
            f"event hash: the receipt names final event v{receipt['final_event_version']} "
            f"{receipt['final_event_hash']}, the events end at v{version} {prev}"
        )
    return Scan(by_type, cards)


def _chain_position_failures(
    event: Mapping[str, Any], index: int, prev: str, stream: str, fail: Callable[[str], None]
) -> None:
    where = f"version {event['version']} ({event['type']})"
    if event["stream"] != stream:
        fail(f"event hash: {where} belongs to stream {event['stream']}, not {stream}")
    if event["version"] != index + 1:
        fail(f"event hash: {where} found where version {index + 1} belongs")
    if "prev_hash" in event and event["prev_hash"] != prev:
        fail(f"event hash: {where} records prev_hash {event['prev_hash']}, expected {prev}")


def _one(by_type: Mapping[str, Mapping[str, Any]], type_: str) -> Mapping[str, Any] | None:
    return by_type.get(type_)


def check_seed(
    receipt: Mapping[str, Any],
    by_type: Mapping[str, Mapping[str, Any]],
    fail: Callable[[str], None],
) -> None:
    seed, commitment = receipt["server_seed"], receipt["commitment"]
    if not is_seed(seed) or not is_seed(commitment):
        fail("seed: the server seed and commitment must be 64 lowercase hex characters")
        return
    if hash_seed(seed) != commitment:
        fail(
            f"seed: sha256 of server seed {seed} is {hash_seed(seed)}, "
            f"not the commitment {commitment}"
        )
    opened = _one(by_type, "RoundOpened")
    if opened is None:
        fail("seed: no RoundOpened event records the commitment")
    else:
        for name in (
            "commitment",
            "nonce",
            "chain_id",
            "round_id",
            "table_id",
            "ruleset",
            "ruleset_hash",
        ):
            if opened.get(name) != receipt[name]:
                fail(
                    f"seed: the receipt's {name} {receipt[name]!r} differs "
                    f"from RoundOpened's {opened.get(name)!r}"
                )
    revealed = _one(by_type, "ServerSeedRevealed")
    if revealed is None or revealed.get("server_seed") != seed:
        fail("seed: no ServerSeedRevealed event reveals the receipt's server seed")


def _sha256_of_signature(signature: Any) -> str | None:
    """hex SHA-256 of a beacon signature's bytes; None unless it is 96 lowercase hex digits."""
    if type(signature) is not str or _SIGNATURE(signature) is None:
        return None
    return hashlib.sha256(bytes.fromhex(signature)).hexdigest()


def _beacon_of(by_type: Mapping[str, Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """RoundOpened.beacon: the beacon the round's table reads (fairness-v2), or None."""
    opened = by_type.get("RoundOpened")
    spec = opened.get("beacon") if type(opened) is dict else None
    return spec if type(spec) is dict else None


def check_client_material(
    receipt: Mapping[str, Any],
    by_type: Mapping[str, Mapping[str, Any]],
    fail: Callable[[str], None],
) -> None:
    """Point 2: the material is the participants' seeds in seat order, as betting closed locked
    it; once a beacon round is recorded (fairness-v2) the seeds then the beacon's element
    "<name>:<round>:<randomness>", the randomness computed here from the signature."""
    material = receipt["client_material"]
    participants = receipt["participants"]
    joined = "|".join(p["client_seed"] for p in participants)
    spec = _beacon_of(by_type)
    recorded = by_type.get("BeaconRecorded") if spec is not None else None
    if spec is None or recorded is None:
        if joined != material:
            fail(
                f"client material: {material!r}, but the participants' seeds "
                f"in seat order give {joined!r}"
            )
    else:
        randomness = _sha256_of_signature(recorded["signature"])  # None: check_beacon names it
        element = f"{spec['name']}:{recorded['round']}:{randomness or recorded['randomness']}"
        expected = f"{joined}|{element}"
        if expected != material:
            fail(
                f"client material: {material!r}, but the participants' seeds in seat order "
                f"and the beacon's element give {expected!r}"
            )
        if recorded["client_material"] != material:
            fail(
                f"client material: BeaconRecorded's {recorded['client_material']!r} is not "
                f"the receipt's {material!r}"
            )
    opened = _one(by_type, "RoundOpened")
    if opened is not None:
        recorded_seats = [(p["player_id"], p["client_seed"]) for p in opened["participants"]]
        listed = [(p["player_id"], p["client_seed"]) for p in participants]
        if recorded_seats != listed:
            fail(
                f"client material: receipt participants {listed} "
                f"differ from RoundOpened's {recorded_seats}"
            )
    closed = _one(by_type, "BettingClosed")
    if closed is None and receipt.get("outcome") == "voided" and not receipt.get("cards"):
        return  # voided before betting closed: nothing was locked, nothing was dealt
    locked = material if recorded is None else joined
    if closed is None or closed.get("client_material") != locked:
        got = None if closed is None else closed.get("client_material")
        says = "the receipt says" if recorded is None else "the seats' seeds are"
        fail(f"client material: BettingClosed locked {got!r}, {says} {locked!r}")


# --- fairness-v2: the beacon ------------------------------------------------------------------

SHARED_RULESETS = ("duel", "duel_classic")  # tables of several seats, each with its own seed
NO_BEACON_WARNING = "no beacon: a seat could choose its cards"
NEVER_RECORDED = " (never recorded)"  # in beacon_words: awaited, then voided without it
_SIGNATURE = re.compile(r"[0-9a-f]{96}").fullmatch
_HEX_64 = re.compile(r"[0-9a-f]{64}").fullmatch
_HEX_192 = re.compile(r"[0-9a-f]{192}").fullmatch
_BEACON_NAME = re.compile(r"[a-z0-9-]+").fullmatch
_SPECS = {SPEC: RECEIPT_VERSION, SPEC_V2: RECEIPT_VERSION_V2}


class BeaconVerdict(NamedTuple):
    """What `check_beacon` says of a round besides its failures: whose beacon (`note`), or a
    shared-table round without one (`warning`)."""

    note: str | None = None
    warning: str | None = None


def is_quicknet(spec: Mapping[str, Any]) -> bool:
    """Whether a BeaconSpec is drand quicknet's: its public key, chain hash, genesis and period
    (another genesis or period would give its rounds other times)."""
    q = drand.QUICKNET
    return (
        spec.get("public_key") == q.public_key
        and spec.get("chain_hash") == q.chain_hash
        and spec.get("genesis_time") == q.genesis_time
        and spec.get("period") == q.period
    )


def beacon_words(spec: Mapping[str, Any], round: int | None, recorded: bool = True) -> str:
    """Which beacon key a round used, plainly: drand quicknet's (independent) or any other
    (operator-run, not independent); `round`: the round awaited (None: none was), `recorded`:
    whether it was recorded (the round was voided without it)."""
    which = "(no round awaited)" if round is None else f"round {round}"
    if round is not None and not recorded:
        which += NEVER_RECORDED
    if is_quicknet(spec):
        return f"beacon drand quicknet {which} (chain {spec['chain_hash'][:4]}…): independent"
    key = str(spec.get("public_key"))[:16]
    return f"beacon {spec.get('name')} {which}: operator-run beacon (key {key}…): not independent"


def _spec_problem(spec: Mapping[str, Any]) -> str | None:
    def whole(name: str, least: int) -> bool:
        value = spec.get(name)
        return type(value) is int and value >= least

    if type(spec.get("name")) is not str or _BEACON_NAME(spec["name"]) is None:
        return "its name is not of a-z 0-9 -"
    if type(spec.get("public_key")) is not str or _HEX_192(spec["public_key"]) is None:
        return "its public key is not 192 lowercase hex digits"
    if type(spec.get("chain_hash")) is not str or _HEX_64(spec["chain_hash"]) is None:
        return "its chain hash is not 64 lowercase hex digits"
    if not whole("genesis_time", 0) or not whole("period", 1):
        return "its genesis time and period are not whole seconds (the period at least 1)"
    if not whole("margin_s", 0) or not whole("wait_s", 0):
        return "its margin and wait are not whole seconds"
    q = drand.QUICKNET
    quicknet = (spec["public_key"] == q.public_key, spec["chain_hash"] == q.chain_hash)
    if any(quicknet) and not is_quicknet(spec):
        return (
            "it has quicknet's public key or chain hash but not all of quicknet's key, chain "
            f"hash, genesis time {q.genesis_time} and period {q.period}"
        )
    return None


def check_receipt_version(
    receipt: Mapping[str, Any],
    by_type: Mapping[str, Mapping[str, Any]],
    fail: Callable[[str], None],
) -> None:
    """The receipt names the version it follows: fairness-v2 (receipt_version 2) exactly when
    the round's table reads a beacon (RoundOpened.beacon), else fairness-v1 (1)."""
    spec, version = receipt.get("spec"), receipt.get("receipt_version")
    if type(spec) is not str or spec not in _SPECS:
        fail(f"receipt: unknown spec {spec!r} (this verifier reads {SPEC} and {SPEC_V2})")
        return
    if type(version) is not int or version != _SPECS[spec]:
        fail(f"receipt: a {spec} receipt has receipt_version {_SPECS[spec]}, not {version!r}")
    beacon = _beacon_of(by_type)
    if beacon is None and spec == SPEC_V2:
        fail("beacon: the receipt is fairness-v2, but the round's table reads no beacon "
             "(RoundOpened has none)")  # fmt: skip
    elif beacon is not None and spec != SPEC_V2:
        fail(f"beacon: the round's table reads the beacon {beacon.get('name')!r}, but its "
             f"receipt is {spec}, not {SPEC_V2}")  # fmt: skip


def check_beacon(
    receipt: Mapping[str, Any],
    by_type: Mapping[str, Mapping[str, Any]],
    events: list[Any],
    fail: Callable[[str], None],
) -> BeaconVerdict:
    """fairness-v2 on one round, in this code's own terms (not the engine's): at a beacon
    table (RoundOpened.beacon), when betting closes with two or more seats, BeaconAwaited names
    the FIRST beacon round whose time (genesis + (R - 1) * period) is strictly after the lock
    (BettingClosed.closed_at_ms floored to seconds) + margin_s, with that time and the
    deadline (time + wait_s) * 1000; BeaconRecorded's signature is the beacon's BLS signature
    of round R under the spec's public key, its randomness the SHA-256 of the signature, its
    material the locked seeds + "|<name>:<R>:<randomness>" (check_client_material holds the
    receipt's to it; check_cards the cards to its shoe), recorded before the deadline and
    before any card; no card without it, and then the round is voided; the receipt's beacon
    is the events'. A shared table's round of two or more seats without a beacon gets a
    warning, not a failure (rounds before fairness-v2 had none)."""
    opened = by_type.get("RoundOpened")
    if type(opened) is not dict:
        return BeaconVerdict()
    spec = _beacon_of(by_type)
    seats = len(opened["participants"])
    closed = by_type.get("BettingClosed")
    if spec is None:
        if "beacon" in opened:
            fail("beacon: RoundOpened.beacon is not an object")
            return BeaconVerdict()
        shared = opened.get("ruleset") in SHARED_RULESETS and seats >= 2
        if shared and closed is not None:
            why = f"{NO_BEACON_WARNING} ({opened['ruleset']}, {seats} seats)"
            return BeaconVerdict(warning=why)
        return BeaconVerdict()
    problem = _spec_problem(spec)
    if problem is not None:
        fail(f"beacon: the table's beacon (RoundOpened.beacon) cannot be checked: {problem}")
        return BeaconVerdict()
    where: dict[str, list[int]] = {"BeaconAwaited": [], "BeaconRecorded": [], "BettingClosed": []}
    first_card: int | None = None
    for index, event in enumerate(events):
        type_ = event["type"]
        if type_ in where:
            where[type_].append(index)
        elif first_card is None and type(type_) is str and type_.endswith("CardDealt"):
            first_card = index
    for type_ in ("BeaconAwaited", "BeaconRecorded"):
        if len(where[type_]) > 1:
            fail(f"beacon: {len(where[type_])} {type_} events; a round has one at most")
    awaited, recorded = by_type.get("BeaconAwaited"), by_type.get("BeaconRecorded")
    genesis, period = spec["genesis_time"], spec["period"]
    margin, wait = spec["margin_s"], spec["wait_s"]
    round_: int | None = None
    if awaited is not None:
        round_ = awaited["round"]
        if closed is None:
            fail(f"beacon: BeaconAwaited names round {round_}, but betting never closed")
        elif seats < 2:
            fail(f"beacon: BeaconAwaited names round {round_}, but one seat needs no beacon")
        if type(round_) is not int or not 1 <= round_ <= drand.MAX_ROUND:
            fail(f"beacon: BeaconAwaited names round {round_!r}, not a round (1 to 2**64 - 1)")
            round_ = None
        elif closed is not None:
            if where["BeaconAwaited"][0] != where["BettingClosed"][0] + 1:
                fail("beacon: BeaconAwaited does not follow BettingClosed")
            lock = closed["closed_at_ms"] // 1000
            after = lock + margin
            first = 1 if after < genesis else (after - genesis) // period + 2
            time = genesis + (round_ - 1) * period
            if time <= after:
                fail(
                    f"beacon: round {round_} (at {time} s) is not after the lock: its time "
                    f"must be after the lock's {lock} s + {margin} s = {after} s"
                )
            elif round_ != first:
                fail(
                    f"beacon: round {round_} is not the first round after the lock ({lock} s "
                    f"+ {margin} s): round {first}, at {genesis + (first - 1) * period} s, is"
                )
            if awaited["round_time"] != time:
                fail(
                    f"beacon: BeaconAwaited says round {round_} is at {awaited['round_time']!r}"
                    f" s; the beacon publishes it at {time} s"
                )
            if awaited["deadline_ms"] != (time + wait) * 1000:
                fail(
                    f"beacon: BeaconAwaited's deadline {awaited['deadline_ms']!r} ms is not "
                    f"round {round_}'s time + {wait} s, {(time + wait) * 1000} ms"
                )
    elif closed is not None and seats >= 2:
        fail(
            f"beacon: betting closed with {seats} seats at a table reading {spec['name']}, "
            "but no BeaconAwaited names the beacon round the deal waits for"
        )
    if recorded is not None:
        got = recorded["round"]
        if awaited is None:
            fail(f"beacon: BeaconRecorded records round {got!r}, which no BeaconAwaited named")
        elif got != awaited["round"]:
            fail(f"beacon: BeaconRecorded records round {got!r}, not the awaited round {round_}")
        elif where["BeaconRecorded"][0] < where["BeaconAwaited"][0]:
            fail("beacon: BeaconRecorded comes before BeaconAwaited")
        signature = recorded["signature"]
        try:
            drand.verify(got, signature, spec["public_key"])
        except drand.BeaconError as exc:
            fail(
                f"beacon: round {got!r}'s signature does not verify under the beacon's public "
                f"key {spec['public_key'][:16]}… ({exc})"
            )
        randomness = _sha256_of_signature(signature)
        if randomness is not None:
            if recorded["randomness"] != randomness:
                fail(
                    f"beacon: BeaconRecorded's randomness {recorded['randomness']!r} is not the "
                    f"SHA-256 of the signature, {randomness}"
                )
            seeds = closed["client_material"] if closed is not None else "?"
            wanted = f"{seeds}|{spec['name']}:{got}:{randomness}"
            if recorded["client_material"] != wanted:
                fail(
                    f"beacon: BeaconRecorded's client material {recorded['client_material']!r} "
                    f"is not the locked seeds with the beacon's element, {wanted!r}"
                )
        if first_card is not None and first_card < where["BeaconRecorded"][0]:
            fail(f"beacon: a card was dealt (version {first_card + 1}) before the beacon round")
        if awaited is not None and not (
            type(recorded["recorded_at_ms"]) is int
            and type(awaited["deadline_ms"]) is int
            and recorded["recorded_at_ms"] < awaited["deadline_ms"]
        ):
            fail(
                f"beacon: round {got!r} was recorded at {recorded['recorded_at_ms']!r} ms, not "
                f"before its deadline {awaited['deadline_ms']!r} ms"
            )
    elif awaited is not None:
        if first_card is not None:
            fail(f"beacon: cards were dealt, but beacon round {round_} was never recorded")
        if receipt.get("outcome") != "voided":
            fail(f"beacon: beacon round {round_} was never recorded, and the round is not voided")
    if receipt.get("spec") == SPEC_V2:
        want = receipt_beacon(spec, awaited, recorded)
        have = receipt.get("beacon")
        if type(have) is not dict:
            fail("beacon: the fairness-v2 receipt names no beacon")
        else:
            for name in BEACON_FIELDS:
                if name in have and canonical_json(have[name]) != canonical_json(want[name]):
                    fail(
                        f"beacon: the receipt's beacon {name} {have[name]!r} is not the "
                        f"events' {want[name]!r}"
                    )
    return BeaconVerdict(note=beacon_words(spec, round_, recorded is not None))


def check_cards(
    receipt: Mapping[str, Any],
    events: list[Any],
    fail: Callable[[str], None],
    card_events: list[Mapping[str, Any]] | None = None,
) -> int:
    """Every card dealt, in event order, is the shoe at positions 0, 1, 2, ...

    `card_events`: the events among `events` that deal or reveal a card (`Scan.card_events`),
    when already known.
    """
    seed, material, nonce = receipt["server_seed"], receipt["client_material"], receipt["nonce"]
    try:  # what FairShoe(seed, material, nonce) checks, in its order
        validate_server_seed(seed)
        validate_client_material(material)
        validate_nonce(nonce)
    except FairnessInputError as exc:
        fail(f"cards: cannot rebuild the shoe ({exc})")
        return 0
    dealt: list[tuple[str, Mapping[str, Any]]] = []
    reveals: list[tuple[str, list[Mapping[str, Any]]]] = []  # cards a reveal shows again
    for event in events if card_events is None else card_events:
        type_ = event["type"]
        if type_.endswith("CardDealt"):
            dealt.append((type_, event["data"]))
        elif type_ == "HoleCardRevealed":  # the hole card
            reveals.append((type_, [event["data"]]))
        elif type_ == "CardsRevealed":  # duel's hidden cards
            reveals.append((type_, list(event["data"].get("cards", []))))
    cards: list[str] | None = None
    for index, (type_, data) in enumerate(dealt):
        position, card = data["position"], data["card"]
        if position != index:
            fail(
                f"cards: dealt card #{index} ({type_} {card}) is at position {position}, "
                f"expected {index} (no skips)"
            )
            continue
        if cards is None:  # every position the round dealt, computed in one pass
            cards = first_cards(seed, material, nonce, min(len(dealt), SHOE_SIZE))
        expected = cards[position] if position < len(cards) else "no card (the shoe has 416)"
        if card != expected:
            fail(f"cards: position {position} dealt {card}, the shoe has {expected}")
    for type_, shown in reveals:
        for item in shown:
            position, card = item["position"], item["card"]
            if 0 <= position < len(dealt) and card != dealt[position][1]["card"]:
                was = dealt[position][1]["card"]
                fail(f"cards: {type_} shows {card} at position {position}, dealt was {was}")
    stated = [(c["position"], c["card"]) for c in receipt["cards"]]
    recorded = [(d["position"], d["card"]) for _, d in dealt]
    if stated != recorded:
        pairs = zip(stated, recorded, strict=False)
        first = next(
            (i for i, (a, b) in enumerate(pairs) if a != b), min(map(len, (stated, recorded)))
        )
        said = stated[first] if first < len(stated) else "missing"
        seen = recorded[first] if first < len(recorded) else "missing"
        fail(f"cards: the receipt's card #{first} {said} differs from the events' {seen}")
    return len(dealt)


def check_outcome(
    receipt: Mapping[str, Any],
    by_type: Mapping[str, Mapping[str, Any]],
    fail: Callable[[str], None],
    *,
    float_free: bool = False,
) -> None:
    """Point 4 as far as the receipt states it: its outcome and payouts are the events' own."""
    outcome, payouts = receipt["outcome"], receipt["payouts"]
    voided, settled = _one(by_type, "RoundVoided"), _one(by_type, "RoundSettled")
    if outcome == "voided":
        if voided is None:
            fail("outcome: the receipt says voided but no RoundVoided event exists")
            return
        expected = {name: voided.get(name) for name in VOID_FIELDS}
    elif outcome == "settled":
        if settled is None or voided is not None:
            fail("outcome: the receipt says settled but the events do not end settled")
            return
        expected = {name: settled.get(name) for name in SETTLED_FIELDS}
    else:
        fail(f"outcome: unknown outcome {outcome!r}")
        return
    encode = canonical_json_float_free if float_free else canonical_json
    if encode(payouts) != encode(expected):
        fail(
            f"outcome: the receipt's payouts differ from the {outcome} event's "
            f"({first_difference(payouts, expected, 'payouts', ('receipt', 'events'))})"
        )
