"""fairness.beaconsource: the beacon a shared table reads (settings.BEACON), its rounds'
signatures (the local beacon signs them; quicknet's come from drand's relays, here small HTTP
servers on 127.0.0.1 serving real quicknet rounds), the health check, and the refusal to start
in production with the local beacon or none."""

from __future__ import annotations

import hashlib
import json
import logging
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from casino.engine.events import BeaconSpec
from casino.platform.secrets import load_secrets
from fairness import beaconsource
from fairness.beacon import QUICKNET, BeaconError, LocalBeacon, local_secret_key, verify
from tests.casino.test_deploy import ROOT, production_env
from tests.fairness.test_beacon import REAL_ROUNDS

SEED = "tests/fairness/test_beaconsource"
CHAIN = QUICKNET.chain_hash


@pytest.fixture(autouse=True)
def _fresh_caches() -> Iterator[None]:
    beaconsource.clear_caches()
    yield
    beaconsource.clear_caches()


def at(monkeypatch: pytest.MonkeyPatch, unix_seconds: float) -> None:
    monkeypatch.setattr(beaconsource, "_now", lambda: unix_seconds)


@pytest.fixture
def local(settings: Any) -> LocalBeacon:
    settings.BEACON = "local"
    settings.LOCAL_BEACON_SEED = SEED
    return LocalBeacon(local_secret_key(SEED))


def answer(round_: int, signature: str) -> dict[str, Any]:
    """A round as drand's HTTP v1 API answers it."""
    randomness = hashlib.sha256(bytes.fromhex(signature)).hexdigest()
    return {"round": round_, "randomness": randomness, "signature": signature}


@dataclass
class Relay:
    """A relay on 127.0.0.1: `rounds` maps a path below /<chain hash>/ to its JSON answer (an
    unknown path is a 404); `asked` records the paths asked."""

    url: str
    rounds: dict[str, Any]
    asked: list[str] = field(default_factory=list)


_servers: list[ThreadingHTTPServer] = []


@pytest.fixture(autouse=True)
def _stop_servers() -> Iterator[None]:
    yield
    while _servers:
        server = _servers.pop()
        server.shutdown()
        server.server_close()


def serve(rounds: dict[str, Any]) -> Relay:
    """A relay answering `rounds`, stopped after the test."""
    relay = Relay(url="", rounds=rounds)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            relay.asked.append(self.path)
            prefix = f"/{CHAIN}/"
            found = relay.rounds.get(self.path.removeprefix(prefix))
            if not self.path.startswith(prefix) or found is None:
                self.send_response(404)
                self.end_headers()
                return
            body = json.dumps(found).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    _servers.append(server)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    relay.url = f"http://127.0.0.1:{server.server_address[1]}"
    return relay


