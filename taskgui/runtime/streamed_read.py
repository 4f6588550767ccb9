"""A window's start: every stored task read on a worker thread, handed over in batches.

The scheduler starts from each task's id and run time alone (``core.engine.deferred``),
in a fifth of a second at 100,000 tasks; a window then wants every task, and reading
and decoding them all is most of a second more. ``StreamedRead`` runs the store's
``task_stream`` on a plain worker thread, and the schedule's thread (the GUI thread)
takes each batch as it arrives: the first rows are on screen once the first small
batch is in, and the GUI thread never waits on the disk.

What crosses the threads is plain data only (frozen snapshots and ids) through a
queue, and the worker says a batch is in by writing a byte to a pipe, which a
``QSocketNotifier`` (created, used and deleted on the GUI thread) watches: the worker
calls nothing of Qt. The cyclic collector is held off while the worker runs
(``system.collector.hold``, taken and released on the GUI thread): a collection the
worker's allocations set off would otherwise free the GUI thread's cyclic garbage,
Qt objects among it, on the worker thread, which crashes the process.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
from collections.abc import Callable, Iterator
from contextlib import suppress

from PySide6.QtCore import QObject, QSocketNotifier

from taskgui.runtime.guard import never_raises
from taskgui.store.protocols import TaskBatch
from taskgui.system import collector

log = logging.getLogger(__name__)

_JOIN_S = 10.0  # a batch takes milliseconds; the worker checks for a stop between them
_PUT_WAIT_S = 0.1  # how often a worker waiting for room looks whether to stop

Item = tuple[TaskBatch | None, str | None]  # a batch, or None and the error (or None)


class _Worker:
    """The worker thread's side: plain Python, no Qt. The thread refers to this only,
    never to the ``StreamedRead``: the last reference to a Qt wrapper dropped on the
    worker thread would free it there."""

    def __init__(self, read: Callable[[], Iterator[TaskBatch]]) -> None:
        self._read = read
        # Two batches ahead at most: the worker reads while the GUI thread takes the
        # last one, never far ahead of it, so it does not hold the interpreter's lock
        # while the window is being built and painted (both threads run Python).
        self.batches: queue.Queue[Item] = queue.Queue(2)
        self._stop = threading.Event()
        self.reading, self._writing = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self._thread = threading.Thread(target=self._run, name="taskgui-read", daemon=True)
        self._held = False

    def start(self) -> None:
        collector.hold()  # on the GUI thread, as is its release in ``end``
        self._held = True
        self._thread.start()

    def end(self, *_: object) -> None:
        """On the GUI thread: stop the worker, wait for it, close the pipe, and give
        the collector back (only once the worker is gone). Idempotent."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(_JOIN_S)
        if self._thread.is_alive():  # stuck in a read: the collector stays held
            log.warning("the thread reading the stored tasks did not stop")
            return
        if self.reading >= 0:
            os.close(self.reading)
            os.close(self._writing)
            self.reading = self._writing = -1
        if self._held:
            self._held = False
            collector.release()

    def _run(self) -> None:
        # No Qt and no gc calls here: plain data into the queue, a byte into the pipe.
        error: str | None = None
        try:
            for batch in self._read():
                if not self._hand_over((batch, None)):
                    return
        except Exception as failure:  # reported to the GUI thread
            error = f"{type(failure).__name__}: {failure}"
        self._hand_over((None, error))

    def _hand_over(self, item: Item) -> bool:
        """Queue ``item`` once there is room, and ring; False if told to stop first."""
        while not self._stop.is_set():
            try:
                self.batches.put(item, timeout=_PUT_WAIT_S)
            except queue.Full:
                continue
            # One byte a batch; the pipe holds far more than the queue's two.
            with suppress(OSError):
                os.write(self._writing, b"\0")
            return True
        return False


class StreamedRead(QObject):
    """Runs ``read`` on a worker thread; ``arrived(batch)`` for each batch and then
    ``ended(error or None)`` are called on this object's (the GUI) thread."""

    def __init__(
        self,
        read: Callable[[], Iterator[TaskBatch]],
        *,
        arrived: Callable[[TaskBatch], None],
        ended: Callable[[str | None], None],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._arrived = arrived
        self._ended = ended
        self._worker = _Worker(read)
        # Destroyed with its parent before it ended: the worker stops all the same.
        self.destroyed.connect(self._worker.end)
        self._notifier = QSocketNotifier(self._worker.reading, QSocketNotifier.Type.Read, self)
        self._notifier.activated.connect(self._on_notifier_activated)
        self._done = False

    def start(self) -> None:
        self._worker.start()

    def stop(self) -> None:
        """Stop reading (what was read but not taken is dropped); waits for the worker."""
        self._finish()

    @never_raises("reading the stored tasks")
    def _on_notifier_activated(self, *_: object) -> None:
        # One batch a turn (one byte was written for each): paints and input get in
        # between, and the first rows are on screen after the first batch.
        if self._done:
            return
        with suppress(BlockingIOError):
            os.read(self._worker.reading, 1)
        try:
            batch, error = self._worker.batches.get_nowait()
        except queue.Empty:
            return
        if batch is not None:
            self._arrived(batch)
            return
        self._finish()
        self._ended(error)

    def _finish(self) -> None:
        if self._done:
            return
        self._done = True
        self._notifier.setEnabled(False)
        self._worker.end()
