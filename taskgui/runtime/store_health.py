"""Whether the scheduler service may write: healthy, failing (and retried), or lost.

A failing store operation (a full disk, a locked file) is reported and dispatching
stops until the store works again; the service retries on a timer of its own (it
rebuilds its engine from what is committed). One failure is not retried: the
store's name no longer leading to what is open (``StoreUpkeep.verify_file``: a
database file deleted or replaced). Then what the open file holds is kept, the
schedule stops for good and says so with ``store_lost``, and nothing is written
again, since a write would go where nobody reads it, or into a log that the file now
at the path would take for its own.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from taskgui.core.clock import Clock
from taskgui.runtime.schedule_signals import ScheduleSignals
from taskgui.store.errors import DatabaseReplacedError, StoreError
from taskgui.store.protocols import StoreUpkeep

log = logging.getLogger("taskgui.runtime.service")


class StoreHealth:
    """See the module docstring.

    ``pause`` stops dispatching after a failure, ``retry`` schedules the service's
    retry, ``halt`` stops every timer and thread that could write, for good.
    """

    def __init__(
        self,
        store: StoreUpkeep,
        clock: Clock,
        signals: ScheduleSignals,
        *,
        pause: Callable[[], None],
        retry: Callable[[], None],
        halt: Callable[[], None],
    ) -> None:
        self._store = store
        self._clock = clock
        self._signals = signals
        self._pause = pause
        self._retry = retry
        self._halt = halt
        self.healthy = True
        # Set once the store's name lost what is open: the schedule has stopped.
        self.lost: DatabaseReplacedError | None = None

    def file_is_ours(self, *, companions: bool) -> bool:
        """False (and the schedule stopped) once the path lost the open file."""
        if self.lost is not None:
            return False
        try:
            self._store.verify_file(companions=companions)
        except DatabaseReplacedError as error:
            self.lose(error)
            return False
        return True

    def refuse_if_lost(self) -> None:
        """A change after the file was lost would be written where nobody reads it."""
        if self.lost is not None:  # a fresh one each time: no traceback piles up
            raise DatabaseReplacedError(str(self.lost), self.lost.path)

    def lose(self, error: DatabaseReplacedError) -> None:
        """Stop for good, and write nothing more. Runs that end from now on are not
        recorded; the next start retries them."""
        self.healthy = False
        self._halt()  # before the rescue copies what is open
        kept = self._store.save_what_is_open(self._clock.now())
        message = f"{error}; {kept}. The schedule has stopped: start taskgui again"
        self.lost = DatabaseReplacedError(message, error.path)
        log.error("%s", message)
        self._signals.error_occurred.emit(message)
        self._signals.store_lost.emit(message)

    def failed(self, error: StoreError) -> None:
        """Stop dispatching until the store works again; never raises."""
        if isinstance(error, DatabaseReplacedError) and self.lost is None:
            self.lose(error)  # SQLite noticed first (a file not in WAL mode)
            return
        log.error("store error: %s", error)
        self._signals.error_occurred.emit(str(error))
        if self.lost is not None:
            return  # nothing to retry: the file is gone
        if self.healthy:
            self.healthy = False
            self._pause()
            self._retry()
