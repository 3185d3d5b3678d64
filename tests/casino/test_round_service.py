"""The round service: one command path from events to ledger, projections and proofs."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

import pytest
from django.core.management import call_command

from casino.engine.commands import Double, Hit, PlaceBet, Stand
from casino.engine.rules import USDC
from casino.eventstore.models import StoredEvent
from casino.models import Round, RoundPlayer, RoundStatus
from casino.platform.errors import ApplicationError
from casino.rounds import money as roundmoney
from casino.rounds import services, stream
from casino.rounds.audit import audit, bundle_line
from casino.rounds.projections import rebuild_all
from casino.tables.play import play
from fairness.chain import hash_seed
from fairness.models import RoundProof
from fairness.verify import KeyRing, load_engine_replay, verify_round
from ledger.reconcile import ledger_reconcile
from tests.casino.conftest import available, make_player, make_table

pytestmark = pytest.mark.django_db

Stack = Callable[[Sequence[str]], None]


def event_types(round_id: str) -> list[str]:
    return list(
        StoredEvent.objects.filter(stream_id=round_id)
        .order_by("version")
        .values_list("type", flat=True)
    )


def test_classic_round_through_the_service_moves_exact_money(stack_shoe: Stack) -> None:
    # Player 9H 7D, dealer hole 5C up TS; player doubles to 9H 7D 4S = 20; dealer 5C TS 6D = 21?
    # No: dealer draws 2H to 17 with 5+10+2. Deal order: player, dealer(hole), player, dealer(up).
    stack_shoe(["9H", "5C", "7D", "TS", "4S", "2H"])
    alice = make_player("alice")
    table = make_table("classic", min_bet=USDC, max_bet=100 * USDC)
    opened = services.round_open(table=table, players=[alice])
    round_id = opened.round.id
    assert opened.round.status == RoundStatus.OPEN
    assert opened.state.phase == "betting"

    services.round_command(round_id=round_id, command=PlaceBet(str(alice.pk), (10 * USDC,)))
    assert available(alice) == 90 * USDC
    result = services.round_command(round_id=round_id, command=Double(str(alice.pk)))

    assert result.state.phase == "settled"
    hand = result.state.settlement.hands[0]
    assert (hand.outcome, hand.stake, hand.gross_return, hand.total) == (
        "win",
        20 * USDC,
        40 * USDC,
        20,
    )
    assert result.state.settlement.dealer_total == 17
    assert available(alice) == 120 * USDC
    row = Round.objects.get(id=round_id)
    assert (row.status, row.stake_total, row.return_total) == ("settled", 20 * USDC, 40 * USDC)
    assert RoundPlayer.objects.get(round_id=round_id).gross_return == 40 * USDC
    types = event_types(round_id)
    assert types[0] == "RoundOpened" and types[-1] == "ServerSeedRevealed"
    assert "HandDoubled" in types


def test_finished_round_reveals_its_seed_and_signs_a_receipt(stack_shoe: Stack) -> None:
    stack_shoe(["TH", "9C", "QD", "8S"])
    bob = make_player("bob")
    round_id = services.round_open(table=make_table("classic"), players=[bob]).round.id
    services.round_command(round_id=round_id, command=PlaceBet(str(bob.pk), (USDC,)))
    result = services.round_command(round_id=round_id, command=Stand(str(bob.pk)))
    seed = result.state.server_seed
    assert seed is not None and hash_seed(seed) == result.state.opened.commitment
    proof = RoundProof.objects.get(round_id=round_id)
    assert proof.receipt["server_seed"] == seed
    assert proof.receipt["outcome"] == "settled"
    assert proof.receipt["cards"] == [
        {"position": 0, "card": "TH"},
        {"position": 1, "card": "9C"},
        {"position": 2, "card": "QD"},
        {"position": 3, "card": "8S"},
    ]


def test_domain_errors_change_nothing(stack_shoe: Stack) -> None:
    stack_shoe(["TH", "9C", "QD", "8S"])
    carol = make_player("carol")
    round_id = services.round_open(
        table=make_table("classic", min_bet=USDC), players=[carol]
    ).round.id
    before = event_types(round_id)
    with pytest.raises(ApplicationError) as caught:
        services.round_command(round_id=round_id, command=PlaceBet(str(carol.pk), (USDC // 2,)))
    assert (caught.value.code, caught.value.status_code) == ("bet_below_minimum", 400)
    with pytest.raises(ApplicationError) as caught:
        services.round_command(round_id=round_id, command=Hit(str(carol.pk)))
    assert (caught.value.code, caught.value.status_code) == ("action_not_allowed", 409)
    assert event_types(round_id) == before
    assert available(carol) == 100 * USDC


def test_insufficient_funds_is_refused_and_changes_nothing(stack_shoe: Stack) -> None:
    stack_shoe(["TH", "9C", "QD", "8S"])
    poor = make_player("poor", funds=2 * USDC)
    round_id = services.round_open(table=make_table("classic"), players=[poor]).round.id
    before = event_types(round_id)
    with pytest.raises(ApplicationError) as caught:
        services.round_command(round_id=round_id, command=PlaceBet(str(poor.pk), (5 * USDC,)))
    assert caught.value.code == "insufficient_funds"
    assert event_types(round_id) == before
    assert available(poor) == 2 * USDC


def test_unknown_round_is_404() -> None:
    with pytest.raises(ApplicationError) as caught:
        services.round_command(round_id="nope", command=Stand("1"))
    assert (caught.value.code, caught.value.status_code) == ("not_found", 404)


def test_a_malfunction_mid_round_voids_it_and_refunds(
    stack_shoe: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    stack_shoe(["9H", "5C", "7D", "TS", "4S", "2H"])
    dave = make_player("dave")
    round_id = services.round_open(table=make_table("classic"), players=[dave]).round.id
    services.round_command(round_id=round_id, command=PlaceBet(str(dave.pk), (10 * USDC,)))
    assert available(dave) == 90 * USDC

    real_post = roundmoney.post_legs
    calls: list[str] = []

    def fails_once(**kwargs: object) -> None:
        calls.append("post")
        if len(calls) == 1:  # half way through the command: events appended, money not posted
            raise RuntimeError("disk on fire")
        real_post(**kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(roundmoney, "post_legs", fails_once)
    with pytest.raises(ApplicationError) as caught:
        services.round_command(round_id=round_id, command=Double(str(dave.pk)))
    assert (caught.value.code, caught.value.status_code) == ("round_voided_malfunction", 500)
    assert len(calls) == 2  # the failed command, then the void in its own transaction

    row = Round.objects.get(id=round_id)
    assert row.status == RoundStatus.VOIDED
    assert available(dave) == 100 * USDC
    types = event_types(round_id)
    assert "HandDoubled" not in types  # the failed command left nothing behind
    assert types[-2:] == ["RoundVoided", "ServerSeedRevealed"]
    state = stream.round_state_for(round_id=round_id)
    assert state.voided is not None and state.voided.reason == "malfunction"
    assert "RuntimeError: disk on fire" in state.voided.evidence
    proof = RoundProof.objects.get(round_id=round_id)
    assert proof.receipt["outcome"] == "voided"
    assert ledger_reconcile().ok, ledger_reconcile().as_dict()


def test_staff_void_after_settlement_reverses_the_payout(stack_shoe: Stack) -> None:
    stack_shoe(["9H", "5C", "7D", "TS", "4S", "2H"])
    erin = make_player("erin")
    round_id = services.round_open(table=make_table("classic"), players=[erin]).round.id
    services.round_command(round_id=round_id, command=PlaceBet(str(erin.pk), (10 * USDC,)))
    services.round_command(round_id=round_id, command=Double(str(erin.pk)))
    assert available(erin) == 120 * USDC
    settled = RoundProof.objects.get(round_id=round_id).receipt
    assert (settled["outcome"], settled["final_event_version"]) == (
        "settled",
        len(event_types(round_id)),
    )
    call_command("void_round", round_id, reason="shuffler fault", evidence="ticket 42")
    assert available(erin) == 100 * USDC
    assert Round.objects.get(id=round_id).status == RoundStatus.VOIDED
    # The proof is now the voided receipt over the whole stream, and the round audits clean.
    types = event_types(round_id)
    assert types[-2:] == ["ServerSeedRevealed", "RoundVoided"]
    voided = RoundProof.objects.get(round_id=round_id).receipt
    assert (voided["outcome"], voided["final_event_version"]) == ("voided", len(types))
    assert voided["server_seed"] == settled["server_seed"]
    assert voided["cards"] == settled["cards"]
    with pytest.raises(ApplicationError) as caught:
        services.round_void(round_id=round_id, reason="again")
    assert (caught.value.code, caught.value.status_code) == ("already_voided", 409)
    assert ledger_reconcile().ok, ledger_reconcile().as_dict()
    with pytest.raises(ApplicationError) as caught:
        services.round_void(round_id=round_id, reason="   ")
    assert caught.value.code == "reason_required"


def test_an_expired_deadline_applies_before_the_next_command(stack_shoe: Stack) -> None:
    stack_shoe(["9H", "5C", "7D", "TS", "4S", "2H"])
    fay = make_player("fay")
    opened = services.round_open(table=make_table("classic"), players=[fay], at_ms=1_000_000)
    round_id = opened.round.id
    services.round_command(
        round_id=round_id, command=PlaceBet(str(fay.pk), (USDC,)), at_ms=1_000_100
    )
    deadline = stream.round_state_for(round_id=round_id).deadline_ms
    assert deadline is not None
    # The player comes back after the turn timer: the hand was stood, the hit is refused.
    with pytest.raises(ApplicationError) as caught:
        services.round_command(round_id=round_id, command=Hit(str(fay.pk)), at_ms=deadline + 1)
    assert caught.value.code == "round_finished"
    state = stream.round_state_for(round_id=round_id)
    assert state.phase == "settled"
    assert "PlayerStood" in event_types(round_id)
    # A nudge after the fact changes nothing.
    version = Round.objects.get(id=round_id).version
    services.round_timeout(round_id=round_id, at_ms=deadline + 5)
    assert Round.objects.get(id=round_id).version == version


@pytest.mark.parametrize(("ruleset", "players"), [("classic", 1), ("duel", 2)])
def test_a_late_void_gets_a_voided_proof_that_audits_and_verifies(
    ruleset: str, players: int
) -> None:
    # The real fair shoe, so the audit and the standalone verifier check every card.
    report = play(ruleset=ruleset, rounds=2, players=players, seed=11)
    late, untouched = report.round_ids
    services.round_void(round_id=late, reason="found later", evidence="ticket 7")
    assert event_types(late)[-2:] == ["ServerSeedRevealed", "RoundVoided"]
    assert RoundProof.objects.get(round_id=late).receipt["outcome"] == "voided"
    assert RoundProof.objects.get(round_id=untouched).receipt["outcome"] == "settled"
    assert [r.problems for r in audit([late, untouched])] == [[], []]
    line = bundle_line(late)
    assert line is not None
    verified = verify_round(
        json.loads(json.dumps(line)), KeyRing(), replay_check=load_engine_replay()
    )
    assert verified.failures == []
    assert ledger_reconcile().ok, ledger_reconcile().as_dict()


@pytest.mark.parametrize(
    ("ruleset", "players"), [("classic", 1), ("atlantic_city", 1), ("duel_classic", 3), ("duel", 3)]
)
def test_bots_play_every_rule_set_and_everything_checks_out(ruleset: str, players: int) -> None:
    report = play(ruleset=ruleset, rounds=4, players=players, seed=7)
    assert report.rounds == 4
    assert ledger_reconcile().ok, ledger_reconcile().as_dict()
    reports = audit(report.round_ids)
    assert [r.problems for r in reports] == [[]] * 4
    assert rebuild_all(write=False)["differences"] == 0
    replay = load_engine_replay()
    assert replay is not None
    for round_id in report.round_ids:
        line = bundle_line(round_id)
        assert line is not None
        verified = verify_round(json.loads(json.dumps(line)), KeyRing(), replay_check=replay)
        assert verified.failures == [] and verified.replayed
