"""The guards that keep an exception from escaping into Qt: ``never_raises`` for any
slot, model method or callback, and ``service_slot``, which also reports to the person.

An exception that leaves a slot is printed by PySide as a traceback on stderr and
then forgotten: the service carries on half-way through whatever it was doing, and
nobody is told. Every slot the service connects is wrapped in ``service_slot``, which
logs the failure (the traceback at debug level, for a bug report) and reports it
through the service's ``error_occurred``, so the window shows it and the daemon logs
it, and the schedule goes on.

The widgets, models and helpers of ``ui`` and ``runtime`` use ``never_raises``: the
failure is logged with its traceback to the logger of the wrapped function's module,
and the call returns a harmless default (None, or what ``default`` says, such as 0
for ``rowCount``). This replaces the try/except blocks each slot once had.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar, overload

log = logging.getLogger("taskgui.runtime.service")

P = ParamSpec("P")
R = TypeVar("R")


@overload
def never_raises(what: Callable[P, R], /) -> Callable[P, R]: ...
@overload
def never_raises(
    what: str, /, *, default: object = None
) -> Callable[[Callable[P, R]], Callable[P, R]]: ...
def never_raises(what: str | Callable[P, R], /, *, default: object = None) -> Any:
    """Wrap a slot (or a model method, or a callback Qt calls): an exception it raises
    is logged as "``what`` failed" with the traceback, and the call returns ``default``.

    ``@never_raises`` alone names the failure after the function. The wrapper keeps
    the function's type, so give a ``default`` of that type unless it returns None or
    Any (a slot, ``data``). Only ``Exception`` is caught: KeyboardInterrupt and
    SystemExit still end the program.
    """

    def wrap(function: Callable[P, R]) -> Callable[P, object]:
        logger = logging.getLogger(function.__module__)
        name = what if isinstance(what, str) else function.__qualname__

        @functools.wraps(function)
        def guarded(*args: P.args, **kwargs: P.kwargs) -> object:
            try:
                return function(*args, **kwargs)
            except Exception:
                logger.exception("%s failed [%s]", name, function.__qualname__)
                return default

        return guarded

    return wrap if isinstance(what, str) else wrap(what)


class _Reports(Protocol):
    """What a guarded object offers: a Qt signal for errors a person should see."""

    @property
    def error_occurred(self) -> _Emitter: ...


class _Emitter(Protocol):
    def emit(self, message: str) -> object: ...


S = TypeVar("S", bound=_Reports)


def service_slot(method: Callable[Concatenate[S, P], R]) -> Callable[Concatenate[S, P], R | None]:
    """Wrap a slot: an exception is logged and reported, and the slot returns None."""

    @functools.wraps(method)
    def guarded(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R | None:
        try:
            return method(self, *args, **kwargs)
        except Exception as error:
            message = (
                f"internal error in the scheduler ({type(error).__name__}: {error}); the "
                "schedule goes on; this is a bug in taskgui, please report it with the log"
            )
            log.error("%s [%s]", message, method.__qualname__)
            log.debug("traceback of the error in %s", method.__qualname__, exc_info=True)
            self.error_occurred.emit(message)
            return None

    return guarded
