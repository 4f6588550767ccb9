"""Reading the deferred rest of the schedule after a start: ahead of its time, or all.

A cold start arms the timer from each task's id and run time alone (see
``taskgui.core.engine.deferred``). A daemon then keeps it that way: most of a large
schedule waits for hours, and a decoded task costs about a kilobyte against the 25
bytes of its id and run time. ``Hydration`` reads ahead, a chunk per event-loop turn,
every task due within ``READ_AHEAD`` (so none waits on the disk at its deadline), and looks
again when the next one comes within reach. A view wants every task (``everything``):
then it reads them all, a chunk per turn, and ``complete`` reads the rest at once.

A chunk costs a few milliseconds; one is never started when a deadline is that
close, so reading never delays a run. At each look it also gives back the tasks that
ran since and will not run again soon (``Engine.give_back_idle``): a daemon holds whole
only what is due soon, however long it runs. A task that nothing read ahead (the clock
jumped, or it was moved closer) is read when it is due, or when anything touches it.
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
READ_AHEAD = timedelta(seconds=60)  # tasks due within this are read before they are due
_CLEARANCE = timedelta(milliseconds=20)  # no chunk when a deadline is closer than this
_POSTPONE_MS = 25
_LOOK_AGAIN_MS = 60_000  # at the latest: a clock jump or a resume is noticed
_MIN_LOOK_MS = 1_000  # at the soonest, when nothing is due within reach


class Hydration(QObject):
    """Drives ``Engine.load_due_by`` (or ``hydrate``) from the event loop; events go
    to ``publish``."""

    def __init__(
        self,
        engine: Engine,
        *,
        clock: Clock,
        publish: Callable[[list[Event]], None],
        failed: Callable[[StoreError], None],
        loaded: Callable[[], None],
        read: Callable[[], None],
        ahead: timedelta = READ_AHEAD,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._ahead = ahead
        self._failed = failed  # the file could not be read: not the tasks' fault
        self._loaded = loaded  # the start's reading is done (see ``start``)
        self._read = read  # a chunk was read: the schedule's head may have moved
        self.engine = engine  # replaced when the service rebuilds its engine
        self._clock = clock
        self._publish = publish
        self._everything = False  # a view wants every task in memory
        self._streamed = False  # ... and they arrive from a worker thread (streamed_read)
        self._announced = False
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._step)

    @property
    def active(self) -> bool:
        return self._timer.isActive()

    @property
    def everything(self) -> bool:
        """Whether every task is to be read (a view asked), not only those due soon."""
        return self._everything

    def start(self) -> None:
        """Begin (or carry on). ``loaded`` follows once the tasks due soon are read
        (every task, once a view asked for them)."""
        self._announced = False
        count = self.engine.deferred_count
        if not count:
            self._announce()
        elif self._everything:
            log.info("loading %d stored tasks in the background", count)
        else:
            log.info("%d stored tasks stay unread until they near their time", count)
        self._timer.start(0)

    def read_everything(self) -> None:
        """From now on read every task, not only those due soon (a view wants them)."""
        if not self._everything:
            self._everything = True
            self._announced = False
            self._timer.start(0)

    def stream(self) -> None:
        """Every task is wanted, and they arrive from elsewhere (``streamed_read``):
        meanwhile read only those due soon, and announce once every one is in."""
        self._everything = self._streamed = True
        self._announced = False

    def stream_ended(self) -> None:
        """The stream ended (done, or failed): read here whatever it left."""
        self._streamed = False
        self._timer.start(0)

    def took(self, events: list[Event]) -> None:
        """Tasks were read elsewhere (``streamed_read``): publish what the engine made
        of them, and announce when they were the last."""
        self._publish(events)
        self._read()
        if not self.engine.deferred_count and self._everything:
            self._announce()

    def fail(self, error: StoreError) -> None:
        """Reading elsewhere met a store error: reported as this one's own."""
        self._failed(error)

    def complete(self) -> bool:
        """Load whatever is left now (a view wants every task); False if the store
        failed (reported to ``failed``), leaving the rest deferred."""
        self._everything = True
        self._timer.stop()
        # All at once, while a window waits: without the cyclic collector walking the
        # growing heap again and again (a third of the time at 100,000 tasks).
        with collector_paused():
            return self._load(None)

    def stop(self) -> None:
        self._timer.stop()

    def _step(self) -> None:
        engine = self.engine
        now = self._clock.now()
        if engine.deferred_count:
            deadline = engine.next_deadline()
            if deadline is not None and deadline - now < _CLEARANCE:
                # A deadline close ahead, or one past that the timer has yet to handle
                # (once handled, its tasks have left the time queue): let it go first.
                self._timer.start(_POSTPONE_MS)
                return
            if not self._load(CHUNK):
                return  # the service rebuilds its engine once the store works again
            if self._everything and not self._streamed:
                if engine.deferred_count:
                    self._timer.start(0)
                return
            upcoming = engine.next_cold_run()
            if upcoming is not None and upcoming - now <= self._ahead:
                self._timer.start(0)  # more within reach: the next chunk on the next turn
                return
        elif self._everything:
            self._announce()
            return
        if self._everything:
            return  # streamed in: ViewStart announces the last batch
        # The tasks that ran since the last look and will not run again soon go back
        # to id and run time (their ends are committed: each was, in its own turn).
        engine.give_back_idle(now + self._ahead)
        self._announce()
        # Look again when the next cold task comes within reach, and often enough that
        # a task given back is read ahead of its time too (its key is in the time queue).
        wait_ms = min(_LOOK_AGAIN_MS, max(self._ahead / timedelta(milliseconds=2), _MIN_LOOK_MS))
        upcoming = engine.next_cold_run()
        if upcoming is not None:
            wait_ms = min(wait_ms, (upcoming - self._ahead - now) / timedelta(milliseconds=1))
        self._timer.start(int(max(wait_ms, 0)))

    def _load(self, limit: int | None) -> bool:
        engine = self.engine
        if not engine.deferred_count:
            self._announce()
            return True
        try:
            if self._everything and not self._streamed:
                events = engine.hydrate(limit)
            else:
                events = engine.load_due_by(self._clock.now() + self._ahead, limit)
        except StoreError as error:
            self._failed(error)
            return False
        self._publish(events)
        self._read()
        if not engine.deferred_count:
            self._announce()
        return True

    def _announce(self) -> None:
        if self._announced:
            return
        self._announced = True
        cold = self.engine.deferred_count
        if cold:
            log.info(
                "the schedule is read: %d tasks in memory, %d unread until they near their time",
                len(self.engine) - cold,
                cold,
            )
        else:
            log.info("every stored task is loaded")
        self._loaded()
