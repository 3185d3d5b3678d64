"""The verify page checks a round's inclusion in the public transparency log, in a real headless
Chromium: the checkpoint's signature under the published vkey, both leaves' inclusion proofs
against the signed root, and that the leaves are the round's; a tampered proof, a checkpoint
signed by another key and a round the sequencer has not reached yet each say so in words."""

from __future__ import annotations

import base64
import json
import time
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from fairness import note, transparency
from fairness.models import LogLeaf, LogWitness, RoundProof
from tests.api.conftest import Api, make_player
from tests.api.test_rounds import deal, personal
from tests.fairness.test_transparency import played_round

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("fast_passwords"),
]

DONE = ", ".join(f'#log-verdict[data-state="{s}"]' for s in ("ok", "failed", "pending"))


def finished_round(api: Api) -> str:
    """A round played through the API to its end: no insurance offer (a dealer's ace would
    leave it waiting for the answer), then a stand."""
    api.patch("/api/me/preferences/", {"offer_insurance": False})
    round_id = played_round(api)
    assert RoundProof.objects.filter(round_id=round_id).exists(), round_id
    return round_id


def logged_round() -> tuple[str, int, int]:
    """A round played through the API and sequenced: (round id, round_opened, round_receipt)."""
    round_id = finished_round(Api(make_player()))
    transparency.sequence()
    leaves = dict(LogLeaf.objects.filter(ref=round_id).values_list("kind", "index"))
    return round_id, leaves["round_opened"], leaves["round_receipt"]


def served_checkpoint() -> str:
    """The latest checkpoint as /api/log/checkpoint serves it."""
    latest = transparency.latest_checkpoint()
    assert latest is not None
    return transparency.checkpoint_text(latest)


def log_verdict(page: Any, live_server: Any, round_id: str) -> tuple[str, str]:
    """Open the verify page of `round_id`; once the round verified, the log verdict."""
    page.goto(f"{live_server.url}/fairness/verify/?round={round_id}")
    page.wait_for_selector(DONE, timeout=60_000)
    assert page.locator("#verdict").get_attribute("data-state") == "ok", page.inner_text("#result")
    verdict = page.locator("#log-verdict")
    return verdict.get_attribute("data-state") or "", verdict.inner_text()


def test_a_sequenced_round_is_included_at_the_signed_size_and_a_witness_is_counted(
    live_server: Any, page: Any
) -> None:
    round_id, opened, receipt = logged_round()
    size = transparency.current_size()
    assert opened < receipt < size
    key = Ed25519PrivateKey.generate()
    vkey = note.make_cosigner_vkey("witness.example", key.public_key().public_bytes_raw())
    LogWitness.objects.create(name="witness.example", vkey=vkey)
    body = served_checkpoint().split("\n\n")[0] + "\n"
    line = note.cosign(body, "witness.example", key, int(time.time()))
    transparency.cosignature_add(size=size, line=line)
    signer = transparency.signer()

    state, text = log_verdict(page, live_server, round_id)
    assert (state, text) == (
        "ok",
        f"Included in the public log at size {size} (leaves {opened} and {receipt}), checkpoint "
        f"signed by {signer.name} (key {signer.key_id}). Cosigned by 1 witness (unverified here).",
    )


def test_a_tampered_inclusion_proof_names_its_leaf(live_server: Any, page: Any) -> None:
    round_id, opened, _ = logged_round()

    def flip(route: Any) -> None:
        answer = route.fetch().json()
        if answer["index"] == opened:
            first = bytearray(base64.b64decode(answer["proof"][0]))
            first[0] ^= 0x01
            answer["proof"][0] = base64.b64encode(bytes(first)).decode("ascii")
        route.fulfill(json=answer)

    page.route("**/api/log/proof/inclusion*", flip)
    state, text = log_verdict(page, live_server, round_id)
    assert (state, text) == (
        "failed",
        f"Public log check FAILED: the inclusion proof of leaf {opened} does not lead to the "
        "signed root.",
    )


def test_a_checkpoint_signed_by_another_key_fails(live_server: Any, page: Any) -> None:
    round_id, _, _ = logged_round()
    signer = transparency.signer()
    served = served_checkpoint()
    other = Ed25519PrivateKey.generate()
    forged = note.sign_note(served.split("\n\n")[0] + "\n", signer.name, other)
    other_id = note.parse_vkey(
        note.make_vkey(signer.name, other.public_key().public_bytes_raw())
    ).key_id.hex()
    page.route(
        "**/api/log/checkpoint",
        lambda route: route.fulfill(body=forged, content_type="text/plain; charset=utf-8"),
    )
    state, text = log_verdict(page, live_server, round_id)
    assert (state, text) == (
        "failed",
        "Public log check FAILED: the checkpoint's signature does not verify under the published "
        f"key (it is signed by key {other_id}, not the published key {signer.key_id}).",
    )


def test_a_round_before_the_sequencer_is_pending_and_a_pasted_one_or_one_in_play_not_run(
    live_server: Any, page: Any
) -> None:
    round_id = finished_round(Api(make_player()))
    assert not LogLeaf.objects.filter(ref=round_id).exists()
    state, text = log_verdict(page, live_server, round_id)
    assert (state, text) == (
        "pending",
        "Not in the public log yet: the log adds rounds within 10 s; check again shortly.",
    )

    page.fill("#paste", RoundProof.objects.get(round_id=round_id).bundle_line)
    page.click("#verify-paste")
    page.wait_for_selector('#verdict[data-state="ok"]', timeout=60_000)
    verdict = page.locator("#log-verdict")
    assert (verdict.get_attribute("data-state"), verdict.inner_text()) == (
        "not-run",
        "Public log: not checked: a pasted round is checked against the public log only when "
        "fetched from the server by its round id (section 1).",
    )

    api = Api(make_player())
    api.patch("/api/me/preferences/", {"offer_insurance": False})
    table = personal(api)
    body = deal(api, table, "1")
    while body["status"] == "settled":  # a blackjack ends at once: deal again
        body = deal(api, table, "1")
    in_play = str(body["round_id"])
    page.goto(f"{live_server.url}/fairness/verify/?round={in_play}")
    page.wait_for_selector('#verdict[data-state="pending"]', timeout=60_000)
    assert (verdict.get_attribute("data-state"), verdict.inner_text()) == (
        "not-run",
        f"Public log: not checked: round {in_play} is still in play; its receipt enters the log "
        "when it ends.",
    )


def test_a_leaf_of_another_round_is_named_for_what_differs(live_server: Any, page: Any) -> None:
    api = Api(make_player())
    first = finished_round(api)
    round_id = finished_round(api)
    transparency.sequence()
    other = LogLeaf.objects.get(ref=first, kind="round_opened").index
    ours = LogLeaf.objects.get(ref=round_id, kind="round_opened")

    def elsewhere(route: Any) -> None:
        answer = route.fetch().json()
        answer["log"]["round_opened"] = other  # the log's leaf of the round before
        route.fulfill(json=answer)

    page.route(f"**/api/fairness/rounds/{round_id}", elsewhere)
    state, text = log_verdict(page, live_server, round_id)
    assert state == "failed"
    assert text.startswith(
        f'Public log check FAILED: the log\'s round_opened leaf names another round ("{first}", '
        f'the round\'s is "{round_id}"); '
    )
    commitment = json.loads(ours.data)["commitment"]
    assert "the log's round_opened leaf names another commitment (\"" in text
    assert f'the round\'s is "{commitment}")' in text
