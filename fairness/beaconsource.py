"""The beacon a shared table reads now (settings.BEACON), its rounds' signatures, its health.

- `spec()`: the engine's `BeaconSpec` of the beacon in use (None with BEACON=off): drand
  quicknet (`fairness.beacon.QUICKNET`), or the operator-run `LocalBeacon` whose key comes from
  the LOCAL_BEACON_SEED secret (quicknet's genesis time, a 3 s period; not independent).
- `signature_for(round)`: round `round`'s verified signature (96 lowercase hex), or None while
  its time has not come or it cannot be fetched and verified now. Local: signed here once the
  round's time has come, never before. Quicknet: `GET {relay}/{chain_hash}/public/{round}` (the
  drand HTTP v1 API) from each of BEACON_RELAYS in order, each with BEACON_HTTP_TIMEOUT_S; a
  relay that fails moves on to the next, and one whose answer does not verify is skipped with a
  warning naming it. Nothing is asked before the round's time. Verified signatures are kept in
  this process (the last `CACHE_ROUNDS` rounds).
- `public_info()`: what a page or the API shows of the beacon.
- `check()`: /healthz's view (cached for `CHECK_TTL_S`): the latest published round fetched and
  verified, or why not.
"""

from __future__ import annotations

import http.client
import json
import logging
import threading
import time
import urllib.request
from collections import OrderedDict
from functools import lru_cache
from typing import Any

from django.conf import settings

from casino.engine.events import BeaconSpec
from fairness.beacon import QUICKNET, Beacon, BeaconError, LocalBeacon, local_secret_key, verify

log = logging.getLogger(__name__)

LOCAL_NAME = "local-beacon"
LOCAL_PERIOD_S = 3
CACHE_ROUNDS = 1024  # verified signatures kept per process
CHECK_TTL_S = 5.0  # /healthz asks the relays at most this often per process
MAX_ANSWER_BYTES = 64 * 1024  # a relay's answer is ~300 bytes


def _now() -> float:
    """Unix seconds now (tests replace it)."""
    return time.time()


@lru_cache(maxsize=4)
def _local(seed: str) -> LocalBeacon:
    return LocalBeacon(
        local_secret_key(seed),
        name=LOCAL_NAME,
        genesis_time=QUICKNET.genesis_time,
        period=LOCAL_PERIOD_S,
    )


def _local_beacon() -> LocalBeacon:
    seed = settings.LOCAL_BEACON_SEED
    if not seed:
        raise BeaconError("BEACON=local but the LOCAL_BEACON_SEED secret is not set")
    return _local(seed)


def _beacon() -> Beacon | None:
    """The fairness.beacon.Beacon in use, or None with BEACON=off."""
    mode = settings.BEACON
    if mode == "off":
        return None
    if mode == "local":
        return _local_beacon().beacon
    if mode == "quicknet":
        return QUICKNET
    raise BeaconError(f"unknown BEACON {mode!r}")


def spec() -> BeaconSpec | None:
    """The beacon a shared table uses now, from settings; None when BEACON=off."""
    beacon = _beacon()
    if beacon is None:
        return None
    return BeaconSpec(
        name=beacon.name,
        chain_hash=beacon.chain_hash,
        public_key=beacon.public_key,
        genesis_time=beacon.genesis_time,
        period=beacon.period,
        margin_s=int(settings.BEACON_MARGIN_S),
        wait_s=int(settings.BEACON_WAIT_S),
    )


