"""One guard for the scheduler service's slots: no exception escapes into Qt.

An exception that leaves a slot is printed by PySide as a traceback on stderr and
then forgotten: the service carries on half-way through whatever it was doing, and
nobody is told. Every slot the service connects is wrapped in ``service_slot``, which
logs the failure (the traceback at debug level, for a bug report) and reports it
through the service's ``error_occurred``, so the window shows it and the daemon logs
it, and the schedule goes on.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Concatenate, ParamSpec, Protocol, TypeVar

log = logging.getLogger("taskgui.runtime.service")

P = ParamSpec("P")
R = TypeVar("R")


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
