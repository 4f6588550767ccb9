"""The follower's thread: a ``FollowReader`` that looks when the change feed wakes it.

A window that follows a schedule run elsewhere used to read the database on the GUI
thread every 500 ms. Over a network (a shared PostgreSQL schedule) one look is a few
round trips, and a slow or unreachable server would freeze the window; on a file the
timer woke twice a second for nothing and saw a change 250 ms late on average. So the
reads and writes happen here, on a thread of their own, woken by the store's change
feed (``FeedWatch``: LISTEN on PostgreSQL, the file watcher on SQLite) with a slow
safety poll (who leads, a node's heartbeat and a lock let go notify nobody), faster
while a request waits for its answer. What a look found crosses to the GUI thread as
one queued ``looked`` signal; a change the window asks for comes here as a job.

Signals:
    looked(object): a ``Look``.
    answered(object, object): a job and what its work returned (or the error it raised).
    failed(str): a look failed (the database is unreachable, say); once per message.
    unreachable(str): a failure of reaching the store (``StoreError.unreachable``), its
        reason alone (no password, no place), for a notice that names the place itself.
    recovered(): a look succeeded after ``failed``, its ``looked`` already sent: what
        the GUI shows is current again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import shiboken6
from PySide6.QtCore import QCoreApplication, QObject, QThread, QTimer, Signal, Slot

from taskgui.core.errors import TaskguiError
from taskgui.runtime.feed_watch import FeedWatch
from taskgui.runtime.follow_reader import FollowReader
from taskgui.store.errors import StoreError

log = logging.getLogger(__name__)

FAST_POLL_MS = 100  # while a request waits for its answer


@dataclass(frozen=True, slots=True, eq=False)
class Job:
    """Work for the follower's thread, and what the GUI thread does with its result."""

    work: Callable[[FollowReader], Any]
    done: Callable[[Any], None]


class FollowWorker(QObject):
    """Lives on its own ``QThread``; see the module docstring."""

    looked = Signal(object)
    answered = Signal(object, object)
    failed = Signal(str)
    unreachable = Signal(str)
    recovered = Signal()

    def __init__(self, reader: FollowReader, *, safety_ms: int | None = None) -> None:
        super().__init__()
        self._reader = reader
        self._safety_ms = safety_ms
        self._watch: FeedWatch | None = None
        self._soon: QTimer | None = None
        self._last_error = ""

    @Slot()
    def begin(self) -> None:
        """On the thread: start watching (the notifier must be made on its thread)."""
        self._watch = FeedWatch(
            self._reader.repository, self._look, safety_ms=self._safety_ms, parent=self
        )
        self._soon = QTimer(self)
        self._soon.setSingleShot(True)
        self._soon.setInterval(FAST_POLL_MS)
        self._soon.timeout.connect(self._look)
        self._watch.start()
        self._look()  # what was committed between the first read and the watch

    @Slot(object)
    def run_job(self, job: Job) -> None:
        try:
            result: Any = job.work(self._reader)
        except (TaskguiError, StoreError) as error:
            result = error
        except Exception as error:  # a slot must never raise into Qt
            log.exception("a change to the followed schedule failed")
            result = error
        self.answered.emit(job, result)
        self._reader.changed_here()
        self._look()  # what the change did, at once

    @Slot()
    def end(self) -> None:
        """On the thread: stop watching, hand this object back to the GUI thread (to be
        deleted there, never by the cyclic collector on another thread) and quit."""
        if self._watch is not None:
            self._watch.stop()
        if self._soon is not None:
            self._soon.stop()
        app = QCoreApplication.instance()
        if app is not None:
            self.moveToThread(app.thread())
        thread = QThread.currentThread()
        thread.quit()

    def _look(self) -> None:
        try:
            look = self._reader.look()
        except StoreError as error:
            message = str(error)
            if message != self._last_error:  # once, not at every look
                self._last_error = message
                log.error("following the schedule: %s", message)
                self.failed.emit(message)
                if error.unreachable:  # not a refused grant or a bad row: those are no
                    self.unreachable.emit(error.reason)  # lost connection (a review)
            return
        except Exception:
            log.exception("following the schedule failed")
            return
        failing, self._last_error = self._last_error, ""
        self.looked.emit(look)
        if failing:  # after the look: the window is current again when it hears this
            log.info("following the schedule again")
            self.recovered.emit()
        if look.lost and self._watch is not None:
            self._watch.stop()
        elif look.pending and self._soon is not None and not self._soon.isActive():
            self._soon.start()


class FollowThread:
    """A ``FollowWorker`` on a thread of its own, started and stopped from the GUI."""

    def __init__(self, worker: FollowWorker) -> None:
        self.worker = worker
        self.thread = QThread()
        self.thread.setObjectName("taskgui follower")
        worker.moveToThread(self.thread)
        self.thread.started.connect(worker.begin)

    def start(self) -> None:
        self.thread.start()

    def stop(self, wait_ms: int) -> bool:
        """End the worker on its thread and wait for it; True when it has stopped."""
        if not self.thread.isRunning():
            return True
        QTimer.singleShot(0, self.worker, self.worker.end)
        stopped = self.thread.wait(wait_ms)
        if stopped:
            shiboken6.delete(self.worker)  # on this (its own again) thread, now
        return bool(stopped)
