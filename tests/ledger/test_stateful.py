"""Random sequences of deposits, bets, settlements, voids and withdrawals (Hypothesis
stateful), some with a crash injected half way through a service. After every step the
database matches a plain-Python model and every reconciliation invariant holds.

Runs with real commits (transaction=True) so PostgreSQL's deferred balance trigger fires.
A failure prints the step sequence; Hypothesis replays it from its database.
"""

from __future__ import annotations

import itertools
from typing import Any
from unittest import mock

import pytest
from django.db import transaction
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from casino.platform.errors import ApplicationError
from ledger import posting, services
from ledger.models import WithdrawalRequest
from tests.ledger.factories import assert_ledger_ok, balance, make_user

USDC = 1_000_000
MULTIPLIERS = [(0, 1), (1, 1), (2, 1), (5, 2)]  # lose, push, win, blackjack (gross x stake)
_ids = itertools.count()


class Crash(Exception):
    """Injected failure: the service must roll back as if it never ran."""


def crash_after(writes: int) -> Any:
    """Patch the posting core to raise once `writes` entries have been written."""
    real = posting.post
    done = {"n": 0}

    def post(**kwargs: Any) -> Any:
        entry = real(**kwargs)
        done["n"] += 1
        if done["n"] >= writes:
            raise Crash
        return entry

    return mock.patch.object(posting, "post", post)


class LedgerMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.players = [make_user() for _ in range(3)]
        self.model = {p.pk: {"available": 0, "pending": 0, "receivable": 0} for p in self.players}
        self.rounds: dict[str, dict[str, Any]] = {}
        self.pending: list[tuple[int, int, int]] = []  # (withdrawal id, user id, amount)
        self.staff = make_user(staff=True)
        self.house0 = balance("house_bankroll")
        self.fee0 = balance("house_fee_revenue")
        self.house = 0
        self.fee = 0

    def _player(self, index: int) -> Any:
        return self.players[index % len(self.players)]

    def _maybe_crash(self, crash: bool, writes: int, call: Any) -> bool:
        """Run call(); with `crash`, inject a failure and check it was raised. True if ran."""
        if not crash:
            call()
            return True
        with crash_after(writes), pytest.raises(Crash):
            call()
        return False

    @rule(who=st.integers(0, 2), amount=st.integers(1, 60), crash=st.booleans())
    def deposit(self, who: int, amount: int, crash: bool) -> None:
        player = self._player(who)
        key = f"dep-{next(_ids)}"

        def call():
            return services.wallet_deposit(
                user=player, amount_micro=amount * USDC, idempotency_key=key
            )

        if self._maybe_crash(crash, 1, call):
            self.model[player.pk]["available"] += amount * USDC

    @rule(who=st.integers(0, 2), amount=st.integers(1, 25), new=st.booleans(), duel=st.booleans())
    def bet(self, who: int, amount: int, new: bool, duel: bool) -> None:
        player = self._player(who)
        open_rounds = [r for r, v in self.rounds.items() if v["state"] == "open"]
        if new or not open_rounds:
            ref = f"sm-{next(_ids)}"
            self.rounds[ref] = {
                "state": "open",
                "duel": duel,
                "stakes": {},
                "returns": {},
                "house": 0,
                "fee": 0,
            }
        else:
            ref = open_rounds[amount % len(open_rounds)]
        micro = amount * USDC
        try:
            services.round_stake(
                round_ref=ref, user=player, amount_micro=micro, idempotency_key=f"bet-{next(_ids)}"
            )
        except ApplicationError as exc:
            assert exc.code == "insufficient_funds"
            assert self.model[player.pk]["available"] < micro
            return
        self.model[player.pk]["available"] -= micro
        stakes = self.rounds[ref]["stakes"]
        stakes[player.pk] = stakes.get(player.pk, 0) + micro

    @rule(data=st.data(), crash=st.booleans())
    def settle(self, data: st.DataObject, crash: bool) -> None:
        candidates = [r for r, v in self.rounds.items() if v["state"] == "open" and v["stakes"]]
        if not candidates:
            return
        ref = data.draw(st.sampled_from(sorted(candidates)))
        info = self.rounds[ref]
        pot = sum(info["stakes"].values())
        if info["duel"]:
            fee = pot * 300 // 10_000
            winner = data.draw(st.sampled_from(sorted(info["stakes"])))
            returns, house = {winner: pot - fee}, 0
        else:
            fee = 0
            returns = {}
            for pk, stake in info["stakes"].items():
                num, den = data.draw(st.sampled_from(MULTIPLIERS))
                returns[pk] = stake * num // den
            house = pot - sum(returns.values())
        entries = (fee > 0) + bool(any(returns.values()) or house)

        def call() -> None:
            services.round_settle(
                round_ref=ref,
                returns=[(pk, amount) for pk, amount in returns.items()],
                fee_micro=fee,
                house_banked=not info["duel"],
                idempotency_key=f"settle-{ref}",
            )

        # Crash after the first of two entries: half a settlement must not survive.
        if self._maybe_crash(crash and entries >= 1, max(1, entries - 1), call):
            for pk, amount in returns.items():
                self.model[pk]["available"] += amount
            info.update(state="settled", returns=returns, house=house, fee=fee)
            self.house += house
            self.fee += fee

    @rule(data=st.data(), crash=st.booleans())
    def void(self, data: st.DataObject, crash: bool) -> None:
        candidates = [r for r, v in self.rounds.items() if v["state"] != "voided"]
        if not candidates:
            return
        ref = data.draw(st.sampled_from(sorted(candidates)))
        info = self.rounds[ref]
        players = set(info["stakes"]) | set(info["returns"])
        # A void posts an entry only if the round's net effect is not zero (a push is).
        moves_money = (
            any(info["stakes"].get(pk, 0) != info["returns"].get(pk, 0) for pk in players)
            or info["house"] != 0
            or info["fee"] != 0
        )
        call = lambda: services.round_void(round_ref=ref, idempotency_key=f"void-{ref}")  # noqa: E731
        if not self._maybe_crash(crash and moves_money, 1, call):
            return
        for pk in set(info["stakes"]) | set(info["returns"]):
            wallet = self.model[pk]
            wallet["available"] += info["stakes"].get(pk, 0) - info["returns"].get(pk, 0)
            if wallet["available"] < 0:
                wallet["receivable"] += wallet["available"]
                wallet["available"] = 0
        self.house -= info["house"]
        self.fee -= info["fee"]
        info["state"] = "voided"
        with pytest.raises(ApplicationError):
            services.round_void(round_ref=ref, idempotency_key=f"void-again-{ref}")

    @rule(who=st.integers(0, 2), amount=st.integers(1, 40), crash=st.booleans())
    def withdraw(self, who: int, amount: int, crash: bool) -> None:
        player = self._player(who)
        micro = amount * USDC
        result: list[WithdrawalRequest] = []
        call = lambda: result.append(  # noqa: E731
            services.withdrawal_request(
                user=player, amount_micro=micro, idempotency_key=f"w-{next(_ids)}"
            )
        )
        try:
            if not self._maybe_crash(crash, 1, call):
                return
        except ApplicationError as exc:
            assert exc.code == "insufficient_funds"
            assert self.model[player.pk]["available"] < micro
            return
        self.model[player.pk]["available"] -= micro
        self.model[player.pk]["pending"] += micro
        self.pending.append((result[0].pk, player.pk, micro))

    @rule(complete=st.booleans(), crash=st.booleans())
    def resolve_withdrawal(self, complete: bool, crash: bool) -> None:
        if not self.pending:
            return
        wid, pk, micro = self.pending[0]
        resolve = services.withdrawal_complete_post if complete else services.withdrawal_cancel_post

        def call() -> None:
            with transaction.atomic(durable=True):
                resolve(withdrawal_id=wid, staff=self.staff, idempotency_key=f"r-{wid}")

        if not self._maybe_crash(crash, 1, call):
            assert WithdrawalRequest.objects.get(pk=wid).status == "pending"
            return
        self.pending.pop(0)
        self.model[pk]["pending"] -= micro
        if not complete:
            self.model[pk]["available"] += micro

    @invariant()
    def database_matches_model_and_reconciles(self) -> None:
        for pk, wallet in self.model.items():
            assert balance(f"player_available:{pk}") == wallet["available"]
            assert balance(f"pending_withdrawal:{pk}") == wallet["pending"]
            assert balance(f"receivable:{pk}") == wallet["receivable"]
            assert wallet["available"] >= 0
        for ref, info in self.rounds.items():
            expected = sum(info["stakes"].values()) if info["state"] == "open" else 0
            assert balance(f"round_escrow:{ref}") == expected
        assert balance("house_bankroll") - self.house0 == self.house
        assert balance("house_fee_revenue") - self.fee0 == self.fee
        assert_ledger_ok()


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_random_sequences_keep_every_invariant() -> None:
    run_state_machine_as_test(
        LedgerMachine,
        settings=settings(
            max_examples=12,
            stateful_step_count=25,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        ),
    )
