"""Withdrawals (issue 21): a destination checked for its network, four eyes, the
confirmation step of completing one, and one reference per withdrawal."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse
from rest_framework.test import APIClient

from casino.platform.errors import ApplicationError
from ledger import services
from ledger.destinations import NETWORK_LABELS, destination_clean, eip55, keccak256
from ledger.models import JournalEntry, WithdrawalRequest
from ledger.selectors import wallet_balances
from tests.dashboard.conftest import login, make_player

pytestmark = pytest.mark.django_db

USDC = 1_000_000
EVM = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"  # EIP-55's own examples
EVM2 = "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359"
SOLANA = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"  # 32 bytes in base58
CHANGELIST = "admin:dashboard_pendingwithdrawal_changelist"
FOUR_EYES = (
    "Four eyes: you requested this withdrawal, so you cannot approve it. Another staff "
    "member must complete it."
)


def error_of(call) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    with pytest.raises(ApplicationError) as caught:
        call()
    return caught.value.code, caught.value.message


def test_keccak_and_eip55() -> None:
    assert keccak256(b"").hex() == (
        "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470"
    )
    assert keccak256(b"abc").hex() == (
        "4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45"
    )
    for address in (
        EVM,
        EVM2,
        "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB",
        "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb",
    ):
        assert eip55(address.lower()) == address


@pytest.mark.parametrize("network", ["ethereum", "polygon", "arbitrum", "base"])
def test_evm_addresses(network: str) -> None:
    assert destination_clean(network, EVM) == (network, EVM)
    assert destination_clean(network, EVM.lower()) == (network, EVM.lower())  # no checksum
    assert destination_clean(network, "0x" + EVM[2:].upper()) == (network, "0x" + EVM[2:].upper())
    assert destination_clean(network, f"  {EVM}\n") == (network, EVM)
    typo = EVM.replace("aA", "Aa", 1)  # one letter's case changed: the checksum catches it
    assert error_of(lambda: destination_clean(network, typo)) == (
        "destination_invalid",
        "The address's mixed case does not match its EIP-55 checksum (a typo?).",
    )
    for bad in (EVM[:-1], EVM + "0", "5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", EVM[:-1] + "g"):
        code, message = error_of(lambda bad=bad: destination_clean(network, bad))
        article = "An" if network in ("ethereum", "arbitrum") else "A"
        assert (code, message) == (
            "destination_invalid",
            f"{article} {NETWORK_LABELS[network]} address is 0x followed by 40 hex digits.",
        )
    assert error_of(lambda: destination_clean(network, SOLANA))[0] == "destination_invalid"


def test_solana_addresses() -> None:
    assert destination_clean("solana", SOLANA) == ("solana", SOLANA)
    assert destination_clean("solana", "1" * 32) == ("solana", "1" * 32)  # 32 zero bytes
    for bad in (SOLANA[:-2], SOLANA + "z", SOLANA.replace("E", "0", 1), EVM, "l" + SOLANA[1:]):
        assert error_of(lambda bad=bad: destination_clean("solana", bad)) == (
            "destination_invalid",
            "A Solana address is the base58 form of a 32-byte public key.",
        )


def test_unknown_network_and_missing_address() -> None:
    assert error_of(lambda: destination_clean("bitcoin", EVM)) == (
        "network_unknown",
        "network must be one of ethereum, polygon, arbitrum, base, solana.",
    )
    assert error_of(lambda: destination_clean("base", "")) == (
        "destination_invalid",
        "A withdrawal needs a destination address.",
    )


def test_each_withdrawal_has_its_own_reference() -> None:
    player = make_player("payee")
    first = services.withdrawal_request(
        user=player, amount_micro=USDC, idempotency_key="a", network="base", address=EVM
    )
    second = services.withdrawal_request(
        user=player, amount_micro=2 * USDC, idempotency_key="b", network="solana", address=SOLANA
    )
    assert (first.reference, second.reference) == (
        f"withdrawal:{first.pk}",
        f"withdrawal:{second.pk}",
    )
    assert first.request_entry is not None and second.request_entry is not None
    assert first.request_entry.reference == f"withdrawal:{first.pk}"
    assert second.request_entry.reference == f"withdrawal:{second.pk}"
    staff = make_player("cashier", funds=0)
    done = services.withdrawal_cancel_post(withdrawal_id=first.pk, staff=staff, idempotency_key="c")
    assert done.resolution_entry is not None
    assert done.resolution_entry.reference == first.reference  # its whole life, one reference
    assert JournalEntry.objects.filter(reference=first.reference).count() == 2
    # a retry returns the same withdrawal; a shortfall leaves no row behind
    again = services.withdrawal_request(
        user=player, amount_micro=USDC, idempotency_key="a", network="base", address=EVM
    )
    assert again.pk == first.pk
    count = WithdrawalRequest.objects.count()
    assert (
        error_of(
            lambda: services.withdrawal_request(
                user=player, amount_micro=10**9, idempotency_key="d"
            )
        )[0]
        == "insufficient_funds"
    )
    assert WithdrawalRequest.objects.count() == count


def test_the_api_takes_and_returns_the_destination() -> None:
    player = make_player("apiplayer")
    client = APIClient()
    client.force_authenticate(player)

    def post(body: dict[str, str], key: str):  # type: ignore[no-untyped-def]
        return client.post(
            "/api/wallet/withdrawals/", body, format="json", HTTP_IDEMPOTENCY_KEY=key
        )

    made = post({"amount": "2.5", "network": "polygon", "address": EVM}, "k1")
    assert made.status_code == 201
    body = made.json()
    assert (body["amount"], body["network"], body["address"], body["reference"]) == (
        "2.500000",
        "polygon",
        EVM,
        f"withdrawal:{body['id']}",
    )
    assert post({"amount": "2.5", "network": "polygon", "address": EVM2}, "k1").status_code == 422
    bad = post({"amount": "1", "network": "polygon", "address": EVM.lower()[:-1]}, "k2")
    assert (bad.status_code, bad.json()["error"]["code"]) == (400, "destination_invalid")
    # Every new request names its destination (rows made before keep theirs without one).
    no_address = post({"amount": "1", "network": "solana"}, "k3").json()["error"]
    assert (no_address["code"], list(no_address["details"]["fields"])) == (
        "invalid_input",
        ["address"],
    )
    amount_only = post({"amount": "1"}, "k4")
    assert amount_only.status_code == 400
    assert sorted(amount_only.json()["error"]["details"]["fields"]) == ["address", "network"]
    assert WithdrawalRequest.objects.filter(user=player).count() == 1


def manager_named(name: str):  # type: ignore[no-untyped-def]
    user = make_player(name)
    user.is_staff = True
    user.save()
    user.groups.add(Group.objects.get(name="manager"))
    return user


def test_completing_takes_a_confirmation_step(staff) -> None:
    player = make_player("payee")
    withdrawal = services.withdrawal_request(
        user=player, amount_micro=5 * USDC, idempotency_key="w", network="ethereum", address=EVM
    )
    manager = login(staff["manager"])
    chosen = {"action": "complete", "_selected_action": [withdrawal.pk], "index": 0}
    page = manager.post(reverse(CHANGELIST), chosen)
    assert page.status_code == 200
    assert "admin/casino/withdrawal_confirm.html" in [t.name for t in page.templates]
    html = page.content.decode()
    row = re.search(rf'<tr data-withdrawal="{withdrawal.pk}">(.*?)</tr>', html, re.S)
    assert row is not None
    cells = [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td>(.*?)</td>", row.group(1))]
    assert cells == [f"withdrawal:{withdrawal.pk}", "payee", "5.00 USDC", "Ethereum", EVM, "yes"]
    assert WithdrawalRequest.objects.get(pk=withdrawal.pk).status == "pending"
    unticked = manager.post(reverse(CHANGELIST), {**chosen, "post": "yes"})
    assert unticked.status_code == 400
    assert "Not completed: tick the confirmation that the funds were sent." in (
        unticked.content.decode()
    )
    assert WithdrawalRequest.objects.get(pk=withdrawal.pk).status == "pending"
    done = manager.post(
        reverse(CHANGELIST), {**chosen, "post": "yes", "confirm": "on"}, follow=True
    )
    assert f"Completed 1 withdrawal(s): withdrawal:{withdrawal.pk}." in done.content.decode()
    completed = WithdrawalRequest.objects.get(pk=withdrawal.pk)
    assert (completed.status, completed.resolved_by_id) == ("completed", staff["manager"].pk)


def test_four_eyes_the_requester_cannot_approve(staff) -> None:
    alice = manager_named("alice")  # a manager who also plays, and asks for her money
    own = services.withdrawal_request(
        user=alice, amount_micro=3 * USDC, idempotency_key="own", network="base", address=EVM
    )
    assert error_of(
        lambda: services.withdrawal_complete_post(
            withdrawal_id=own.pk, staff=alice, idempotency_key="self"
        )
    ) == (
        "four_eyes",
        f"Four eyes: you requested withdrawal withdrawal:{own.pk}, so you cannot approve it. "
        "Another staff member must complete it.",
    )
    api = APIClient()
    api.force_authenticate(alice)
    refused = api.post(
        f"/api/wallet/staff/withdrawals/{own.pk}/complete/", HTTP_IDEMPOTENCY_KEY="self-api"
    )
    assert (refused.status_code, refused.json()["error"]["code"]) == (403, "four_eyes")
    client = login(alice)
    chosen = {"action": "complete", "_selected_action": [own.pk], "index": 0}
    page = client.post(reverse(CHANGELIST), chosen).content.decode()
    assert FOUR_EYES in page and 'id="nothing-to-complete"' in page
    forced = client.post(
        reverse(CHANGELIST), {**chosen, "post": "yes", "confirm": "on"}, follow=True
    )
    assert f"Not completed (withdrawal:{own.pk}): {FOUR_EYES}" in forced.content.decode()
    assert WithdrawalRequest.objects.get(pk=own.pk).status == "pending"
    # another manager may; the requester may still cancel her own request
    login(staff["manager"]).post(reverse(CHANGELIST), {**chosen, "post": "yes", "confirm": "on"})
    assert WithdrawalRequest.objects.get(pk=own.pk).status == "completed"


def test_a_withdrawal_without_a_destination_cannot_be_completed(staff) -> None:
    player = make_player("old")
    legacy = services.withdrawal_request(user=player, amount_micro=USDC, idempotency_key="old")
    assert (legacy.network, legacy.address, legacy.get_network_display()) == (
        "",
        "",
        "not recorded",
    )
    manager = login(staff["manager"])
    chosen = {"action": "complete", "_selected_action": [legacy.pk], "index": 0}
    page = manager.post(reverse(CHANGELIST), chosen).content.decode()
    assert "No destination recorded (requested before destinations were): cancel it" in page
    manager.post(reverse(CHANGELIST), {**chosen, "post": "yes", "confirm": "on"})
    assert WithdrawalRequest.objects.get(pk=legacy.pk).status == "pending"
    manager.post(reverse(CHANGELIST), {**chosen, "action": "cancel"})
    assert WithdrawalRequest.objects.get(pk=legacy.pk).status == "cancelled"


def test_pending_list_shows_reference_player_usdc_and_destination(staff) -> None:
    player = make_player("lister")
    w = services.withdrawal_request(
        user=player, amount_micro=1_250_000, idempotency_key="l", network="solana", address=SOLANA
    )
    html = login(staff["auditor"]).get(reverse(CHANGELIST)).content.decode()
    row = re.search(
        r'<tr>(<td class="action-checkbox">.*?|<th class="field-reference">.*?)</tr>', html, re.S
    )
    assert row is not None
    cells = [
        re.sub(r"<[^>]+>", "", c).strip()
        for c in re.findall(r'<t[hd] class="field-[^"]*">(.*?)</t[hd]>', row.group(1))
    ]
    assert cells[:5] == [f"withdrawal:{w.pk}", "lister", "1.25 USDC", "Solana", SOLANA]


def test_a_withdrawal_resolved_in_another_tab_is_named_not_moved_twice(staff) -> None:
    """Two tabs on the pending list: one completes withdrawal A and cancels B; the other,
    stale, then confirms A and cancels B again. Nothing moves twice, and each refusal says
    why (before, the stale tab came back to the list with no message at all)."""
    player = make_player("payee")
    a, b = (
        services.withdrawal_request(
            user=player, amount_micro=n * USDC, idempotency_key=f"w{n}", network="base", address=EVM
        )
        for n in (5, 7)
    )
    manager = login(staff["manager"])
    complete_a = {"action": "complete", "_selected_action": [a.pk], "index": 0}
    confirmed = {**complete_a, "post": "yes", "confirm": "on"}
    cancel_b = {"action": "cancel", "_selected_action": [b.pk], "index": 0}
    manager.post(reverse(CHANGELIST), confirmed)
    cancelled = manager.post(reverse(CHANGELIST), cancel_b, follow=True).content.decode()
    assert f"Cancelled 1 withdrawal(s): withdrawal:{b.pk}." in cancelled
    balances = wallet_balances(user_id=player.pk)
    stale = manager.post(reverse(CHANGELIST), confirmed, follow=True).content.decode()
    assert f"Not completed (withdrawal:{a.pk}): this withdrawal is already completed." in stale
    again = manager.post(reverse(CHANGELIST), cancel_b, follow=True).content.decode()
    assert f"Not cancelled (withdrawal:{b.pk}): this withdrawal is already cancelled." in again
    page = manager.post(reverse(CHANGELIST), complete_a).content.decode()  # the confirm page
    assert f"Not completed (withdrawal:{a.pk}): this withdrawal is already completed." in page
    assert wallet_balances(user_id=player.pk) == balances
    assert balances["player_available"] == 95 * USDC and balances["pending_withdrawal"] == 0


def test_the_confirmation_says_when_the_player_owes_the_house(staff) -> None:
    """A void left this player owing 5 USDC (their receivable) while a withdrawal waits:
    completing it stays the manager's call, but the confirmation page now says so."""
    from ledger.models import Account, AccountBalance

    player = make_player("debtor")
    withdrawal = services.withdrawal_request(
        user=player, amount_micro=20 * USDC, idempotency_key="w", network="base", address=EVM
    )
    receivable = Account.objects.create(
        key=f"receivable:{player.pk}", type="receivable", owner=player
    )
    AccountBalance.objects.create(
        account=receivable, account_type="receivable", may_go_negative=True, balance=-5 * USDC
    )
    other = services.withdrawal_request(
        user=make_player("clean"),
        amount_micro=USDC,
        idempotency_key="o",
        network="base",
        address=EVM,
    )
    chosen = {"action": "complete", "_selected_action": [withdrawal.pk, other.pk], "index": 0}
    page = login(staff["manager"]).post(reverse(CHANGELIST), chosen).content.decode()
    assert page.count("owes the house") == 1
    assert "Note: debtor owes the house 5.00 USDC (Receivables, left by a void)." in page
    assert 'id="confirm-submit"' in page  # a note, not a blocker