def refused() -> str:
    """A URL on 127.0.0.1 where nothing listens (connection refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@pytest.fixture
def quicknet(settings: Any) -> Any:
    settings.BEACON = "quicknet"
    settings.BEACON_HTTP_TIMEOUT_S = 2.0
    return settings


# --- the spec and the public info -------------------------------------------------------


def test_off_has_no_spec_no_signature_and_says_so(settings: Any) -> None:
    settings.BEACON = "off"
    assert beaconsource.spec() is None
    assert beaconsource.signature_for(1000) is None
    assert beaconsource.public_info() == {"beacon": "off"}
    assert beaconsource.check() == {"status": "off"}


def test_the_local_spec_is_the_local_beacons_key_and_its_signatures_verify(
    local: LocalBeacon, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.BEACON_MARGIN_S = 4
    settings.BEACON_WAIT_S = 20
    spec = beaconsource.spec()
    assert spec == BeaconSpec(
        name="local-beacon",
        chain_hash=local.beacon.chain_hash,
        public_key=local.beacon.public_key,
        genesis_time=QUICKNET.genesis_time,
        period=3,
        margin_s=4,
        wait_s=20,
    )
    round_ = 5000
    at(monkeypatch, local.beacon.round_time(round_))
    signature = beaconsource.signature_for(round_)
    assert signature == local.sign_round(round_)
    assert (
        verify(round_, signature, spec.public_key)
        == hashlib.sha256(bytes.fromhex(signature)).digest()
    )
    info = beaconsource.public_info()
    assert info["independent"] is False and info["public_key"] == spec.public_key
    assert info["description"] == local.beacon.description
    assert (info["margin_s"], info["wait_s"], info["period"]) == (4, 20, 3)


def test_the_quicknet_spec_is_quicknets(quicknet: Any) -> None:
    spec = beaconsource.spec()
    assert spec is not None
    assert (spec.name, spec.chain_hash, spec.public_key) == (
        "drand-quicknet",
        QUICKNET.chain_hash,
        QUICKNET.public_key,
    )
    assert (spec.genesis_time, spec.period, spec.margin_s, spec.wait_s) == (
        QUICKNET.genesis_time, 3, 3, 30,
    )  # fmt: skip
    info = beaconsource.public_info()
    assert info["independent"] is True and info["name"] == "drand-quicknet"
    assert "League of Entropy" in info["description"]


def test_the_local_beacon_without_its_seed_is_an_error_not_a_key(
    settings: Any,
) -> None:
    settings.BEACON = "local"
    settings.LOCAL_BEACON_SEED = None
    with pytest.raises(BeaconError, match="LOCAL_BEACON_SEED"):
        beaconsource.spec()
    assert beaconsource.check() == {
        "status": "unreachable",
        "error": "BEACON=local but the LOCAL_BEACON_SEED secret is not set",
    }


# --- the local beacon's signatures -----------------------------------------------------------


def test_a_local_round_is_signed_at_its_time_never_before(
    local: LocalBeacon, monkeypatch: pytest.MonkeyPatch
) -> None:
    round_ = 34_000_000
    time_ = local.beacon.round_time(round_)
    at(monkeypatch, time_ - 0.001)
    assert beaconsource.signature_for(round_) is None
    at(monkeypatch, time_ - 3)
    assert beaconsource.signature_for(round_ + 1) is None
    at(monkeypatch, time_)
    signature = beaconsource.signature_for(round_)
    assert signature is not None and len(signature) == 96 and signature == signature.lower()
    verify(round_, signature, local.beacon)
    assert beaconsource.signature_for(round_ + 1) is None  # still 3 s away


def test_a_round_that_is_no_round_is_refused(local: LocalBeacon) -> None:
    for bad in (0, -1, 2**64):
        with pytest.raises(BeaconError, match="a round is an integer"):
            beaconsource.signature_for(bad)


# --- quicknet over the relays ---------------------------------------------------------


def test_quicknet_fails_over_to_the_first_relay_whose_round_verifies(
    quicknet: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    (_, s1000), (r1001, s1001) = REAL_ROUNDS[1], REAL_ROUNDS[2]
    tampered = serve({f"public/{r1001}": answer(r1001, s1000)})  # another round's
    wrong_randomness = serve({f"public/{r1001}": {**answer(r1001, s1001), "randomness": "00" * 32}})
    honest = serve({f"public/{r1001}": answer(r1001, s1001)})
    down = refused()
    quicknet.BEACON_RELAYS = [down, tampered.url, wrong_randomness.url, honest.url]
    at(monkeypatch, QUICKNET.round_time(r1001))
    with caplog.at_level(logging.INFO, logger="fairness.beaconsource"):
        assert beaconsource.signature_for(r1001) == s1001
    assert tampered.asked == wrong_randomness.asked == honest.asked == [f"/{CHAIN}/public/1001"]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 2
    assert tampered.url in warnings[0] and "does not verify" in warnings[0]
    assert wrong_randomness.url in warnings[1] and "randomness" in warnings[1]
    assert any(down in r.getMessage() for r in caplog.records if r.levelno == logging.INFO)


def test_a_relay_answering_another_round_is_skipped(
    quicknet: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    (r1001, s1001), (r1002, s1002) = REAL_ROUNDS[2], REAL_ROUNDS[3]
    other = serve({f"public/{r1002}": answer(r1001, s1001)})  # valid, but round 1001
    honest = serve({f"public/{r1002}": answer(r1002, s1002)})
    quicknet.BEACON_RELAYS = [other.url, honest.url]
    at(monkeypatch, QUICKNET.round_time(r1002) + 60)
    assert beaconsource.signature_for(r1002) == s1002


def test_quicknet_with_every_relay_down_or_lying_is_none(
    quicknet: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    r1001, s1001 = REAL_ROUNDS[2]
    missing = serve({})  # 404, as a relay answers a round it does not have yet
    not_an_object = serve({})
    not_an_object.rounds[f"public/{r1001}"] = "not a round"
    quicknet.BEACON_RELAYS = [refused(), missing.url, not_an_object.url, refused()]
    at(monkeypatch, QUICKNET.round_time(r1001))
    assert beaconsource.signature_for(r1001) is None
    assert missing.asked == [f"/{CHAIN}/public/{r1001}"]
    # once a relay has it, it is fetched (nothing negative was kept)
    missing.rounds[f"public/{r1001}"] = answer(r1001, s1001)
    assert beaconsource.signature_for(r1001) == s1001


def test_quicknet_asks_nothing_before_the_rounds_time_and_keeps_what_it_verified(
    quicknet: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    r1002, s1002 = REAL_ROUNDS[3]
    honest = serve({f"public/{r1002}": answer(r1002, s1002)})
    quicknet.BEACON_RELAYS = [honest.url]
    at(monkeypatch, QUICKNET.round_time(r1002) - 0.5)
    assert beaconsource.signature_for(r1002) is None
    assert honest.asked == []
    at(monkeypatch, QUICKNET.round_time(r1002))
    assert beaconsource.signature_for(r1002) == s1002
    honest.rounds.clear()  # the relay forgets it (or goes down): the process still knows it
    assert beaconsource.signature_for(r1002) == s1002
    assert honest.asked == [f"/{CHAIN}/public/{r1002}"]


def test_the_signature_cache_is_bounded() -> None:
    cache = beaconsource._Signatures(3)
    for round_ in range(1, 6):
        cache.put("chain", round_, f"s{round_}")
    assert [cache.get("chain", r) for r in range(1, 6)] == [None, None, "s3", "s4", "s5"]
    assert beaconsource.CACHE_ROUNDS >= 1024


# --- the health check ------------------------------------------------------------------


def test_the_local_beacon_is_healthy_and_says_it_is_not_independent(
    local: LocalBeacon, monkeypatch: pytest.MonkeyPatch
) -> None:
    at(monkeypatch, local.beacon.round_time(777) + 1)
    assert beaconsource.check() == {
        "status": "ok",
        "beacon": "local-beacon",
        "latest_round": 777,
        "independent": False,
    }


def test_quicknet_is_healthy_when_the_latest_round_verifies(
    quicknet: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    r1002, s1002 = REAL_ROUNDS[3]
    lying = serve({"public/latest": answer(r1002, REAL_ROUNDS[2][1])})
    honest = serve({"public/latest": answer(r1002, s1002)})
    quicknet.BEACON_RELAYS = [refused(), lying.url, honest.url]
    at(monkeypatch, QUICKNET.round_time(r1002) + 1)
    assert beaconsource.check() == {
        "status": "ok",
        "beacon": "drand-quicknet",
        "latest_round": r1002,
    }
    assert honest.asked == [f"/{CHAIN}/public/latest"]
    # cached: a second look within CHECK_TTL_S asks nobody; the verified round is kept too
    assert beaconsource.check()["status"] == "ok"
    assert honest.asked == [f"/{CHAIN}/public/latest"]
    assert beaconsource.signature_for(r1002) == s1002
    assert honest.asked == [f"/{CHAIN}/public/latest"]


def test_quicknet_is_unreachable_when_no_relay_answers_a_verified_round(
    quicknet: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    lying = serve({"public/latest": answer(REAL_ROUNDS[3][0], REAL_ROUNDS[2][1])})
    down = refused()
    quicknet.BEACON_RELAYS = [down, lying.url]
    at(monkeypatch, QUICKNET.round_time(1002) + 1)
    result = beaconsource.check()
    assert result["status"] == "unreachable"
    assert down in result["error"] and lying.url in result["error"]
    assert set(result) == {"status", "error"}


def test_quicknet_is_unreachable_when_the_latest_round_is_older_than_the_wait(
    quicknet: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    r1002, s1002 = REAL_ROUNDS[3]
    stalled = serve({"public/latest": answer(r1002, s1002)})
    quicknet.BEACON_RELAYS = [stalled.url]
    quicknet.BEACON_WAIT_S = 30
    at(monkeypatch, QUICKNET.round_time(r1002 + 10))  # 30 s later: still within the wait
    assert beaconsource.check()["status"] == "ok"
    beaconsource.clear_caches()
    at(monkeypatch, QUICKNET.round_time(r1002 + 11))  # 33 s: a round would void
    result = beaconsource.check()
    assert result["status"] == "unreachable"
    assert result["error"] == f"the latest round is {r1002}, 33 s behind round {r1002 + 11}"


# --- secrets and the refusal to start in production -------------------------------------


def test_production_needs_the_local_beacons_seed_only_with_the_local_beacon(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in production_env().items():
        if name in ("SECRET_KEY", "SEED_ENCRYPTION_KEYS", "RECEIPT_SIGNING_KEY", "LOG_SIGNING_KEY"):
            monkeypatch.setenv(name, value)
    monkeypatch.delenv("LOCAL_BEACON_SEED", raising=False)
    assert "LOCAL_BEACON_SEED" not in load_secrets(base_dir=tmp_path, debug=False)
    with pytest.raises(Exception, match=r"LOCAL_BEACON_SEED \(needed with BEACON=local\)"):
        load_secrets(base_dir=tmp_path, debug=False, using=frozenset({"LOCAL_BEACON_SEED"}))
    monkeypatch.setenv("LOCAL_BEACON_SEED", "change-me")
    with pytest.raises(Exception, match="example values: LOCAL_BEACON_SEED"):
        load_secrets(base_dir=tmp_path, debug=False, using=frozenset({"LOCAL_BEACON_SEED"}))
    monkeypatch.setenv("LOCAL_BEACON_SEED", "a real seed")
    values = load_secrets(base_dir=tmp_path, debug=False, using=frozenset({"LOCAL_BEACON_SEED"}))
    assert values["LOCAL_BEACON_SEED"] == "a real seed"
    assert not (tmp_path / ".local").exists()


def test_demo_mode_generates_the_local_beacons_seed(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LOCAL_BEACON_SEED", raising=False)
    first = load_secrets(base_dir=tmp_path, debug=True)
    assert len(first["LOCAL_BEACON_SEED"]) == 64
    assert load_secrets(base_dir=tmp_path, debug=True) == first
    stored = json.loads((tmp_path / ".local" / "secrets.json").read_text())
    assert stored["LOCAL_BEACON_SEED"] == first["LOCAL_BEACON_SEED"]


PRINT_BEACON = (
    "import django; django.setup(); from django.conf import settings; "
    "from fairness import beaconsource; print(settings.BEACON, beaconsource.spec().name)"
)


def start(**overrides: str) -> subprocess.CompletedProcess[str]:
    """Load the settings as the server does at startup, in production (DEBUG off)."""
    env = production_env(DJANGO_SETTINGS_MODULE="casino.settings", **overrides)
    return subprocess.run(
        [sys.executable, "-c", PRINT_BEACON],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_production_refuses_the_local_beacon_unless_allowed_and_never_serves_without_one() -> None:
    refused_local = start(BEACON="local", LOCAL_BEACON_SEED="a real seed")
    assert refused_local.returncode != 0
    assert "ImproperlyConfigured" in refused_local.stderr
    assert "BEACON=local" in refused_local.stderr
    assert "ALLOW_LOCAL_BEACON=true" in refused_local.stderr
    assert "BEACON=quicknet" in refused_local.stderr

    allowed = start(BEACON="local", ALLOW_LOCAL_BEACON="1", LOCAL_BEACON_SEED="a real seed")
    assert allowed.returncode == 0, allowed.stderr
    assert allowed.stdout.split() == ["local", "local-beacon"]

    no_seed = start(BEACON="local", ALLOW_LOCAL_BEACON="1", LOCAL_BEACON_SEED="")
    assert no_seed.returncode != 0
    assert "LOCAL_BEACON_SEED (needed with BEACON=local)" in no_seed.stderr

    off = start(BEACON="off", ALLOW_LOCAL_BEACON="1")
    assert off.returncode != 0
    assert "BEACON=off" in off.stderr and "must not deal without a beacon" in off.stderr

    default = start(BEACON="", LOCAL_BEACON_SEED="")  # unset: quicknet, and no seed needed
    assert default.returncode == 0, default.stderr
    assert default.stdout.split() == ["quicknet", "drand-quicknet"]

    unknown = start(BEACON="drand")
    assert unknown.returncode != 0
    assert "BEACON is 'drand'" in unknown.stderr and "quicknet" in unknown.stderr
