"""Point 4 of fairness-v1 section 5 through the rule engine. Pure: no Django.

The round's events are folded with the engine's own `evolve` (an event that cannot follow the
state is refused); at each RoundSettled / RoundVoided the engine recomputes the settlement from the
state just before it, with the same code the live round used, and it must equal the recorded one.
Loaded by `fairness.verify.load_engine_replay` only when the engine is importable.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

Check = Callable[[Sequence[Mapping[str, Any]], Mapping[str, Any]], list[str]]


def load() -> Check | None:
    """The engine-backed check, or None when the rule engine is not importable."""
    try:
        from casino.engine import banked, duel
        from casino.engine.commands import VoidRound
        from casino.engine.decider import decide, evolve
        from casino.engine.events import event_from_dict, event_to_dict
        from casino.engine.rules import DUEL
        from casino.engine.run import Run
    except ImportError:
        return None

    def settle(state: Any, at_ms: int) -> list[Any]:
        run = Run(state, at_ms, None)
        if state.rules.kind == DUEL:
            duel._finish_if_done(run)  # emits CardsRevealed then RoundSettled
        else:
            banked._settle(run)
        return list(run.events)

    def void(state: Any, data: Mapping[str, Any]) -> list[Any]:
        command = VoidRound(data["reason"], data.get("evidence", ""))
        return list(decide(state, command, data["voided_at_ms"], None))[:1]

    def check(events: Sequence[Mapping[str, Any]], receipt: Mapping[str, Any]) -> list[str]:
        try:
            objects: list[Any] = [event_from_dict({**e["data"], "type": e["type"]}) for e in events]
        except (KeyError, TypeError, ValueError) as exc:
            return [f"replay: an event does not decode ({type(exc).__name__}: {exc})"]
        states: list[Any] = [None]
        for index, event in enumerate(objects):
            try:
                states.append(evolve(states[-1], event))
            except Exception as exc:  # any refusal means the events are not a legal round
                where = f"version {index + 1} ({event.type})"
                return [f"replay: the rule engine refuses {where}: {exc}"]
        failures: list[str] = []
        for index, event in enumerate(objects):
            if event.type == "RoundSettled":
                before = (
                    index - 1 if index and objects[index - 1].type == "CardsRevealed" else index
                )
                recorded = objects[before : index + 1]
                try:
                    derived = settle(states[before], events[index]["data"]["settled_at_ms"])
                except Exception as exc:  # the engine could not settle from that state
                    derived, recorded = [f"{type(exc).__name__}: {exc}"], recorded
            elif event.type == "RoundVoided":
                recorded = objects[index : index + 1]
                try:
                    derived = void(states[index], events[index]["data"])
                except Exception as exc:  # the engine would not void from that state
                    derived = [f"{type(exc).__name__}: {exc}"]
            else:
                continue
            as_dicts = [event_to_dict(e) if not isinstance(e, str) else e for e in derived]
            if as_dicts != [event_to_dict(e) for e in recorded]:
                failures.append(
                    f"replay: the rule engine settles version {index + 1} ({event.type}) as "
                    f"{as_dicts[-1]}, the events record {event_to_dict(event)}"
                )
        return failures

    return check
