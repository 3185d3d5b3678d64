"""A cheaper __init__ for frozen slots dataclasses on the hot path.

A frozen dataclass sets every field through object.__setattr__, which costs about twice
writing the slot through its descriptor. `fast_init` swaps in an __init__ with the same
signature (names, order, defaults) that writes the slots directly; the class stays a
frozen dataclass (assignment after construction still raises FrozenInstanceError).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Final, ParamSpec, TypeVar

T = TypeVar("T")


def fast_init(cls: type[T]) -> type[T]:
    """Class decorator, applied after @dataclass(frozen=True, slots=True)."""
    namespace: dict[str, Any] = {}
    params: list[str] = []
    body: list[str] = []
    for i, field in enumerate(dataclasses.fields(cls)):  # type: ignore[arg-type]
        if field.default_factory is not dataclasses.MISSING or not field.init:
            raise TypeError(f"fast_init does not support {cls.__name__}.{field.name}")
        if field.default is dataclasses.MISSING:
            params.append(field.name)
        else:
            namespace[f"_default{i}"] = field.default
            params.append(f"{field.name}=_default{i}")
        namespace[f"_set{i}"] = cls.__dict__[field.name].__set__
        body.append(f"    _set{i}(self, {field.name})")
    source = f"def __init__(self, {', '.join(params)}):\n" + ("\n".join(body) or "    pass")
    exec(source, namespace)  # the same technique dataclasses uses to build __init__
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    setattr(cls, "__init__", init)  # noqa: B010 - mypy forbids assigning to a method
    return cls


P = ParamSpec("P")

# Entries an `interned` constructor keeps before it starts over (per class).
INTERN_LIMIT: Final = 4096


def interned(cls: Callable[P, T], limit: int = INTERN_LIMIT) -> Callable[P, T]:
    """A constructor of the frozen dataclass `cls` that hands back the instance it built
    before for the same field values (the fields, positional, as one dict key).

    Event values repeat: a table deals the same (position, card, seat) and starts the same
    turns round after round, and the simulator does so thousands of times a second. Building
    a frozen slots instance costs several thousand instructions (a Python __init__ reached
    through type_call, one slot wrapper call a field); a hit costs a tuple and a dict lookup.
    The instances are immutable, so sharing one is the same as building an equal one. The
    memo keeps at most `limit` instances and is emptied when full (no per-call bookkeeping).
    Only for classes whose fields are plain hashable values (str, int, bool, None).
    """
    names = [field.name for field in dataclasses.fields(cls)]  # type: ignore[arg-type]
    args = ", ".join(names)
    namespace: dict[str, Any] = {"cls": cls, "memo": {}, "limit": limit}
    source = (
        f"def make({args}):\n"
        f"    key = ({args},)\n"
        "    made = memo.get(key)\n"
        "    if made is None:\n"
        "        if len(memo) >= limit:\n"
        "            memo.clear()\n"
        f"        made = memo[key] = cls({args})\n"
        "    return made\n"
    )
    exec(source, namespace)
    make: Callable[P, T] = namespace["make"]
    make.__qualname__ = make.__name__ = f"interned_{cls.__name__}"
    return make
