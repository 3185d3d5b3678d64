"""Point 4 of fairness-v1 section 5 through the rule engine. Pure: no Django.

The round's events are folded with the engine's own `evolve` (an event that cannot follow the
state is refused); at each RoundSettled / RoundVoided the engine recomputes the settlement from the
state just before it (`casino.engine.decider.settlement`: what `settle`, the code the live round
ran, derives), and it must equal the recorded one. Loaded by
`fairness.verify.load_engine_replay` only when the engine is importable.

`load()` gives the check on bundle events (dicts); `load_folded()` gives the same check on
events already decoded and folded (the audit decodes and folds each round once, and shares that
fold between its own checks and this one). `load_decoders()` turn an event's type and data into
the engine's event: what `casino.engine.events.event_from_dict({**data, "type": type})` makes,
through one constructor call per value object, compiled once from the events' dataclass fields.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable, Mapping, Sequence
from itertools import repeat
from typing import Any

Check = Callable[[Sequence[Mapping[str, Any]], Mapping[str, Any]], list[str]]
# (decoded events, states) -> failures; states[i] is the state after events[:i].
FoldedCheck = Callable[[Sequence[Any], Sequence[Any]], list[str]]
# decoded events -> (states: None then the state after each event, failures)
Fold = Callable[[Sequence[Any]], tuple[list[Any], list[str]]]
# event type -> (event data -> the engine's event; KeyError: a missing field).
Decoders = dict[str, Callable[[Mapping[str, Any]], Any]]


def compile_decoders(event_types: Mapping[str, type[Any]]) -> Decoders:
    """A decoder per event type for these event classes (frozen dataclasses, as the engine's).

    The same values as the engine's generic `event_from_dict`, read field by field in the
    same order (so a missing field raises the same KeyError): a field whose type is a
    dataclass is decoded as one, a `tuple[X, ...]` becomes a tuple (of X when X is a
    dataclass), anything else is taken as is. Each class gets one generated function that
    calls its constructor with every field positionally, or, for a slots dataclass (the
    engine's are frozen slots dataclasses whose __init__ only stores each field, through
    `casino.engine.fastdata.fast_init`), stores the fields into a new instance's slots in the
    same order without the constructor call (a test holds the values equal to the engine's).
    """
    namespace: dict[str, Any] = {}
    names: dict[type[Any], str] = {}

    def build(cls: type[Any]) -> str:
        name = names.get(cls)
        if name is not None:
            return name
        name = names[cls] = f"_decode_{len(names)}"
        namespace[f"{name}_cls"] = cls
        hints = typing.get_type_hints(cls)
        args = []
        for field in dataclasses.fields(cls):
            hint, value = hints[field.name], f"d[{field.name!r}]"
            if isinstance(hint, type) and dataclasses.is_dataclass(hint):
                args.append(f"{build(hint)}({value})")
            elif typing.get_origin(hint) is tuple:
                inner = (typing.get_args(hint) or (None,))[0]
                if isinstance(inner, type) and dataclasses.is_dataclass(inner):
                    args.append(f"tuple(map({build(inner)}, {value}))")
                else:
                    args.append(f"tuple({value})")
            else:
                args.append(value)
        if (
            "__slots__" in cls.__dict__
            and "__new__" not in cls.__dict__
            and not hasattr(cls, "__post_init__")
        ):
            # A slots dataclass whose __init__ only stores each field: store them straight
            # into the slots (as `casino.engine.fastdata.fast_init` does inside __init__),
            # without the constructor call around it; same order, so the same KeyError.
            namespace[f"{name}_new"] = object.__new__
            fields = dataclasses.fields(cls)
            twin = _slots_twin(cls)
            if twin is not None:
                # Stored as plain attribute stores into an instance of a class with the
                # same slots, which then becomes an instance of `cls` (the frozen class's
                # __setattr__ refuses stores; a descriptor call per field cost twice these).
                namespace[f"{name}_twin"] = twin
                stores = [
                    f"    o.{field.name} = {arg}\n" for field, arg in zip(fields, args, strict=True)
                ]
                source = (
                    f"def {name}(d):\n    o = {name}_new({name}_twin)\n{''.join(stores)}"
                    f"    o.__class__ = {name}_cls\n    return o\n"
                )
            else:
                stores = []
                for i, (field, arg) in enumerate(zip(fields, args, strict=True)):
                    slot = next(
                        k.__dict__[field.name] for k in cls.__mro__ if field.name in k.__dict__
                    )
                    namespace[f"{name}_set{i}"] = slot.__set__
                    stores.append(f"    {name}_set{i}(o, {arg})\n")
                source = (
                    f"def {name}(d):\n    o = {name}_new({name}_cls)\n{''.join(stores)}"
                    "    return o\n"
                )
        else:
            source = f"def {name}(d):\n    return {name}_cls({', '.join(args)})\n"
        exec(source, namespace)  # the technique dataclasses itself uses for __init__
        return name

    return {type_: namespace[build(cls)] for type_, cls in event_types.items()}


def _slots_twin(cls: type[Any]) -> type[Any] | None:
    """A plain class with exactly `cls`'s slots, whose instances can be made instances of
    `cls` by assigning `__class__` (the same layout: CPython checks it), or None when `cls`
    is not such a class (a base other than object, a dict or a private slot name)."""
    slots = cls.__dict__.get("__slots__")
    if (
        cls.__bases__ != (object,)
        or not isinstance(slots, tuple)
        or "__dict__" in cls.__dict__
        or not all(
            isinstance(n, str) and n.isidentifier() and not n.startswith("__") for n in slots
        )
        or {f.name for f in dataclasses.fields(cls)} != set(slots)
    ):
        return None
    twin = type(f"{cls.__name__}Slots", (), {"__slots__": slots, "__module__": __name__})
    try:
        probe: Any = object.__new__(twin)
        probe.__class__ = cls
    except TypeError:  # not the same layout after all
        return None
    return twin


_DECODERS: list[Decoders] = []  # the engine's decoders, compiled on first use


def load_decoders() -> Decoders | None:
    """The engine's event decoders (see `compile_decoders`), or None without the engine.

    Compiled once per process (about 4 ms: a `manage.py audit` of one round used to pay it
    for that round alone) and shared: callers only read the mapping.
    """
    if not _DECODERS:
        try:
            from casino.engine.events import EVENT_TYPES
        except ImportError:
            return None
        _DECODERS.append(compile_decoders(EVENT_TYPES))
    return _DECODERS[0]


def load_fold(*, runs: bool = False) -> Fold | None:
    """The engine's fold, or None without the engine.

    The states it returns: states[k] is the state after events[:k], except inside a run of
    two or more card events, or of two or more bets, which the engine's batch folds fold as
    one state (the same state at the run's end, with the same refusals, as folding them one
    by one); there states[k] is None. The settlement check reads only the states before a
    RoundSettled, CardsRevealed or RoundVoided, never inside such a run. When a run is
    refused, it is folded one by one again, so the refusal names the event at fault.

    The batch folds: `fold_cards` for cards, or `fold_deal` (each box's two cards built at
    once) for a round's first deal when `is_first_deal` holds; `fold_bets` (the boxes sorted
    once) for bets whose boxes and players are plain integers and strings (`plain_bets`).

    `runs`: more such runs, for the settlement check's fold (`load`; the states it reads are
    never inside one): the bets, BettingClosed and the first deal by `fold_opening` (else
    the bets as above, and BettingClosed with the first deal by `fold_closed_deal`); a banked
    round's play from DealerPeeked or the first TurnStarted to the dealer's last card by
    `fold_play` (else as follows); a turn (TurnStarted, the player's cards, PlayerStood) by
    `fold_turn_stood`; the hole card and the dealer's cards by `fold_hole_cards`;
    RoundSettled and ServerSeedRevealed by `fold_settled_seed`.
    """
    try:
        from casino.engine.decider import evolve
        from casino.engine.events import (
            BetPlaced,
            BettingClosed,
            DealerCardDealt,
            DealerPeeked,
            HoleCardRevealed,
            PlayerCardDealt,
            PlayerStood,
            RoundSettled,
            ServerSeedRevealed,
            TurnStarted,
        )
        from casino.engine.evolve import (
            HANDLERS,
            fold_bets,
            fold_cards,
            fold_closed_deal,
            fold_deal,
            fold_hole_cards,
            fold_opening,
            fold_play,
            fold_settled_seed,
            fold_turn_stood,
        )
    except ImportError:
        return None
    cards = (PlayerCardDealt, DealerCardDealt)
    # A banked round's play (fold_play): what it starts with, and every event it takes (a
    # set: one hash lookup a type).
    play_start = (DealerPeeked, TurnStarted)
    play = frozenset(
        (
            DealerPeeked,
            TurnStarted,
            PlayerCardDealt,
            PlayerStood,
            HoleCardRevealed,
            DealerCardDealt,
        )
    )
    # An empty hand's cards and positions, and its hard total, ace, split, split aces and
    # doubled flags (Hand's fields 0-1 and 3-7), as every hand is before its first card.
    empty, unplayed = ((), ()), (0, False, False, False, False)

    def is_first_deal(s: Any, run: Sequence[Any]) -> bool:
        """Whether `run` is what `fold_deal` takes for the first deal (two passes over the
        boxes in order, each ending with the dealer or neither does), at shoe positions 0,
        1, 2, ... on a state with no card dealt, no turn, and empty unsplit hands in boxes
        with distinct (player, box): then fold_cards, which looks each card's box up by its
        player and box and adds the cards one by one, gives the same state as fold_deal, which
        gives box i the cards i and width + i (tests/fairness/test_verify.py)."""
        boxes = s.boxes
        n = len(boxes)
        width = n + 1 if len(run) == 2 * n + 2 else n
        if s.next_position != 0 or s.turn >= 0 or not n or len(run) != 2 * width:
            return False
        for k, e in enumerate(run):
            p = e.position
            if type(p) is not int or p != k:
                return False
        for i, b in enumerate(boxes):
            hands, first, second = b.hands, run[i], run[width + i]
            if (
                type(first) is not PlayerCardDealt
                or type(second) is not PlayerCardDealt
                or first.player_id != b.player_id
                or second.player_id != b.player_id
                or first.box != b.box
                or second.box != b.box
                or first.hand != 0
                or second.hand != 0
                or len(hands) != 1
                or hands[0][:2] != empty
                or hands[0][3:8] != unplayed
            ):
                return False
        if width > n:
            dealer = s.dealer
            if (
                type(run[n]) is not DealerCardDealt
                or type(run[width + n]) is not DealerCardDealt
                or dealer[:2] != empty
                or dealer[3:8] != unplayed
            ):
                return False
        return len({(b.player_id, b.box) for b in boxes}) == n

    def plain_bets(s: Any, run: Sequence[Any]) -> bool:
        """Whether every box and player, before and in the run of bets, is an int and a str:
        keys fold_bets sorts once as bet by bet they are kept sorted (a stable order)."""
        for b in (*s.boxes, *run):
            if type(b.box) is not int or type(b.player_id) is not str:
                return False
        return True

    def refusal(objects: Sequence[Any], states: list[Any], exc: Exception) -> str:
        """The failure for the event after the last state folded (the one refused)."""
        index = len(states) - 1
        return f"replay: the rule engine refuses version {index + 1} ({objects[index].type}): {exc}"

    def fold(objects: Sequence[Any]) -> tuple[list[Any], list[str]]:
        states: list[Any] = [None]
        keep = states.append
        count = len(objects)
        try:
            if count:  # the first event through evolve, which refuses all but RoundOpened
                keep(evolve(None, objects[0]))  # on no state
            i = 1
            while i < count:  # then evolve's own handlers, without its call and check
                event = objects[i]
                kind = type(event)
                end = i + 1
                if kind in cards:
                    while end < count and type(objects[end]) in cards:
                        end += 1
                elif kind is BetPlaced:
                    while end < count and type(objects[end]) is BetPlaced:
                        end += 1
                if end - i > 1:
                    run = list(objects[i:end])
                    prior = states[-1]
                    try:
                        if kind is BetPlaced:
                            state = fold_bets(prior, run) if plain_bets(prior, run) else None
                        elif is_first_deal(prior, run):
                            state = fold_deal(prior, run)
                        else:
                            state = fold_cards(prior, run)
                    except Exception:  # folded one by one below: the refusal names its event
                        state = None
                    if state is None:
                        for event in run:
                            keep(HANDLERS[type(event)](states[-1], event))
                    else:
                        states.extend([None] * (end - i - 1))
                        keep(state)
                else:
                    keep(HANDLERS[kind](states[-1], event))
                i = end
        except Exception as exc:  # any refusal means the events are not a legal round
            return states, [refusal(objects, states, exc)]
        return states, []

    def fold_runs(objects: Sequence[Any]) -> tuple[list[Any], list[str]]:
        """`fold` with the runs of `runs` too, each event class starting its own run."""
        if type(objects) is not list:
            objects = list(objects)
        states: list[Any] = [None]
        keep, extend = states.append, states.extend
        count = len(objects)
        try:
            if count:  # the first event through evolve, which refuses all but RoundOpened
                keep(evolve(None, objects[0]))  # on no state
            i = 1
            while i < count:  # then evolve's own handlers, without its call and check
                event = objects[i]
                kind = type(event)
                end = i + 1
                state = None
                if kind in play_start:  # the play, as one run
                    while end < count and type(objects[end]) in play:
                        end += 1
                    if end - i > 1:
                        try:
                            state = fold_play(states[-1], objects[i:end])
                        except Exception:  # folded as below: the refusal names its event
                            state = None
                    if state is not None:
                        extend(repeat(None, end - i - 1))
                        keep(state)
                        i = end
                        continue
                    end = i + 1
                try:
                    if kind is TurnStarted:
                        while end < count and type(objects[end]) is PlayerCardDealt:
                            end += 1
                        if end < count and type(objects[end]) is PlayerStood:
                            end += 1
                            state = fold_turn_stood(
                                states[-1], event, objects[i + 1 : end - 1], objects[end - 1]
                            )
                        else:
                            end = i + 1
                    elif kind is BetPlaced:
                        while end < count and type(objects[end]) is BetPlaced:
                            end += 1
                        if end < count and type(objects[end]) is BettingClosed:
                            last = end + 1
                            while last < count and type(objects[last]) in cards:
                                last += 1
                            state = fold_opening(
                                states[-1], objects[i:end], objects[end], objects[end + 1 : last]
                            )
                            if state is not None:
                                end = last
                        if state is None and end - i > 1:  # the bets alone
                            prior, run = states[-1], objects[i:end]
                            state = fold_bets(prior, run) if plain_bets(prior, run) else None
                    elif kind in cards:
                        while end < count and type(objects[end]) in cards:
                            end += 1
                        if end - i > 1:
                            prior, run = states[-1], objects[i:end]
                            first = is_first_deal(prior, run)
                            state = fold_deal(prior, run) if first else fold_cards(prior, run)
                    elif kind is BettingClosed:
                        while end < count and type(objects[end]) in cards:
                            end += 1
                        if end - i > 1:
                            prior, deal = states[-1], objects[i + 1 : end]
                            first = is_first_deal(prior, deal)  # BettingClosed leaves what it reads
                            state = fold_closed_deal(prior, event, deal) if first else None
                    elif kind is HoleCardRevealed:
                        while end < count and type(objects[end]) is DealerCardDealt:
                            end += 1
                        if end - i > 1:
                            state = fold_hole_cards(states[-1], event, objects[i + 1 : end])
                    elif (
                        kind is RoundSettled
                        and end < count
                        and type(objects[end]) is ServerSeedRevealed
                    ):
                        end += 1
                        state = fold_settled_seed(states[-1], event, objects[i + 1])
                except Exception:  # folded one by one below: the refusal names its event
                    state = None
                if state is None:
                    for k in range(i, end):
                        keep(HANDLERS[type(objects[k])](states[-1], objects[k]))
                else:
                    extend(repeat(None, end - i - 1))
                    keep(state)
                i = end
        except Exception as exc:  # any refusal means the events are not a legal round
            return states, [refusal(objects, states, exc)]
        return states, []

    return fold_runs if runs else fold


def load_folded() -> FoldedCheck | None:
    """The settlement check on decoded, folded events, or None without the engine."""
    try:
        from casino.engine.commands import VoidRound
        from casino.engine.decider import decide, settlement
        from casino.engine.events import EVENT_TYPES, RoundSettled, RoundVoided, event_to_dict
    except ImportError:
        return None
    # The engine's event classes but these two: an event of one of them is neither (its
    # class's `type` names it, and slots instances have no `type` of their own), so it is
    # passed over without reading the class's `type` through the instance.
    passed = frozenset(EVENT_TYPES.values()) - {RoundSettled, RoundVoided}

    def void(state: Any, voided: Any) -> list[Any]:
        command = VoidRound(voided.reason, voided.evidence)
        return list(decide(state, command, voided.voided_at_ms, None))[:1]

    def check(objects: Sequence[Any], states: Sequence[Any]) -> list[str]:
        failures: list[str] = []
        derived: list[Any]
        for index, event in enumerate(objects):
            if type(event) in passed:
                continue
            type_ = event.type
            if type_ == "RoundSettled":
                before = (
                    index - 1 if index and objects[index - 1].type == "CardsRevealed" else index
                )
                recorded = objects[before : index + 1]
                try:
                    derived = list(settlement(states[before], event.settled_at_ms))
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
    fold, folded, decoders = load_fold(runs=True), load_folded(), load_decoders()
    if fold is None or folded is None or decoders is None:
        return None

    def check(events: Sequence[Mapping[str, Any]], receipt: Mapping[str, Any]) -> list[str]:
        try:
            objects: list[Any] = [decoders[e["type"]](e["data"]) for e in events]
        except (KeyError, TypeError, ValueError) as exc:
            return [f"replay: an event does not decode ({type(exc).__name__}: {exc})"]
        states, refused = fold(objects)
        if refused:
            return refused
        return folded(objects, states)

    return check
