"""A faster ``__init__`` (and copy) for the frozen, slotted dataclasses built on every
operation.

A frozen dataclass's generated ``__init__`` sets each field with
``object.__setattr__(self, "name", value)``, and setting a slot through its
descriptor (``Cls.name.__set__``) costs about as much: either is a call that packs its
arguments, looks the name up and checks the frozen rule, for every field. ``TaskSpec``
has two dozen fields and one is built for every add and copied for every task of a
bulk import, so that was most of their cost.

So each such class gets a *twin*: a plain class with the very same ``__slots__``
(the same memory layout) and no ``__setattr__`` of its own. ``__init__`` makes the new
instance the twin's for the moment, stores each field with a plain attribute store
(which the interpreter specialises for slots), and gives it its class back before
``__post_init__`` runs; ``copier`` builds a copy the same way. CPython allows the
``__class__`` change only between layout-compatible classes, and ``fast_init`` checks
that at import. Outside these two functions an instance is never the twin's, so the
frozen rule holds for everyone else. (A class of fewer than ``TWIN_FROM`` fields sets
them through their descriptors instead: for one field, the two class changes cost
more than they save.) The generated ``__init__`` has the dataclass's
own signature, defaults and ``__post_init__`` call (so the same errors for a missing
or unknown argument), and is built from the class's fields, so it cannot fall behind
a new one.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

_TWIN = "__fast_init_twin__"
# From this many fields on, ``__init__`` stores them through the twin.
TWIN_FROM = 4


def fast_init(cls: type[T]) -> type[T]:
    """Give a frozen ``slots=True`` dataclass an ``__init__`` that stores its fields
    through its twin (see the module docstring).

    Only plain fields of a class straight from ``object`` are supported (no
    ``default_factory``, ``init=False`` or ``InitVar``): TypeError at import for
    anything else, rather than a silent difference from the generated ``__init__``.
    """
    params = dataclasses.fields(cls)  # type: ignore[arg-type]
    every = getattr(cls, "__dataclass_fields__", {})
    if len(every) != len(params) or "__slots__" not in cls.__dict__ or cls.__bases__ != (object,):
        raise TypeError(
            f"fast_init needs a slotted dataclass of plain fields, based on object: {cls.__name__}"
        )
    twin = _twin(cls)
    namespace: dict[str, Any] = {"_cls": cls, "_twin": twin, "_become": object.__setattr__}
    # Two class changes cost about what three descriptor calls do: a class of few
    # fields sets each through its descriptor instead.
    through_twin = len(params) >= TWIN_FROM
    signature: list[str] = []
    body = ["    _become(self, '__class__', _twin)\n"] if through_twin else []
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
        if through_twin:
            body.append(f"    self.{field.name} = {field.name}\n")
        else:
            namespace[f"_set_{field.name}"] = cls.__dict__[field.name].__set__
            body.append(f"    _set_{field.name}(self, {field.name})\n")
    if through_twin:
        body.append("    self.__class__ = _cls\n")
    if hasattr(cls, "__post_init__"):
        body.append("    self.__post_init__()\n")
    source = f"def __init__(self, {', '.join(signature)}):\n" + "".join(body)
    exec(source, namespace)  # generated from the class's own fields
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__doc__ = cls.__init__.__doc__
    if _shape(init) != _shape(cls.__init__):
        raise TypeError(f"fast_init would change {cls.__name__}'s signature")
    setattr(cls, "__init__", init)  # noqa: B010 - mypy refuses assigning a method
    return cls


def copier(cls: type[T], replaced: str) -> Callable[[T, Any], T]:
    """``copy(obj, value)``: a copy of ``obj`` with the field ``replaced`` set to
    ``value`` and every other field as it is, without ``__post_init__`` (the caller
    vouches for the new value). For a class ``fast_init`` prepared."""
    twin = cls.__dict__.get(_TWIN)
    names = [field.name for field in dataclasses.fields(cls)]  # type: ignore[arg-type]
    if twin is None or replaced not in names:
        raise TypeError(f"copier needs a fast_init class and one of its fields: {cls.__name__}")
    body = "".join(
        f"    copy.{name} = {'value' if name == replaced else f'obj.{name}'}\n" for name in names
    )
    source = (
        "def copy(obj, value):\n    copy = _new(_twin)\n"
        f"{body}    copy.__class__ = _cls\n    return copy\n"
    )
    namespace: dict[str, Any] = {"_new": object.__new__, "_twin": twin, "_cls": cls}
    exec(source, namespace)  # generated from the class's own fields
    copy: Callable[[T, Any], T] = namespace["copy"]
    return copy


def _twin(cls: type[Any]) -> type[Any]:
    """A plain class with ``cls``'s slots, checked to share its layout."""
    twin = type(f"_{cls.__name__}Fields", (), {"__slots__": cls.__slots__})
    probe: Any = object.__new__(twin)
    try:
        probe.__class__ = cls
    except TypeError as error:
        raise TypeError(f"fast_init: {cls.__name__}'s layout has no plain twin") from error
    setattr(cls, _TWIN, twin)
    return twin


def _shape(function: Any) -> list[tuple[str, Any, Any]]:
    """A signature without its annotations: each parameter's name, kind and default."""
    return [
        (param.name, param.kind, param.default)
        for param in inspect.signature(function).parameters.values()
    ]
