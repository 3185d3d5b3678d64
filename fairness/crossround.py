"""Checks across the rounds of a bundle (fairness-v1 section 6). Pure: no Django.

Per seed chain the bundle holds: each nonce appears once and no round id twice; round k's
commitment is the seed round k-1 revealed (across a gap, the later commitment walks down to
the earlier seed), and round k opened after that reveal; a chain line (`fairness.bundle`,
CHAIN_FORMAT) states the nonces the bundle covers, and each one missing from that range is
named; round 1's commitment is the chain's terminal (a partial range's first round walks down
to it). Within each round, `round_time_failures` checks that time never runs backwards.

`CrossRounds` collects what each line's report carries (`fairness.verify.RoundReport`: the
chain id, nonce, round id, commitment, server seed, and the recorded_at of RoundOpened and of
ServerSeedRevealed) and checks the chains once every line is read, so the per-round work can
run in worker processes (`--jobs`). It keeps about half a kilobyte per round.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from fairness.chain import walk

# recorded_at as the hash contract writes it; two such strings compare as their times.
RECORDED_AT = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z")
_AT = RECORDED_AT.fullmatch
_SEED = re.compile(r"[0-9a-f]{64}").fullmatch
# The engine's times of what happened (not deadlines), by event type: in event order, each is
# at or after the one before (opened <= closed <= beacon recorded <= settled <= voided).
ENGINE_TIMES = {
    "RoundOpened": "opened_at_ms",
    "BettingClosed": "closed_at_ms",
    "BeaconRecorded": "recorded_at_ms",
    "RoundSettled": "settled_at_ms",
    "RoundVoided": "voided_at_ms",
}
MAX_WALK = 1_000_000  # hashes walked at most across one gap (a chain has 10,000 by default)
MAX_FAILURES = 50  # named per chain; the rest are counted


def _where(event: Mapping[str, Any]) -> str:
    return f"version {event.get('version')} ({event.get('type')})"


# A round's recorded_at values, each followed by a newline, with every digit made 0: the
# template once per event when each is a time as RECORDED_AT writes it.
_ZEROS = bytes.maketrans(b"123456789", b"000000000")
_TEMPLATE = b"0000-00-00T00:00:00.000000Z\n"


def round_time_failures(events: Sequence[Any]) -> list[str]:
    """Within one round, time never runs backwards (fairness-v1 6.4): each event's recorded_at
    is at or after the previous event's, and the engine's times (ENGINE_TIMES) are in order."""
    try:  # the common case at the least cost: [] exactly when the loop below finds nothing
        ats = [event["recorded_at"] for event in events]
        # TypeError unless every one is a string, UnicodeEncodeError (a ValueError) unless ASCII
        joined = ("\n".join(ats) + "\n").encode("ascii").translate(_ZEROS)
        # the template n times: each is 27 characters of that form (none holds a newline)
        if joined == _TEMPLATE * len(ats) and ats == sorted(ats):
            times = ENGINE_TIMES
            engine = [
                event["data"][name]
                for event in events
                if (name := times.get(event["type"])) is not None
            ]
            if all(type(value) is int for value in engine) and engine == sorted(engine):
                return []
    except (TypeError, KeyError, ValueError):
        pass
    return _time_failures(events)


def _time_failures(events: Sequence[Any]) -> list[str]:
    failures: list[str] = []
    last_at: str | None = None
    last_event: Mapping[str, Any] | None = None
    engine: list[tuple[int, Mapping[str, Any], str]] = []  # the engine times in order so far
    times = ENGINE_TIMES
    for event in events:
        if type(event) is not dict:
            continue  # the strict checks name it
        at = event.get("recorded_at")
        if at is None and "recorded_at" not in event:
            pass  # the strict checks name the missing field
        elif type(at) is not str or _AT(at) is None:
            failures.append(
                f"time: {_where(event)} recorded_at {at!r} is not YYYY-MM-DDTHH:MM:SS.ffffffZ"
            )
        elif last_at is not None and at < last_at:
            assert last_event is not None
            failures.append(
                f"time: {_where(event)} is recorded at {at}, before {_where(last_event)} "
                f"at {last_at}"
            )
        else:
            last_at, last_event = at, event
        type_ = event.get("type")
        name = times.get(type_) if type(type_) is str else None
        if name is None:
            continue
        data = event.get("data")
        value = data.get(name) if type(data) is dict else None
        if type(value) is not int:
            continue  # not an engine time, or not an integer (the replay names that)
        if engine and value < engine[-1][0]:
            # named against the first time it precedes: "... is before ... opened_at_ms ..."
            at_ms, earlier, earlier_name = next(t for t in engine if t[0] > value)
            failures.append(
                f"time: {_where(event)} {name} {value} is before {_where(earlier)} "
                f"{earlier_name} {at_ms}"
            )
        else:
            engine.append((value, event, name))
    return failures


def round_facts(bundle: Mapping[str, Any]) -> dict[str, Any]:
    """What the cross-round checks need of one round line (each None where unreadable): the
    receipt's chain_id, nonce, table_id, commitment and server_seed, and the recorded_at of
    RoundOpened (`opened_at`) and of ServerSeedRevealed (`revealed_at`)."""
    receipt = bundle.get("receipt")
    receipt = receipt if type(receipt) is dict else {}
    facts: dict[str, Any] = {}
    for name in ("chain_id", "table_id", "commitment", "server_seed"):
        value = receipt.get(name)
        facts[name] = value if type(value) is str else None
    nonce = receipt.get("nonce")
    facts["nonce"] = nonce if type(nonce) is int and nonce >= 1 else None
    opened = revealed = None
    events = bundle.get("events")
    if type(events) is list:
        for event in events:
            if type(event) is dict and event.get("type") == "RoundOpened":
                opened = event.get("recorded_at")
                break
        for event in reversed(events):
            if type(event) is dict and event.get("type") == "ServerSeedRevealed":
                revealed = event.get("recorded_at")
                break
    facts["opened_at"] = opened if type(opened) is str and _AT(opened) else None
    facts["revealed_at"] = revealed if type(revealed) is str and _AT(revealed) else None
    return facts


class Report(Protocol):
    """What CrossRounds reads of a line's report (fairness.verify.RoundReport)."""

    line: int
    round_id: str
    kind: str
    chain: dict[str, Any] | None
    chain_id: str | None
    nonce: int | None
    table_id: str | None
    commitment: str | None
    server_seed: str | None
    opened_at: str | None
    revealed_at: str | None

    @property
    def ok(self) -> bool: ...


