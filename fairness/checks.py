"""The checks of fairness-v1 section 5 on one bundle line, and the key ring. Pure: no Django.

Each check appends failure messages naming what differs and where; `fairness.verify` runs them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from fairness.canonical import canonical_json, canonical_json_float_free, first_difference
from fairness.chain import hash_seed, is_seed
from fairness.hashchain import GENESIS, recomputed_hashes
from fairness.receipt import (
    SETTLED_FIELDS,
    VOID_FIELDS,
    load_public_key,
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
    `fairness.hashchain.recomputed_hashes`, which computes the other cases), in this loop.
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


def check_client_material(
    receipt: Mapping[str, Any],
    by_type: Mapping[str, Mapping[str, Any]],
    fail: Callable[[str], None],
) -> None:
    material = receipt["client_material"]
    participants = receipt["participants"]
    joined = "|".join(p["client_seed"] for p in participants)
    if joined != material:
        fail(
            f"client material: {material!r}, but the participants' seeds "
            f"in seat order give {joined!r}"
        )
    opened = _one(by_type, "RoundOpened")
    if opened is not None:
        recorded = [(p["player_id"], p["client_seed"]) for p in opened["participants"]]
        listed = [(p["player_id"], p["client_seed"]) for p in participants]
        if recorded != listed:
            fail(
                f"client material: receipt participants {listed} "
                f"differ from RoundOpened's {recorded}"
            )
    closed = _one(by_type, "BettingClosed")
    if closed is None and receipt.get("outcome") == "voided" and not receipt.get("cards"):
        return  # voided before betting closed: nothing was locked, nothing was dealt
    if closed is None or closed.get("client_material") != material:
        got = None if closed is None else closed.get("client_material")
        fail(f"client material: BettingClosed locked {got!r}, the receipt says {material!r}")


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