class _Signatures:
    """Verified signatures by (chain hash, round), the most recently used `size` of them."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._items: OrderedDict[tuple[str, int], str] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, chain: str, round: int) -> str | None:
        with self._lock:
            found = self._items.get((chain, round))
            if found is not None:
                self._items.move_to_end((chain, round))
            return found

    def put(self, chain: str, round: int, signature: str) -> None:
        with self._lock:
            self._items[(chain, round)] = signature
            self._items.move_to_end((chain, round))
            while len(self._items) > self._size:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


_signatures = _Signatures(CACHE_ROUNDS)


class _RelayError(Exception):
    """A relay that could not be reached, or answered something other than a beacon round."""


def _get(relay: str, path: str) -> dict[str, Any]:
    """The JSON object at `relay` + `path`, or _RelayError."""
    url = f"{relay.rstrip('/')}/{path}"
    request = urllib.request.Request(
        url, headers={"Accept": "application/json", "User-Agent": "casino-beacon/1"}
    )
    timeout = float(settings.BEACON_HTTP_TIMEOUT_S)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            body = answer.read(MAX_ANSWER_BYTES + 1)
    # URLError and HTTPError (OSError), timeouts, refused connections, broken HTTP answers
    except (OSError, ValueError, http.client.HTTPException) as exc:
        raise _RelayError(f"{type(exc).__name__}: {exc}") from None
    if len(body) > MAX_ANSWER_BYTES:
        raise _RelayError(f"an answer over {MAX_ANSWER_BYTES} bytes")
    try:
        data = json.loads(body)
    except ValueError as exc:
        raise _RelayError(f"not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise _RelayError("not a JSON object")
    return data


def _verified(data: dict[str, Any], round: int | None) -> tuple[int, str]:
    """The (round, signature) of a relay's answer once it verifies under quicknet's key (and is
    round `round` when given); BeaconError naming what is wrong otherwise."""
    got = data.get("round")
    if type(got) is not int or (round is not None and got != round):
        raise BeaconError(f"answered round {got!r}" + ("" if round is None else f", not {round}"))
    signature = data.get("signature")
    if not isinstance(signature, str):
        raise BeaconError("answered no signature")
    signature = signature.lower()
    randomness = verify(got, signature, QUICKNET)
    if data.get("randomness") != randomness.hex():
        raise BeaconError(f"answered a randomness for round {got} that is not its signature's")
    return got, signature


def _quicknet(
    path: str, round: int | None, failures: list[str] | None = None
) -> tuple[int, str] | None:
    """The first verified answer to `path` from the relays in order, or None. Each failure is
    logged (a relay that lies at warning level) and, with `failures`, appended to it."""
    for relay in settings.BEACON_RELAYS:
        try:
            data = _get(relay, f"{QUICKNET.chain_hash}/{path}")
        except _RelayError as exc:
            log.info("beacon relay %s: %s failed: %s", relay, path, exc)
            if failures is not None:
                failures.append(f"{relay}: {exc}")
            continue
        try:
            found = _verified(data, round)
        except BeaconError as exc:
            log.warning("beacon relay %s: %s refused, it does not verify: %s", relay, path, exc)
            if failures is not None:
                failures.append(f"{relay}: does not verify: {exc}")
            continue
        _signatures.put(QUICKNET.chain_hash, *found)
        return found
    return None


def signature_for(round: int) -> str | None:
    """Beacon round `round`'s verified signature (96 lowercase hex), or None: its time has not
    come, it cannot be fetched and verified now, or BEACON=off. A round that is not an integer
    from 1 to 2**64 - 1 is a BeaconError."""
    beacon = _beacon()
    if beacon is None or beacon.round_time(round) > _now():
        return None
    cached = _signatures.get(beacon.chain_hash, round)
    if cached is not None:
        return cached
    if settings.BEACON == "local":
        signature = _local_beacon().sign_round(round)
        _signatures.put(beacon.chain_hash, round, signature)
        return signature
    found = _quicknet(f"public/{round}", round)
    return None if found is None else found[1]


def public_info() -> dict[str, Any]:
    """The beacon in use as a page or the API shows it, or {"beacon": "off"}."""
    beacon = _beacon()
    if beacon is None:
        return {"beacon": "off"}
    return {
        "name": beacon.name,
        "chain_hash": beacon.chain_hash,
        "public_key": beacon.public_key,
        "genesis_time": beacon.genesis_time,
        "period": beacon.period,
        "independent": beacon.independent,
        "description": beacon.description,
        "margin_s": int(settings.BEACON_MARGIN_S),
        "wait_s": int(settings.BEACON_WAIT_S),
    }


def _check_now() -> dict[str, Any]:
    beacon = _beacon()
    if beacon is None:
        return {"status": "off"}
    if settings.BEACON == "local":
        latest = beacon.round_at(_now())
        signature = signature_for(latest) if latest else None
        if signature is None:
            return {"status": "unreachable", "error": f"round {latest} could not be signed"}
        verify(latest, signature, beacon)
        return {"status": "ok", "beacon": beacon.name, "latest_round": latest, "independent": False}
    expected = beacon.round_at(_now())
    failures: list[str] = []
    found = _quicknet("public/latest", None, failures)
    if found is None:
        return {
            "status": "unreachable",
            "error": "no relay answered a verified latest round: " + "; ".join(failures),
        }
    latest = found[0]
    behind_s = (expected - latest) * beacon.period
    if behind_s > int(settings.BEACON_WAIT_S):
        return {
            "status": "unreachable",
            "error": f"the latest round is {latest}, {behind_s} s behind round {expected}",
        }
    return {"status": "ok", "beacon": beacon.name, "latest_round": latest}


_checked: dict[str, Any] = {}
_checked_lock = threading.Lock()


def check() -> dict[str, Any]:
    """For /healthz: {"status": "ok", "beacon", "latest_round"} (local: also "independent":
    False) when the latest published round was fetched and verified; {"status": "unreachable",
    "error"} when not; {"status": "off"} with BEACON=off. Cached for CHECK_TTL_S."""
    now = time.monotonic()
    try:
        beacon = _beacon()
    except BeaconError as exc:
        return {"status": "unreachable", "error": str(exc)}
    key = (settings.BEACON, tuple(settings.BEACON_RELAYS), beacon and beacon.chain_hash)
    with _checked_lock:
        if _checked.get("key") == key and now - _checked["at"] < CHECK_TTL_S:
            return dict(_checked["result"])
    try:
        result = _check_now()
    except BeaconError as exc:
        result = {"status": "unreachable", "error": str(exc)}
    with _checked_lock:
        _checked.update(key=key, at=now, result=result)
    return dict(result)


def clear_caches() -> None:
    """Forget the verified signatures and the last health check: for a process that changes
    its beacon (the simulator between seeds, tests), so nothing of the last one is reused."""
    _signatures.clear()
    with _checked_lock:
        _checked.clear()
