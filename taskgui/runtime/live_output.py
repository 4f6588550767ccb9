"""What runs in progress printed so far: for views now, for the database soon.

The worker pool reports a running command's tail at most twice a second
(``CommandRunner``'s ``on_output``). ``LiveOutput`` keeps the latest per run, lays it
over the open run of a task's history (so a history opened mid-run shows it at once),
and writes it to the store at most every ``OUTPUT_SAVE_MS``: a window that follows
this process from another one, ``taskgui history`` and a crash all keep what the
command printed so far, while a chatty command does not rewrite its tail on disk
twice a second.

QtCore only, on the scheduler's thread. Signals: none.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import replace

from PySide6.QtCore import QObject, QTimer

from taskgui.core.status import RunId, RunRecord, RunTicket
from taskgui.core.task import TaskId
from taskgui.runtime.guard import never_raises
from taskgui.store.errors import StoreError
from taskgui.store.protocols import TaskRepository

log = logging.getLogger(__name__)

OUTPUT_SAVE_MS = 5_000


class LiveOutput(QObject):
    """The output so far of each run in progress; see the module docstring."""

    def __init__(
        self,
        repository: TaskRepository,
        *,
        save_ms: int = OUTPUT_SAVE_MS,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._repository = repository
        self._live: dict[RunId, str] = {}
        self._unsaved: dict[RunId, str] = {}
        self._saver = QTimer(self)
        self._saver.setSingleShot(True)
        self._saver.setInterval(save_ms)
        self._saver.timeout.connect(self._on_saver_timeout)
        self._saving = True

    def printed(self, run_id: RunId, text: str) -> None:
        """A run's output so far; saved with the next write."""
        self._live[run_id] = text
        if not self._saving:
            return
        self._unsaved[run_id] = text
        if not self._saver.isActive():
            self._saver.start()

    def stop_saving(self) -> None:
        """Write nothing more (the database went away); views still get the output."""
        self._saving = False
        self._saver.stop()
        self._unsaved.clear()

    def ended(self, run_id: RunId) -> None:
        """The run is over: its result carries the whole output from now on."""
        self._live.pop(run_id, None)
        self._unsaved.pop(run_id, None)

    def lay_over(
        self, task_id: TaskId, runs: Sequence[RunRecord], tickets: Mapping[RunId, RunTicket]
    ) -> list[RunRecord]:
        """``runs`` of a task with the open ones showing their output so far.

        A history row is the open run of its task that started at the ticket's
        dispatch time (the store writes exactly that moment as its start).
        """
        live = {
            ticket.dispatched_at: text
            for run_id, text in self._live.items()
            if (ticket := tickets.get(run_id)) is not None and ticket.task_id == task_id
        }
        if not live:
            return list(runs)
        return [
            replace(run, output=live[run.started_at])
            if run.outcome is None and run.started_at in live
            else run
            for run in runs
        ]

    def save(self) -> None:
        """Write what the store has not seen yet (the timer's work; public for tests)."""
        unsaved, self._unsaved = self._unsaved, {}
        for run_id, text in unsaved.items():
            try:
                self._repository.record_run_output(run_id, text)
            except StoreError as error:  # only a view's extra; the result is what counts
                log.warning("could not keep the output so far of run %s: %s", run_id, error)
                return

    @never_raises("saving the output of running commands")
    def _on_saver_timeout(self) -> None:
        self.save()
