"""The history windows a main window has open: one per task, kept current.

Each task's history opens once (asking again brings it forward), follows its task as
it changes, shows a running command's output as it prints, and reloads when a run
ends. The window feeds it the scheduler's signals; this keeps the bookkeeping.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

from taskgui.core.status import RunRecord, RunTicket, TaskSnapshot
from taskgui.core.task import TaskId
from taskgui.runtime.guard import never_raises
from taskgui.ui.history.history_view import HistoryDialog


class HistoryWindows:
    """Open ``HistoryDialog`` s by task id; see the module docstring."""

    def __init__(
        self,
        parent: QWidget,
        load_runs: Callable[[TaskId], Sequence[RunRecord]],
        now: Callable[[], datetime],
    ) -> None:
        self._parent = parent
        self._load_runs = load_runs
        self._now = now
        self.open: dict[TaskId, HistoryDialog] = {}

    def show(self, task: TaskSnapshot) -> HistoryDialog:
        """Open the task's history, or bring the open one forward (reloaded)."""
        existing = self.open.get(task.id)
        if existing is not None:
            existing.refresh()
            existing.raise_()
            existing.activateWindow()
            return existing
        task_id = task.id
        dialog = HistoryDialog(task, lambda: self._load_runs(task_id), self._parent, now=self._now)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.destroyed.connect(lambda *_: self.open.pop(task_id, None))
        self.open[task_id] = dialog
        dialog.show()
        return dialog

    def task_changed(self, snapshot: TaskSnapshot) -> None:
        history = self.open.get(snapshot.id)
        if history is not None:
            history.update_task(snapshot)

    def run_finished(self, task_id: TaskId) -> None:
        history = self.open.get(task_id)
        if history is not None:
            history.refresh()

    @never_raises("showing the output of a running command")  # called from a slot
    def run_output(self, ticket: RunTicket, output: str) -> None:
        history = self.open.get(ticket.task_id)
        if history is not None:
            history.show_live_output(ticket, output)

    def close_all(self) -> None:
        for dialog in list(self.open.values()):
            dialog.close()
