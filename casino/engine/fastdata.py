"""A cheaper __init__ for frozen slots dataclasses on the hot path.

A frozen dataclass sets every field through object.__setattr__, which costs about twice
writing the slot through its descriptor. `fast_init` swaps in an __init__ with the same
signature (names, order, defaults) that writes the slots directly; the class stays a
frozen dataclass (assignment after construction still raises FrozenInstanceError).
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

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