@dataclass(slots=True)
class _Round:
    line: int
    round_id: str
    table_id: str | None
    commitment: str | None
    server_seed: str | None
    opened_at: str | None
    revealed_at: str | None


@dataclass(slots=True)
class ChainResult:
    """What the bundle shows of one seed chain: ok when `failures` is empty."""

    chain_id: str
    coverage: str  # "complete" (from the terminal), "partial" or "unknown" (no chain line)
    first: int | None  # the range checked: the chain line's, else the nonces present
    last: int | None
    rounds: int  # distinct nonces present
    table_id: str | None = None
    failures: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures


def _lines(numbers: Sequence[int]) -> str:
    numbers = sorted(numbers)
    if len(numbers) == 1:
        return f"line {numbers[0]}"
    return "lines " + ", ".join(map(str, numbers[:-1])) + f" and {numbers[-1]}"


def _steps(count: int) -> str:
    return f"{count} step" if count == 1 else f"{count} steps"


def _chain_order(chain_id: str) -> tuple[int, int | str]:
    return (0, int(chain_id)) if chain_id.isdigit() else (1, chain_id)


class CrossRounds:
    """Collects the reports of a bundle's lines; `results` checks every chain they name."""

    def __init__(self) -> None:
        self._chain_lines: dict[str, tuple[int, dict[str, Any]]] = {}
        self._chain_repeats: dict[str, list[int]] = {}
        self._rounds: dict[str, dict[int, _Round]] = {}  # chain id -> nonce -> first round
        self._reused: dict[str, list[tuple[int, _Round]]] = {}  # later rounds on a nonce seen
        self._ids: dict[str, tuple[int, str]] = {}  # round id -> (its first line, chain id)
        self._id_repeats: dict[str, list[int]] = {}  # round id -> every line it is on
        self._id_chain: dict[str, str] = {}  # a repeated round id -> the chain to report on

    def add(self, report: Report) -> None:
        """One line's report, in any order (chain lines and round lines)."""
        if report.kind == "chain":
            chain = report.chain
            if chain is None or not report.ok:  # a failed chain line states nothing
                return
            chain_id = chain["chain_id"]
            if chain_id in self._chain_lines:
                first = self._chain_lines[chain_id][0]
                self._chain_repeats.setdefault(chain_id, [first]).append(report.line)
            else:
                self._chain_lines[chain_id] = (report.line, chain)
            return
        chain_id, nonce = report.chain_id, report.nonce
        if chain_id is None or nonce is None:
            return  # nothing readable to place the round on a chain
        round_ = _Round(
            report.line, report.round_id, report.table_id, report.commitment,
            report.server_seed, report.opened_at, report.revealed_at,
        )  # fmt: skip
        rounds = self._rounds.setdefault(chain_id, {})
        if nonce in rounds:
            self._reused.setdefault(chain_id, []).append((nonce, round_))
        else:
            rounds[nonce] = round_
        round_id = report.round_id
        seen = self._ids.get(round_id)
        if seen is None:
            self._ids[round_id] = (report.line, chain_id)
        else:
            self._id_repeats.setdefault(round_id, [seen[0]]).append(report.line)
            self._id_chain.setdefault(round_id, chain_id)

    def results(self) -> list[ChainResult]:
        """One result per chain named by a chain line or a round, in chain id order."""
        chains = set(self._chain_lines) | set(self._rounds)
        return [self._check(chain_id) for chain_id in sorted(chains, key=_chain_order)]

    def _check(self, chain_id: str) -> ChainResult:
        rounds = self._rounds.get(chain_id, {})
        nonces = sorted(rounds)
        stated = self._chain_lines.get(chain_id)
        chain = stated[1] if stated is not None else None
        if chain is None:
            result = ChainResult(
                chain_id, "unknown", nonces[0] if nonces else None,
                nonces[-1] if nonces else None, len(nonces),
            )  # fmt: skip
        else:
            first, last = chain["first_nonce"], chain["last_nonce"]
            coverage = "complete" if first == 1 else "partial"
            result = ChainResult(
                chain_id, coverage, first, last, len(nonces), table_id=chain["table_id"]
            )
        failures = result.failures
        fail = failures.append
        if chain_id in self._chain_repeats:
            fail(f"its chain line appears twice ({_lines(self._chain_repeats[chain_id])})")
        for round_id, chain_of in self._id_chain.items():
            if chain_of == chain_id:
                repeats = _lines(self._id_repeats[round_id])
                fail(f"round {round_id} appears more than once ({repeats})")
        for nonce, later in self._reused.get(chain_id, []):
            earlier = rounds[nonce]
            if later.round_id != earlier.round_id:
                fail(
                    f"nonce {nonce} is used by more than one round: {earlier.round_id} "
                    f"(line {earlier.line}), {later.round_id} (line {later.line})"
                )
        if chain is not None:
            self._against_chain_line(chain, rounds, nonces, fail)
        previous: int | None = None
        for nonce in nonces:
            if previous is not None:
                _link(previous, rounds[previous], nonce, rounds[nonce], fail)
            previous = nonce
        if len(failures) > MAX_FAILURES:
            more = len(failures) - MAX_FAILURES
            del failures[MAX_FAILURES:]
            fail(f"and {more} more")
        return result

    @staticmethod
    def _against_chain_line(
        chain: Mapping[str, Any],
        rounds: Mapping[int, _Round],
        nonces: Sequence[int],
        fail: Any,
    ) -> None:
        first, last, table = chain["first_nonce"], chain["last_nonce"], chain["table_id"]
        span = f"range {first}..{last}"
        for nonce in nonces:
            round_ = rounds[nonce]
            if not first <= nonce <= last:
                fail(f"nonce {nonce} (round {round_.round_id}) is outside the chain line's {span}")
            if round_.table_id is not None and round_.table_id != table:
                fail(
                    f"nonce {nonce} (round {round_.round_id}) is on table {round_.table_id}, "
                    f"the chain's table is {table}"
                )
        present = [n for n in nonces if first <= n <= last]
        expected = first
        for nonce in [*present, last + 1]:
            if nonce > expected:
                gap = (
                    f"nonce {expected}"
                    if nonce == expected + 1
                    else f"nonces {expected}..{nonce - 1}"
                )
                fail(f"{gap} missing ({span})")
            expected = nonce + 1
        if not nonces:
            return
        lowest = rounds[nonces[0]]
        if lowest.commitment is None:
            return
        steps = nonces[0] - 1
        terminal = chain["terminal"]
        where = f"nonce {nonces[0]} (round {lowest.round_id})"
        if steps == 0:
            if lowest.commitment != terminal:
                fail(f"{where} commits to {lowest.commitment}, not the chain's terminal {terminal}")
        elif (
            steps <= MAX_WALK
            and _SEED(lowest.commitment) is not None
            and walk(lowest.commitment, steps) != terminal
        ):
            fail(
                f"{where}: its commitment does not walk down to the chain's terminal "
                f"{terminal} in {_steps(steps)}"
            )


