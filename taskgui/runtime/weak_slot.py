"""A slot that reaches its object through a weak reference.

A lambda connected to a child's signal (a QProcess, a D-Bus call watcher) that holds
its parent makes a cycle through the Qt connection, which Python's collector cannot see
whole. Once the collector had torn such a parent's wrapper down, a child finishing
later called into it and crashed the process (SIGBUS in ``~QObject``). Connected
through ``weak_slot``, nothing but its owners keeps the object alive, and a signal that
arrives after it is gone does nothing.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Concatenate, ParamSpec, TypeVar

Owner = TypeVar("Owner")
Params = ParamSpec("Params")


def weak_slot(
    method: Callable[Concatenate[Owner, Params], object], owner: Owner
) -> Callable[Params, None]:
    """``method`` called on ``owner`` while it lives; nothing once it is gone."""
    reference = weakref.ref(owner)

    def call(*args: Params.args, **kwargs: Params.kwargs) -> None:
        alive = reference()
        if alive is not None:
            method(alive, *args, **kwargs)

    return call
