"""A view's start over a schedule this process runs: the tasks at hand now, the rest
streamed in (see ``streamed_read``).

The service's first snapshot holds the tasks the engine has read so far (those running,
running after others, due soon); every other one is read on a worker thread and each
batch, once the engine has taken it, goes to the view as ``tasks_loaded``. A store that
cannot stream (PostgreSQL, memory) has its tasks read by ``Hydration`` instead, a chunk
per event-loop turn, announced the same way.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from PySide6.QtCore import QObject, Signal

from taskgui.core.engine.engine import Engine
from taskgui.core.status import TaskSnapshot
from taskgui.runtime.hydration import Hydration
from taskgui.runtime.streamed_read import StreamedRead
from taskgui.store.errors import StoreError
from taskgui.store.protocols import TaskBatch, TaskStreams

log = logging.getLogger(__name__)


class ViewStart(QObject):
    """Serves ``first_snapshot`` and streams the rest (see the module docstring).

    Signals:
        loaded(object): a list of TaskSnapshot read after the first snapshot, as the
            engine has them once it took them (the service's ``tasks_loaded``).
    """

    loaded = Signal(object)

    def __init__(
        self,
        store: TaskStreams,
        engine: Callable[[], Engine],
        hydration: Hydration,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._store = store
        self._engine = engine  # looked up each time: the service may rebuild it
        self._hydration = hydration  # it publishes, reports and announces for us
        self._stream: StreamedRead | None = None

    def first_snapshot(self) -> list[TaskSnapshot]:
        """The tasks read so far; every other one follows in ``loaded`` batches."""
        engine = self._engine()
        if engine.deferred_count and self._stream is None and not self._hydration.everything:
            read = self._store.task_stream()
            if read is None:
                self._hydration.read_everything()
            else:
                self._hydration.stream()
                self._stream = StreamedRead(
                    read, arrived=self._on_arrived, ended=self._on_ended, parent=self
                )
                self._stream.start()
        return list(engine.snapshots(load_deferred=False))

    def stop(self) -> None:
        if self._stream is not None:
            self._stream.stop()
            self._stream = None

    def _on_arrived(self, batch: TaskBatch) -> None:
        snapshots, unreadable = batch
        try:
            events, known = self._engine().adopt(snapshots, unreadable)
        except StoreError as error:  # reading a bad row again here: not its fault
            self._hydration.fail(error)
            return
        if known:
            self.loaded.emit(known)
        self._hydration.took(events)

    def _on_ended(self, error: str | None) -> None:
        self._stream = None
        if error is not None:
            log.warning("reading the stored tasks for the window failed (%s); read here", error)
        self._hydration.stream_ended()
