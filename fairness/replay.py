"""Point 4 of fairness-v1 section 5 through the rule engine. Pure: no Django.

The round's events are folded with the engine's own `evolve` (an event that cannot follow the
state is refused); at each RoundSettled / RoundVoided the engine recomputes the settlement from the
state just before it (`casino.engine.decider.settle`, the code the live round ran), and it must
equal the recorded one. Loaded by `fairness.verify.load_engine_replay` only when the engine is
importable.

`load()` gives the check on bundle events (dicts); `load_folded()` gives the same check on
events already decoded and folded (the audit decodes and folds each round once, and shares that
fold between its own checks and this one).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

Check = Callable[[Sequence[Mapping[str, Any]], Mapping[str, Any]], list[str]]
# (decoded events, states) -> failures; states[i] is the state after events[:i].
FoldedCheck = Callable[[Sequence[Any], Sequence[Any]], list[str]]
# decoded events -> (states: None then the state after each event, failures)
Fold = Callable[[Sequence[Any]], tuple[list[Any], list[str]]]


def load_fold() -> Fold | None:
    """The engine's fold that keeps every intermediate state, or None without the engine."""
    try:
        from casino.engine.decider import evolve
    except ImportError:
        return None

    def fold(objects: Sequence[Any]) -> tuple[list[Any], list[str]]:
        states: list[Any] = [None]
        state = None
        for index, event in enumerate(objects):
            try:
                state = evolve(state, event)
            except Exception as exc:  # any refusal means the events are not a legal round
                where = f"version {index + 1} ({event.type})"
                return states, [f"replay: the rule engine refuses {where}: {exc}"]
            states.append(state)
        return states, []

    return fold


def load_folded() -> FoldedCheck | None:
    """The settlement check on decoded, folded events, or None without the engine."""
    try:
        from casino.engine.commands import VoidRound
        from casino.engine.decider import decide, settle
        from casino.engine.events import event_to_dict
    except ImportError:
        return None

    def void(state: Any, voided: Any) -> list[Any]:
        command = VoidRound(voided.reason, voided.evidence)
        return list(decide(state, command, voided.voided_at_ms, None))[:1]

    def check(objects: Sequence[Any], states: Sequence[Any]) -> list[str]:
        failures: list[str] = []
        derived: list[Any]
        for index, event in enumerate(objects):
            type_ = event.type
            if type_ == "RoundSettled":
                before = (
                    index - 1 if index and objects[index - 1].type == "CardsRevealed" else index
                )
                recorded = objects[before : index + 1]
                try:
                    derived = list(settle(states[before], event.settled_at_ms))
                except Exception as exc:  # the engine could not settle from that state
                    derived = [f"{type(exc).__name__}: {exc}"]
            elif type_ == "RoundVoided":
                recorded = objects[index : index + 1]
                try:
                    derived = void(states[index], event)
                except Exception as exc:  # the engine would not void from that state
                    derived = [f"{type(exc).__name__}: {exc}"]
            else:
                continue
            if derived == list(recorded):  # the engine's events are value objects
                continue
            as_dicts = [event_to_dict(e) if not isinstance(e, str) else e for e in derived]
            if as_dicts != [event_to_dict(e) for e in recorded]:
                failures.append(
                    f"replay: the rule engine settles version {index + 1} ({type_}) as "
                    f"{as_dicts[-1]}, the events record {event_to_dict(event)}"
                )
        return failures

    return check


def load() -> Check | None:
    """The engine-backed check on bundle events, or None when the rule engine is not importable."""
    fold, folded = load_fold(), load_folded()
    try:
        from casino.engine.events import event_from_dict
    except ImportError:
        return None
    if fold is None or folded is None:
        return None

    def check(events: Sequence[Mapping[str, Any]], receipt: Mapping[str, Any]) -> list[str]:
        try:
            objects: list[Any] = [event_from_dict({**e["data"], "type": e["type"]}) for e in events]
        except (KeyError, TypeError, ValueError) as exc:
            return [f"replay: an event does not decode ({type(exc).__name__}: {exc})"]
        states, refused = fold(objects)
        if refused:
            return refused
        return folded(objects, states)

    return check