def _link(a: int, earlier: _Round, b: int, later: _Round, fail: Any) -> None:
    """Round b's commitment is the seed round a revealed (b = a + 1), or walks down to it
    across the nonces between; round b opened after round a revealed its seed."""
    older = f"nonce {a} (round {earlier.round_id})"
    newer = f"nonce {b} (round {later.round_id})"
    seed, commitment = earlier.server_seed, later.commitment
    if seed is not None and commitment is not None:
        steps = b - 1 - a
        if steps == 0:
            if commitment != seed:
                fail(f"{newer} commits to {commitment}, but {older} revealed {seed}")
        elif (
            steps <= MAX_WALK and _SEED(commitment) is not None and walk(commitment, steps) != seed
        ):
            fail(
                f"{newer}: its commitment does not walk down to the seed {older} "
                f"revealed ({_steps(steps)})"
            )
    if (
        earlier.revealed_at is not None
        and later.opened_at is not None
        and later.opened_at < earlier.revealed_at
    ):
        fail(
            f"{newer} opened at {later.opened_at}, before {older} revealed its seed "
            f"at {earlier.revealed_at}"
        )


def format_chain(result: ChainResult) -> str:
    """One line per chain: OK with its coverage, or FAIL with every reason."""
    if not result.ok:
        return f"FAIL chain {result.chain_id}: " + "; ".join(result.failures)
    span = f"nonces {result.first}..{result.last}"
    table = f", table {result.table_id}" if result.table_id is not None else ""
    if result.coverage == "complete":
        return f"OK   chain {result.chain_id}: complete from its terminal ({span}{table})"
    if result.coverage == "partial":
        return (
            f"OK   chain {result.chain_id}: {span}, none missing (partial: from nonce "
            f"{result.first}, not from the terminal{table})"
        )
    return (
        f"OK   chain {result.chain_id}: coverage unknown (no chain line); {result.rounds} "
        f"rounds between nonces {result.first} and {result.last}, linked"
    )


def summary(results: Iterable[ChainResult]) -> str:
    """The chains' summary line."""
    results = list(results)
    counts = {"complete": 0, "partial": 0, "unknown": 0}
    failed = 0
    for result in results:
        if result.ok:
            counts[result.coverage] += 1
        else:
            failed += 1
    chains = "chain" if len(results) == 1 else "chains"
    return (
        f"{len(results)} {chains}: {counts['complete']} complete from the terminal, "
        f"{counts['partial']} partial, {counts['unknown']} coverage unknown, {failed} failed"
    )
