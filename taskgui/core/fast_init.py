"""A faster ``__init__`` for the frozen, slotted dataclasses built on every operation.

A frozen dataclass's generated ``__init__`` sets each field with
``object.__setattr__(self, "name", value)``: a lookup of the name in the type and a
generic set, for every field. ``TaskSpec`` has two dozen fields and one is built for
every add, so that was a third of an add's cost. Setting each slot through its own
descriptor (``Cls.name.__set__``) is what ``object.__setattr__`` ends in anyway, and
bypasses the frozen ``__setattr__`` just as the generated code does, at about 60% of
the cost. ``fast_init`` swaps the generated ``__init__`` for one built the same way
from the class's own fields (so it cannot fall behind a new field): the same
signature, defaults and ``__post_init__`` call, and the same errors for a missing or
unknown argument. ``TaskSpec.with_id`` copies a spec the same way.
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any, TypeVar

T = TypeVar("T")


def fast_init(cls: type[T]) -> type[T]:
    """Give a frozen ``slots=True`` dataclass an ``__init__`` that sets slots directly.

    Only plain fields are supported (no ``default_factory``, ``init=False`` or
    ``InitVar``): TypeError at import for anything else, rather than a silent
    difference from the generated ``__init__``.
    """
    params = dataclasses.fields(cls)  # type: ignore[arg-type]
    every = getattr(cls, "__dataclass_fields__", {})
    if len(every) != len(params) or "__slots__" not in cls.__dict__:
        raise TypeError(f"fast_init needs a slotted dataclass without InitVar: {cls.__name__}")
    namespace: dict[str, Any] = {}
    signature: list[str] = []
    body: list[str] = []
    star = False
    for field in params:
        if not field.init or field.default_factory is not dataclasses.MISSING:
            raise TypeError(f"fast_init: {cls.__name__}.{field.name} is not a plain field")
        if field.kw_only and not star:
            signature.append("*")
            star = True
        if field.default is dataclasses.MISSING:
            signature.append(field.name)
        else:
            namespace[f"_default_{field.name}"] = field.default
            signature.append(f"{field.name}=_default_{field.name}")
        namespace[f"_set_{field.name}"] = cls.__dict__[field.name].__set__
        body.append(f"    _set_{field.name}(self, {field.name})\n")
    if hasattr(cls, "__post_init__"):
        body.append("    self.__post_init__()\n")
    if not body:
        body.append("    pass\n")
    source = f"def __init__(self, {', '.join(signature)}):\n" + "".join(body)
    exec(source, namespace)  # generated from the class's own fields
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__doc__ = cls.__init__.__doc__
    if _shape(init) != _shape(cls.__init__):
        raise TypeError(f"fast_init would change {cls.__name__}'s signature")
    setattr(cls, "__init__", init)  # noqa: B010 - mypy refuses assigning a method
    return cls


def _shape(function: Any) -> list[tuple[str, Any, Any]]:
    """A signature without its annotations: each parameter's name, kind and default."""
    return [
        (param.name, param.kind, param.default)
        for param in inspect.signature(function).parameters.values()
    ]
