"""`manage.py reconcile`: passes on a sound ledger, exits 1 naming the failing account."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from ledger import reconcile, services
from ledger.models import AccountBalance
from tests.ledger.factories import fund, make_user

pytestmark = pytest.mark.django_db


def _run(*args: str) -> tuple[int, str, str]:
    out, err = StringIO(), StringIO()
    try:
        call_command("reconcile", *args, stdout=out, stderr=err)
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


def _some_money() -> object:
    user = make_user()
    fund(user, 5_000_000)
    services.round_stake(round_ref="rc", user=user, amount_micro=1_000_000, idempotency_key="b")
    return user


def test_sound_ledger_passes_with_one_json_line() -> None:
    _some_money()
    code, out, _ = _run("--json")
    assert code == 0
    assert out.count("\n") <= 1
    report = json.loads(out)
    assert report["ok"] is True
    assert report["total_micro"] == 0
    assert report["accounts"] >= 3
    assert report["problems"] == []
    assert {"entry_balanced", "stored_balance", "non_negative", "sum_zero"} <= set(report["checks"])


def test_a_drifted_stored_balance_fails_and_names_the_account() -> None:
    user = _some_money()
    key = f"player_available:{user.pk}"  # type: ignore[attr-defined]
    AccountBalance.objects.filter(account__key=key).update(balance=4_000_001)
    code, out, _ = _run("--json")
    assert code == 1
    report = json.loads(out)
    assert report["ok"] is False
    accounts = {p["account"] for p in report["problems"]}
    assert key in accounts
    assert {p["check"] for p in report["problems"]} >= {"stored_balance", "sum_zero"}
    code, _, err = _run()
    assert code == 1
    assert key in err


def test_failures_print_amounts_in_usdc() -> None:
    """The summary line reads USDC; the FAIL lines printed bare micro-units beside it."""
    user = _some_money()
    key = f"player_available:{user.pk}"  # type: ignore[attr-defined]
    AccountBalance.objects.filter(account__key=key).update(balance=4_000_001)
    code, _, err = _run()
    assert code == 1
    assert err.splitlines() == [
        f"FAIL stored_balance [account {key}]: account {key}: stored 4.000001 USDC != "
        "postings 4.000000 USDC",
        "FAIL sum_zero: all accounts sum to 0.000001 USDC (postings 0.000000 USDC), not 0",
    ]


def test_registered_checks_run_too() -> None:
    calls: list[str] = []

    @reconcile.register_check("test_extra")
    def extra() -> list[reconcile.Problem]:
        calls.append("ran")
        return [reconcile.Problem("test_extra", "round r1 legs differ", account="round_escrow:r1")]

    try:
        code, out, _ = _run("--json")
    finally:
        reconcile._EXTRA_CHECKS.pop("test_extra")
    assert calls == ["ran"]
    assert code == 1
    assert json.loads(out)["problems"][0]["account"] == "round_escrow:r1"
