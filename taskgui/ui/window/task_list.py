"""The window's list of tasks: the model, the filter proxy and the table view, shown as
one page of a stack with what to say instead of an empty table.

The window builds one ``TaskList`` and places it; everything about rows, the selection
and which page shows lives here, so another view of the same tasks (a timeline, say)
can sit beside it and share ``model`` and the selection helpers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from PySide6.QtCore import QItemSelectionModel
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QStackedWidget, QWidget

from taskgui.core.clock import Clock
from taskgui.core.status import RunRecord, TaskSnapshot
from taskgui.core.task import TaskId
from taskgui.ui.table.columns import Column
from taskgui.ui.table.formatting import LastRun
from taskgui.ui.table.task_filter import TaskFilterProxy
from taskgui.ui.table.task_model import Role, TaskTableModel
from taskgui.ui.window.empty_states import EmptyState, NoMatches
from taskgui.ui.window.task_table_view import task_table


def _last_run(record: RunRecord) -> LastRun | None:
    if record.outcome is None:
        return None
    return LastRun(
        outcome=record.outcome,
        exit_code=record.exit_code,
        finished_at=record.finished_at,
        error=record.error,
    )


class TaskList(QStackedWidget):
    """Three pages: ``empty`` (no tasks yet), ``no_matches`` (the filters hide every
    task) and ``table``. ``show_fitting_page`` picks one; the window calls it whenever
    rows or filters change.

    ``reveal_hidden`` is called when a task to select is hidden by the filters: the
    window clears its search and state filter.
    """

    def __init__(
        self,
        clock: Clock,
        new_action: QAction,
        reveal_hidden: Callable[[], None],
        parent: QWidget,
    ) -> None:
        super().__init__(parent)
        self._reveal_hidden = reveal_hidden
        self.model = TaskTableModel(clock, self)
        self.proxy = TaskFilterProxy(self)
        self.proxy.setSourceModel(self.model)
        self.table = task_table(self.proxy, self.model.columns, self)
        self.table.setColumnHidden(Column.NODE, True)  # a shared schedule's: shown there
        self.empty = EmptyState(new_action, self)
        self.no_matches = NoMatches(self)
        self.addWidget(self.empty)
        self.addWidget(self.no_matches)
        self.addWidget(self.table)
        # (the first deleted row, the deleted ids) until the deleted rows are gone
        self._place_after_delete: tuple[int, set[TaskId]] | None = None
        self._last_runs: dict[TaskId, LastRun] = {}
        self.proxy.rowsRemoved.connect(self.keep_place)

    def load(self, snapshots: Iterable[TaskSnapshot], runs: Mapping[TaskId, RunRecord]) -> None:
        """Every row afresh: ``snapshots`` with the latest run of each (``runs``)."""
        last_runs: dict[TaskId, LastRun] = {}
        for task_id, record in runs.items():
            if (last := _last_run(record)) is not None:
                last_runs[task_id] = last
        self.model.reset_tasks(snapshots, last_runs)
        self._last_runs = last_runs  # for the tasks that follow (add_loaded)

    def add_loaded(self, snapshots: Iterable[TaskSnapshot]) -> None:
        """Tasks read after the first snapshot (``tasks_loaded``): each becomes a row
        on a coming turn, with its latest result from ``load``'s runs."""
        last_runs = self._last_runs
        for snapshot in snapshots:
            self.model.on_task_added(snapshot, last_runs.pop(snapshot.spec.id, None))

    def show_fitting_page(self, search_text: str) -> None:
        """The table, or why it is empty: no tasks at all, or none the filters show."""
        if not self.model.rowCount():
            self.setCurrentWidget(self.empty)
        elif not self.proxy.rowCount():
            self.no_matches.describe(self.proxy.state_filter, search_text)
            self.setCurrentWidget(self.no_matches)
        else:
            self.setCurrentWidget(self.table)

    # ------------------------------------------------------------- selection

    def selected_tasks(self) -> list[TaskSnapshot]:
        rows = self.table.selectionModel().selectedRows()
        tasks = []
        for index in sorted(rows, key=lambda i: i.row()):
            snapshot = self.proxy.data(index, Role.SNAPSHOT)
            if isinstance(snapshot, TaskSnapshot):
                tasks.append(snapshot)
        return tasks

    def select_task(self, task_id: TaskId) -> bool:
        """Select and reveal a task (clearing a filter that hides it)."""
        self.model.flush_pending()  # a task added a moment ago may not be a row yet
        row = self.model.row_of(task_id)
        if row is None:
            return False
        source = self.model.index(row, 0)
        index = self.proxy.mapFromSource(source)
        if not index.isValid():
            self._reveal_hidden()
            index = self.proxy.mapFromSource(source)
        self.table.selectRow(index.row())
        self.table.scrollTo(index)
        return True

    def select_ids(self, task_ids: Sequence[TaskId]) -> None:
        """Add the rows of ``task_ids`` that are shown to the selection."""
        selection = self.table.selectionModel()
        flags = QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
        for task_id in task_ids:
            row = self.proxy.row_of(task_id)
            if row is not None:
                selection.select(self.proxy.index(row, 0), flags)

    def tasks_where(self, allowed: Callable[[TaskSnapshot], bool]) -> list[TaskSnapshot]:
        """Every task (not only the shown ones) that ``allowed`` accepts."""
        self.model.flush_pending()
        snapshots = (self.model.snapshot_of(task_id) for task_id in self.model.task_ids())
        return [s for s in snapshots if s is not None and allowed(s)]

    def remember_place(self, tasks: Iterable[TaskSnapshot]) -> None:
        """Before ``tasks`` are deleted: once their rows are gone, select the row that
        takes their place, so the keyboard keeps its place (Delete, Delete, ...)."""
        ids = {task.id for task in tasks}
        rows = [row for task_id in ids if (row := self.proxy.row_of(task_id)) is not None]
        self._place_after_delete = (min(rows, default=0), ids)

    def keep_place(self, *_: object) -> None:
        """Once the deleted rows are gone, select the row that took their place."""
        pending = self._place_after_delete
        if pending is None:
            return
        row, deleted = pending
        if any(self.proxy.row_of(task_id) is not None for task_id in deleted):
            return  # not all gone yet (a schedule run elsewhere deletes a moment later)
        self._place_after_delete = None
        count = self.proxy.rowCount()
        if count and not self.table.selectionModel().hasSelection():
            index = self.proxy.index(min(row, count - 1), 0)
            self.table.setCurrentIndex(index)  # selects the row, and moves the keyboard
