"""Loading the deferred rest of the schedule in the background after a start.

A cold start arms the timer from each task's id and run time alone (see
``taskgui.core.engine.deferred``). ``Hydration`` then reads the rest a chunk per event-loop
turn, so the scheduler is live at once and every stored row has still been read (and
any unreadable one reported) within about a second. A chunk costs a few milliseconds;
one is never started when a deadline is that close, so hydrating never delays a run.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta

from PySide6.QtCore import QObject, QTimer

from taskgui.core.clock import Clock
from taskgui.core.engine.engine import Engine
from taskgui.core.events import Event
from taskgui.store.errors import StoreError
from taskgui.system.collector import collector_paused

log = logging.getLogger(__name__)

CHUNK = 1_000  # tasks per turn: about 5 ms of reading and decoding
_CLEARANCE = timedelta(milliseconds=20)  # no chunk when a deadline is closer than this
_POSTPONE_MS = 25


class Hydration(QObject):
    """Drives ``Engine.hydrate`` from the event loop; events go to ``publish``."""

    def __init__(
        self,
        engine: Engine,
        *,
        clock: Clock,
        publish: Callable[[list[Event]], None],
        failed: Callable[[StoreError], None],
        loaded: Callable[[], None],
        read: Callable[[], None],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._failed = failed  # the file could not be read: not the tasks' fault
        self._loaded = loaded  # every stored task is in memory now
        self._read = read  # a chunk was read: the schedule's head may have moved
        self.engine = engine  # replaced when the service rebuilds its engine
        self._clock = clock
        self._publish = publish
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._step)

    @property
    def active(self) -> bool:
        return self._timer.isActive()

    def start(self) -> None:
        """Begin (or carry on); does nothing once every task is loaded."""
        if self.engine.deferred_count:
            log.info("loading %d stored tasks in the background", self.engine.deferred_count)
            self._timer.start(0)
        else:
            self._loaded()

    def complete(self) -> bool:
        """Load whatever is left now (a view wants every task); False if the store
        failed (reported to ``failed``), leaving the rest deferred."""
        self._timer.stop()
        # All at once, while a window waits: without the cyclic collector walking the
        # growing heap again and again (a third of the time at 100,000 tasks).
        with collector_paused():
            return self._load(None)

    def stop(self) -> None:
        self._timer.stop()

    def _step(self) -> None:
        deadline = self.engine.next_deadline()
        if deadline is not None and deadline - self._clock.now() < _CLEARANCE:
            # A deadline close ahead, or one past that the timer has yet to handle
            # (once handled, its tasks have left the time heap): let it go first.
            self._timer.start(_POSTPONE_MS)
            return
        if not self._load(CHUNK):
            return  # the service rebuilds its engine once the store works again
        if self.engine.deferred_count:
            self._timer.start(0)

    def _load(self, limit: int | None) -> bool:
        if not self.engine.deferred_count:
            return True
        try:
            events = self.engine.hydrate(limit)
        except StoreError as error:
            self._failed(error)
            return False
        self._publish(events)
        self._read()
        if not self.engine.deferred_count:
            log.info("every stored task is loaded")
            self._loaded()
        return True
