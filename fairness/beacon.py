"""The drand "quicknet" randomness beacon, and a local beacon in the same format. Pure.

Scheme `bls-unchained-g1-rfc9380` (drand's `SigsOnG1ID`): round R's signature is a BLS
signature on G1 (48 bytes compressed) of

    message(R) = SHA-256(R as 8-byte big-endian)

hashed to G1 with RFC 9380's hash-to-curve under the DST below, by a public key on G2 (96 bytes
compressed). The signature is valid when e(signature, G2 generator) == e(H(message), public key).
The round's randomness is SHA-256(signature). "Unchained": a round's message depends on its
number only, so anyone can compute today the message of a future round R, and nobody (not the
operator either) can know its signature before the League of Entropy publishes it at
round_time(R).

Rounds: round 1 is at the genesis time, round R at genesis + (R - 1) * period.

`verify(round, signature_hex, public_key=QUICKNET)` returns the randomness or raises
`BeaconError`. `LocalBeacon` signs rounds with its own key, in the same scheme, so that `verify`
accepts them under its public key: it is operator-run and so not independent
(`Beacon.independent`), for tables that cannot wait for (or reach) drand.

The pairings are py-arkworks-bls12381's (Rust, arkworks; ~3.5 ms a verification here). The
tests check one verification against py-ecc (pure Python) and all of them against the
browser's @noble/curves (fairness/static/fairness/beacon.js).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import struct
from dataclasses import dataclass
from functools import lru_cache

from py_arkworks_bls12381 import GT, G1Point, G2Point, Scalar

SCHEME = "bls-unchained-g1-rfc9380"
DST = b"BLS_SIG_BLS12381G1_XMD:SHA-256_SSWU_RO_NUL_"
# The order of G1 and G2 (the BLS12-381 scalar field): secret keys are below it.
CURVE_ORDER = 0x73EDA753299D7D483339D80809A1D80553BDA402FFFE5BFEFFFFFFFF00000001
SIGNATURE_BYTES = 48
PUBLIC_KEY_BYTES = 96
MAX_ROUND = 2**64 - 1

# Quicknet's chain info, byte for byte as drand's relays publish it at
# /52db9ba70e0cc0f6eaf7803dd07447a1f5477735fd3f661792ba94600c84e971/info (the v1 HTTP API).
# `hash` is the chain hash, computed from the rest (chain_hash() below; the test checks it).
QUICKNET_INFO_JSON = (
    '{"public_key":"83cf0f2896adee7eb8b5f01fcad3912212c437e0073e911fb90022d3e760183c8c4b450b6a0a'
    "6c3ac6a5776a2d1064510d1fec758c921cc22b0e17e63aaf4bcb5ed66304de9cf809bd274ca73bab4af5a6e9c76"
    'a4bc09e76eae8991ef5ece45a","period":3,"genesis_time":1692803367,"hash":"52db9ba70e0cc0f6eaf'
    '7803dd07447a1f5477735fd3f661792ba94600c84e971","groupHash":"f477d5c89f21a17c863a7f937c6a6d1'
    '5859414d2be09cd448d4279af331c5d3e","schemeID":"bls-unchained-g1-rfc9380","metadata":{"beac'
    'onID":"quicknet"}}'
)
QUICKNET_INFO: dict[str, object] = json.loads(QUICKNET_INFO_JSON)

_HEX_SIGNATURE = re.compile(r"[0-9a-f]{96}")
_HEX_PUBLIC_KEY = re.compile(r"[0-9a-f]{192}")


class BeaconError(ValueError):
    """A beacon round that does not verify, or malformed input; the message says which."""


def chain_hash(
    *, period: int, genesis_time: int, public_key: bytes, genesis_seed: bytes, beacon_id: str
) -> str:
    """drand's chain hash (chain.Info.Hash in drand's Go code): SHA-256 of the period in seconds
    (4 bytes big-endian), the genesis time (8 bytes big-endian, signed), the compressed public
    key, the genesis seed (the info's `groupHash`) and, for a beacon id other than "default",
    the beacon id."""
    h = hashlib.sha256(struct.pack(">Iq", period, genesis_time) + public_key + genesis_seed)
    if beacon_id not in ("", "default"):
        h.update(beacon_id.encode())
    return h.hexdigest()


@dataclass(frozen=True)
class Beacon:
    """Which beacon, and which key, a round's randomness came from: what a receipt names."""

    name: str  # the material element's prefix: "drand-quicknet", "local-beacon"
    public_key: str  # hex of the 96-byte compressed G2 point
    chain_hash: str
    genesis_time: int
    period: int
    independent: bool  # run by others than the operator, who cannot know a round ahead
    scheme: str = SCHEME

    @property
    def description(self) -> str:
        if self.independent:
            return f"drand quicknet (League of Entropy), chain {self.chain_hash}: independent"
        return "operator-run beacon: not independent"

    def round_time(self, round: int) -> int:
        return round_time(round, self)

    def round_at(self, unix_seconds: float) -> int:
        return round_at(unix_seconds, self)


def _info_str(key: str) -> str:
    value = QUICKNET_INFO[key]
    assert isinstance(value, str)
    return value


def _info_int(key: str) -> int:
    value = QUICKNET_INFO[key]
    assert isinstance(value, int)
    return value


QUICKNET = Beacon(
    name="drand-quicknet",
    public_key=_info_str("public_key"),
    chain_hash=_info_str("hash"),
    genesis_time=_info_int("genesis_time"),
    period=_info_int("period"),
    independent=True,
)


def _check_round(round: int) -> int:
    if type(round) is not int or not 1 <= round <= MAX_ROUND:
        raise BeaconError(f"a round is an integer from 1 to 2**64 - 1, not {round!r}")
    return round


def _seconds(unix_seconds: float) -> int:
    if type(unix_seconds) not in (int, float) or not math.isfinite(unix_seconds):
        raise BeaconError(f"a time is a finite number of Unix seconds, not {unix_seconds!r}")
    return math.floor(unix_seconds)


def round_time(round: int, beacon: Beacon = QUICKNET) -> int:
    """The Unix time (seconds) at which `round` is published: genesis + (round - 1) * period."""
    return beacon.genesis_time + (_check_round(round) - 1) * beacon.period


def round_at(unix_seconds: float, beacon: Beacon = QUICKNET) -> int:
    """The latest round published at this time (drand's CurrentRound): 0 before genesis."""
    t = _seconds(unix_seconds)
    if t < beacon.genesis_time:
        return 0
    return (t - beacon.genesis_time) // beacon.period + 1


def first_round_after(unix_seconds: float, margin: int = 0, beacon: Beacon = QUICKNET) -> int:
    """The first round whose time is strictly after `unix_seconds + margin`: the round a table
    can commit to at `unix_seconds` when the commitment needs `margin` seconds to be public."""
    if type(margin) is not int or margin < 0:
        raise BeaconError(f"a margin is a whole number of seconds >= 0, not {margin!r}")
    t = _seconds(unix_seconds) + margin
    if t < beacon.genesis_time:
        return 1
    return (t - beacon.genesis_time) // beacon.period + 2


def message(round: int) -> bytes:
    """What round `round` signs in an unchained scheme: SHA-256 of the round, 8 bytes big-endian."""
    return hashlib.sha256(_check_round(round).to_bytes(8, "big")).digest()


def material_element(round: int, randomness: bytes, beacon: Beacon = QUICKNET) -> str:
    """The round's element of a shoe's client material: "drand-quicknet:<R>:<randomness hex>"."""
    if type(randomness) is not bytes or len(randomness) != 32:
        raise BeaconError("a beacon's randomness is 32 bytes (SHA-256 of the signature)")
    return f"{beacon.name}:{_check_round(round)}:{randomness.hex()}"


def _public_key_bytes(public_key: Beacon | bytes | str) -> bytes:
    if isinstance(public_key, Beacon):
        public_key = public_key.public_key
    if isinstance(public_key, str):
        if not _HEX_PUBLIC_KEY.fullmatch(public_key):
            raise BeaconError("a public key is 192 lowercase hex digits (96 bytes, G2)")
        return bytes.fromhex(public_key)
    if type(public_key) is not bytes or len(public_key) != PUBLIC_KEY_BYTES:
        raise BeaconError("a public key is 96 bytes (a compressed G2 point)")
    return public_key


@lru_cache(maxsize=16)
def _g2_key(data: bytes) -> G2Point:
    """The public key's point, refused unless canonical, in G2 and not the identity."""
    try:
        point = G2Point.from_compressed_bytes(data)
    except ValueError as exc:
        raise BeaconError(f"the public key is not a compressed G2 point: {exc}") from None
    if point.to_compressed_bytes() != data:
        raise BeaconError("the public key is not canonically encoded")
    if point == G2Point.identity() or not point.is_in_subgroup():
        raise BeaconError("the public key is the identity or outside G2")
    return point


_NEG_G2 = -G2Point()


def verify(round: int, signature_hex: str, public_key: Beacon | bytes | str = QUICKNET) -> bytes:
    """The randomness of round `round` (SHA-256 of its signature) if `signature_hex` is the
    beacon's valid signature of that round under `public_key` (a Beacon, or the key's 96 bytes
    or their hex); BeaconError otherwise."""
    _check_round(round)
    if type(signature_hex) is not str or not _HEX_SIGNATURE.fullmatch(signature_hex):
        raise BeaconError("a signature is 96 lowercase hex digits (48 bytes, G1)")
    key = _g2_key(_public_key_bytes(public_key))
    signature = bytes.fromhex(signature_hex)
    try:
        point = G1Point.from_compressed_bytes(signature)
    except ValueError as exc:
        raise BeaconError(f"the signature is not a compressed G1 point: {exc}") from None
    if point.to_compressed_bytes() != signature:
        raise BeaconError("the signature is not canonically encoded")
    if point == G1Point.identity() or not point.is_in_subgroup():
        raise BeaconError("the signature is the identity or outside G1")
    hashed = G1Point.hash_to_curve(message(round), DST)
    # e(signature, -G2) * e(H(m), key) == 1, i.e. e(signature, G2) == e(H(m), key).
    if not GT.pairing_check([point, hashed], [_NEG_G2, key]):
        raise BeaconError(f"the signature is not the beacon's signature of round {round}")
    return hashlib.sha256(signature).digest()


def local_secret_key(seed: str) -> bytes:
    """A fixed demo secret key (32 bytes, big-endian, in [1, r)) derived from a seed string:
    SHA-512 of a label and the seed, reduced modulo the curve order (so nearly uniform)."""
    digest = hashlib.sha512(b"casino local beacon key v1\x00" + seed.encode()).digest()
    scalar = int.from_bytes(digest, "big") % (CURVE_ORDER - 1) + 1
    return scalar.to_bytes(32, "big")


class LocalBeacon:
    """An operator-run beacon in quicknet's scheme: `sign_round(R)` is a signature that `verify`
    accepts under `self.beacon` (its public key). The secret key is 32 bytes, big-endian, in
    [1, r): the Django side keeps it with the other demo secrets (local_secret_key(seed))."""

    def __init__(
        self,
        secret_key: bytes,
        *,
        name: str = "local-beacon",
        genesis_time: int = QUICKNET.genesis_time,
        period: int = 3,
    ) -> None:
        if type(secret_key) is not bytes or len(secret_key) != 32:
            raise BeaconError("a local beacon's secret key is 32 bytes")
        value = int.from_bytes(secret_key, "big")
        if not 0 < value < CURVE_ORDER:
            raise BeaconError("a local beacon's secret key is in [1, r)")
        if not name or ":" in name or type(period) is not int or period < 1:
            raise BeaconError("a beacon's name has no ':' and its period is >= 1 second")
        self._scalar = Scalar(value)
        public_key = (G2Point() * self._scalar).to_compressed_bytes()
        self.beacon = Beacon(
            name=name,
            public_key=public_key.hex(),
            # drand's formula, with the key's hash as the genesis seed (there is no group).
            chain_hash=chain_hash(
                period=period,
                genesis_time=genesis_time,
                public_key=public_key,
                genesis_seed=hashlib.sha256(public_key).digest(),
                beacon_id=name,
            ),
            genesis_time=genesis_time,
            period=period,
            independent=False,
        )

    @property
    def public_key(self) -> bytes:
        return bytes.fromhex(self.beacon.public_key)

    def sign_round(self, round: int) -> str:
        """Round `round`'s signature (hex of the 48-byte compressed G1 point)."""
        hashed = G1Point.hash_to_curve(message(round), DST)
        signature: bytes = (hashed * self._scalar).to_compressed_bytes()
        return signature.hex()

    def __repr__(self) -> str:  # never the secret key
        return f"LocalBeacon({self.beacon.name}, public key {self.beacon.public_key[:16]}...)"
