"""The task table: one row per task, fed by the scheduler service's signals.

The model holds task ids in row order and a cache of each task's latest snapshot keyed
by id (``RowEntry``), so every ``data()`` call is a few dict and list lookups whatever
the number of tasks. Service events become precise ``rowsInserted`` / ``dataChanged`` /
``rowsRemoved``; the only full reset is ``reset_tasks`` (a reload). What each column
shows, sorts on and says in its tooltip is one ``TaskColumn`` (``columns.py``).

Three decisions keep a 100,000-task table responsive:

* **Adds and changes are coalesced** (``update_batches.UpdateBatches``): the slots only
  update the cache (and the per-state counts); rows are inserted and ``dataChanged``
  emitted on the next turns of the event loop, a turn's worth at a time.
  ``flush_pending()`` does it all at once.
* **Sort keys and schedule texts are cached** per task. The proxy
  (``task_filter.TaskFilterProxy``) sorts in Python on keys it reads straight from
  here (``sort_keys``), once per row, not through ``data()`` per comparison; a cached
  key makes clicking back to a column cheap, and describing a cron expression takes
  ~0.3 ms.
* **The id -> row index is repaired lazily** (``row_index.RowIndex``): removing a row
  marks the later rows' index stale instead of rewriting it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from enum import IntEnum
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtGui import QIcon

from taskgui.core.clock import Clock
from taskgui.core.states import RunOutcome, TaskState
from taskgui.core.status import RunResult, RunTicket, TaskSnapshot
from taskgui.core.task import TaskId
from taskgui.runtime.guard import never_raises
from taskgui.ui.icons import state_icon
from taskgui.ui.plain_text import plain_tooltip
from taskgui.ui.table.columns import STATE_ORDER, Column, ScheduleTexts, state_color, task_columns
from taskgui.ui.table.formatting import Freeze, LastRun
from taskgui.ui.table.links import TaskLinks
from taskgui.ui.table.row_entry import UNSET, RowEntry, found_states
from taskgui.ui.table.row_index import RowIndex
from taskgui.ui.table.update_batches import DEFAULT_MAX_BATCH, UpdateBatches

__all__ = ["STATE_ORDER", "Column", "LastRun", "Role", "TaskTableModel"]


class Role(IntEnum):
    """Data roles beyond Qt's: what the proxy sorts on and what views read back."""

    SORT_KEY = int(Qt.ItemDataRole.UserRole.value)
    TASK_ID = SORT_KEY + 1
    STATE = SORT_KEY + 2
    SNAPSHOT = SORT_KEY + 3


_DISPLAY = int(Qt.ItemDataRole.DisplayRole.value)
_DECORATION = int(Qt.ItemDataRole.DecorationRole.value)
_TOOLTIP = int(Qt.ItemDataRole.ToolTipRole.value)
_ALIGNMENT = int(Qt.ItemDataRole.TextAlignmentRole.value)
_FOREGROUND = int(Qt.ItemDataRole.ForegroundRole.value)
_SORT_KEY = int(Role.SORT_KEY)
_TASK_ID = int(Role.TASK_ID)
_STATE = int(Role.STATE)
_SNAPSHOT = int(Role.SNAPSHOT)
_COLUMNS = len(Column)
_LAST_COLUMN = _COLUMNS - 1
_ROOT = QModelIndex()

ModelIndex = QModelIndex | QPersistentModelIndex


class TaskTableModel(QAbstractTableModel):
    """Every task as a row; see the module docstring for how it stays fast.

    Rows are in arrival order (the proxy sorts, on ``sort_keys``). ``counts()`` is
    kept per state as tasks change, for the filter buttons; it covers the rows in the
    model, not adds still queued for insertion. It is current at once;
    ``counts_changed`` is coalesced like the row signals, so a burst of 10,000 changes
    emits it a handful of times rather than 10,000.

    Signals:
        counts_changed(): the number of rows in some state changed (once per
            event-loop turn at most, and on reset).
    """

    counts_changed = Signal()

    def __init__(
        self,
        clock: Clock,
        parent: QObject | None = None,
        *,
        max_batch: int = DEFAULT_MAX_BATCH,
    ) -> None:
        super().__init__(parent)
        self._clock = clock
        self._batches = UpdateBatches(
            clock,
            announce_changes=self._announce_changes,
            insert_rows=self._insert_rows,
            after_turn=self._announce_counts,
            max_batch=max_batch,
            parent=self,
        )
        self._rows = RowIndex()
        self._ids = self._rows.ids  # the same list, for the hot paths
        self._entries: dict[TaskId, RowEntry] = {}
        self.freeze = Freeze()  # set while the schedule cannot be read (see Freeze)
        self.columns = task_columns(ScheduleTexts(), TaskLinks(lambda: self._entries), self.freeze)
        self._next_seq = 0  # RowEntry.seq of the next row
        self._counts_moved = False  # counts_changed owed at the next turn
        self._counts: dict[TaskState, int] = dict.fromkeys(TaskState, 0)
        self._icons: dict[TaskState, QIcon] = {}

    # ------------------------------------------------------------ Qt model API

    def rowCount(self, parent: ModelIndex = _ROOT) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(self._ids)

    def columnCount(self, parent: ModelIndex = _ROOT) -> int:  # noqa: N802
        return 0 if parent.isValid() else _COLUMNS

    @never_raises("task table: data(index, role)")
    def data(self, index: ModelIndex, role: int = _DISPLAY) -> Any:
        row = index.row()
        column = index.column()
        # An invalid index has row and column -1; no isValid() call needed.
        if row < 0 or column < 0 or row >= len(self._ids) or column >= _COLUMNS:
            return None
        return self._value(self._entries[self._ids[row]], column, role)

    @never_raises("task table: data of a task")  # called from the proxy's data()
    def data_of(self, task_id: TaskId, column: int, role: int = _DISPLAY) -> Any:
        """``data()`` of a task's cell by id: the proxy's path, with no row lookup."""
        entry = self._entries.get(task_id)
        if entry is None or not 0 <= column < _COLUMNS:
            return None
        return self._value(entry, column, role)

    def _value(self, entry: RowEntry, column: int, role: int) -> Any:
        if role == _DISPLAY:
            return self.columns[column].text(entry, self._clock.now())
        if role == _FOREGROUND:
            return state_color(entry.snapshot.status.state)
        if role == _ALIGNMENT:
            return self.columns[column].alignment
        if role == _DECORATION:
            if self.columns[column].decorated:
                return self._icon(entry.snapshot.status.state)
            return None
        if role == _TOOLTIP:
            return plain_tooltip(self.columns[column].tooltip(entry)) or None
        if role == _SORT_KEY:
            return self._sort_key(entry, column)
        if role == _TASK_ID:
            return entry.snapshot.spec.id
        if role == _STATE:
            return entry.snapshot.status.state
        if role == _SNAPSHOT:
            return entry.snapshot
        return None

    @never_raises("task table: headerData")
    def headerData(  # noqa: N802
        self,
        section: int,
        orientation: Qt.Orientation,
        role: int = _DISPLAY,
    ) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == _DISPLAY:
            return self.columns[section].title if 0 <= section < _COLUMNS else None
        return super().headerData(section, orientation, role)

    # ------------------------------------------------------------------ reads

    def snapshot_at(self, row: int) -> TaskSnapshot | None:
        """The snapshot in source ``row``, or None outside the table."""
        if 0 <= row < len(self._ids):
            return self._entries[self._ids[row]].snapshot
        return None

    def snapshot_of(self, task_id: TaskId) -> TaskSnapshot | None:
        """The latest snapshot of a task, including one whose row is still queued."""
        entry = self._entries.get(task_id)
        return entry.snapshot if entry is not None else None

    def last_run_of(self, task_id: TaskId) -> LastRun | None:
        entry = self._entries.get(task_id)
        return entry.effective_last_run() if entry is not None else None

    def search_text_at(self, row: int) -> str:
        """Casefolded name and command line of source ``row``, for text search."""
        if not 0 <= row < len(self._ids):
            return ""
        return self.search_text_of(self._ids[row])

    def search_text_of(self, task_id: TaskId) -> str:
        """Casefolded name and command line of a task, for text search ("" if unknown)."""
        entry = self._entries.get(task_id)
        return "" if entry is None else entry.search_text()

    def found_states(
        self, task_ids: Iterable[TaskId], needle: str
    ) -> list[tuple[TaskId, TaskState]]:
        """(id, state) of each of ``task_ids`` whose search text holds ``needle``.

        One pass over the cache: a search over 100,000 tasks asks this once per
        keystroke, so it does not go through ``search_text_of`` per task.
        """
        return found_states(self._entries, task_ids, needle)

    def id_at(self, row: int) -> TaskId | None:
        """The task in source ``row``, or None outside the table."""
        return self._rows.id_at(row)

    def sort_key(self, task_id: TaskId, column: int) -> Any:
        """What ``Role.SORT_KEY`` answers for a task's cell (cached).

        Column -1 ("unsorted") gives the row's insertion number, which orders rows as
        the model does. Keys of one column are all of one type and never NaN, so they
        compare totally.
        """
        return self._sort_key(self._entries[task_id], column)

    def sort_keys(self, task_ids: Iterable[TaskId], column: int) -> list[Any]:
        """``sort_key`` of many tasks at once: what the proxy sorts a column on.

        The loop is ``_sort_key`` inlined: at 100,000 rows a method call per row is
        a sizeable part of a header click.
        """
        entries = self._entries
        if column < 0:
            return [entries[task_id].seq for task_id in task_ids]
        compute = self.columns[column].sort_key
        unset = UNSET
        keys_out: list[Any] = []
        append = keys_out.append
        for task_id in task_ids:
            entry = entries[task_id]
            keys = entry.keys
            if keys is None:
                keys = entry.keys = [unset] * _COLUMNS
            key = keys[column]
            if key is unset:
                key = keys[column] = compute(entry)
            append(key)
        return keys_out

    def row_of(self, task_id: TaskId) -> int | None:
        """The source row of a task, or None (unknown, or its insert is queued)."""
        return self._rows.row_of(task_id)

    def task_ids(self) -> Sequence[TaskId]:
        """The ids of the rows, in row order (a copy)."""
        return tuple(self._ids)

    def counts(self) -> Mapping[TaskState, int]:
        """Rows per state, every state present (a copy of 8 numbers)."""
        return dict(self._counts)

    @property
    def queued_updates(self) -> int:
        """Adds and changes received but not yet announced to views."""
        return self._batches.queued

    # ---------------------------------------------------------------- updates

    def reset_tasks(
        self,
        snapshots: Iterable[TaskSnapshot],
        last_runs: Mapping[TaskId, LastRun] | None = None,
    ) -> None:
        """Replace every row (a reload). The one place the model resets."""
        last_runs = last_runs or {}
        entries: dict[TaskId, RowEntry] = {}
        for snapshot in snapshots:
            entries[snapshot.spec.id] = RowEntry(snapshot, last_runs.get(snapshot.spec.id))
        ids = list(entries)
        counts = dict.fromkeys(TaskState, 0)
        for seq, entry in enumerate(entries.values()):
            counts[entry.snapshot.status.state] += 1
            entry.seq = seq
        self._batches.clear()
        self.beginResetModel()
        self._rows.reset(ids)
        self._ids = self._rows.ids
        self._entries = entries
        self._next_seq = len(ids)
        self._counts = counts
        self._counts_moved = False
        self.endResetModel()
        self.counts_changed.emit()

    @never_raises("task table: adding a task")
    def on_task_added(self, snapshot: TaskSnapshot, last_run: LastRun | None = None) -> None:
        """A new task: cached now, inserted as a row on a coming event-loop turn."""
        task_id = snapshot.spec.id
        if task_id in self._entries:
            self.on_task_changed(snapshot)
            return
        self._entries[task_id] = RowEntry(snapshot, last_run)
        self._batches.add(task_id)

    @never_raises("task table: changing a task")
    def on_task_changed(self, snapshot: TaskSnapshot) -> None:
        """A task changed: its whole row is refreshed (an unknown task is added)."""
        task_id = snapshot.spec.id
        entry = self._entries.get(task_id)
        if entry is None:
            self.on_task_added(snapshot)
            return
        old_state = entry.snapshot.status.state
        entry.update(snapshot)
        if self._batches.is_queued_add(task_id):
            return  # counted and announced when it is inserted
        new_state = snapshot.status.state
        if new_state is not old_state:
            self._counts[old_state] -= 1
            self._counts[new_state] += 1
            self._counts_moved = True
        self._batches.change(task_id)

    @never_raises("task table: removing a task")
    def on_task_removed(self, task_id: TaskId) -> None:
        """A task was deleted: its row goes now; later rows move up one."""
        entry = self._entries.get(task_id)
        if entry is None:
            return
        if self._batches.discard_add(task_id):  # never became a row
            del self._entries[task_id]
            return
        row = self.row_of(task_id)
        if row is None:
            return
        self._batches.discard_change(task_id)
        self.beginRemoveRows(_ROOT, row, row)
        self._rows.remove(task_id, row)
        del self._entries[task_id]
        self._counts[entry.snapshot.status.state] -= 1
        self.endRemoveRows()
        self._counts_moved = True
        self._batches.changed_counts()

    @never_raises("task table: recording a finished run")
    def on_run_finished(self, ticket: RunTicket, outcome: RunOutcome, result: RunResult) -> None:
        """Record how a task's run ended, for the "Last result" column."""
        entry = self._entries.get(ticket.task_id)
        if entry is None:
            return
        entry.set_last_run(
            LastRun(
                outcome=outcome,
                exit_code=result.exit_code,
                finished_at=self._clock.now(),
                error=result.error,
            ),
            Column.LAST_RESULT,
        )
        if not self._batches.is_queued_add(ticket.task_id):
            self._batches.change(ticket.task_id)

    @never_raises("task table: refreshing countdowns")
    def refresh_countdowns(self, first_row: int, last_row: int, *, ages: bool = False) -> None:
        """Announce new "Next run" texts for source rows ``first_row..last_row`` now.

        The signal names ``DisplayRole`` only: nothing but the text moves with time, so
        the proxy forwards it without re-checking filters or sort places. ``ages`` also
        refreshes "Last result" ("5m ago"), which goes stale slowly.
        """
        first = max(first_row, 0)
        last = min(last_row, len(self._ids) - 1)
        if first > last:
            return
        roles = [_DISPLAY]
        self.dataChanged.emit(
            self.index(first, Column.NEXT_RUN), self.index(last, Column.NEXT_RUN), roles
        )
        if ages:
            self.dataChanged.emit(
                self.index(first, Column.LAST_RESULT),
                self.index(last, Column.LAST_RESULT),
                roles,
            )

    def flush_pending(self) -> None:
        """Announce every queued change and insert every queued add, now."""
        self._batches.flush_all()

    # ------------------------------------------------- what the batches hand back

    def _announce_counts(self) -> None:
        if self._counts_moved:
            self._counts_moved = False
            self.counts_changed.emit()

    def _announce_changes(self, batch: list[TaskId]) -> None:
        rows = sorted(row for row in map(self.row_of, batch) if row is not None)
        start = 0
        for i, row in enumerate(rows):
            if i + 1 == len(rows) or rows[i + 1] != row + 1:
                self.dataChanged.emit(self.index(rows[start], 0), self.index(row, _LAST_COLUMN))
                start = i + 1

    def _insert_rows(self, batch: list[TaskId]) -> None:
        if not batch:
            return
        first = len(self._ids)
        self.beginInsertRows(_ROOT, first, first + len(batch) - 1)
        self._rows.append(batch)
        counts = self._counts
        entries = self._entries
        seq = self._next_seq
        for offset, task_id in enumerate(batch):
            entry = entries[task_id]
            entry.seq = seq + offset
            counts[entry.snapshot.status.state] += 1
        self._next_seq = seq + len(batch)
        self.endInsertRows()
        self._counts_moved = True

    # -------------------------------------------------------------- display

    def _sort_key(self, entry: RowEntry, column: int) -> Any:
        if column < 0:
            return entry.seq
        keys = entry.keys
        if keys is None:
            keys = entry.keys = [UNSET] * _COLUMNS
        key = keys[column]
        if key is UNSET:
            key = keys[column] = self.columns[column].sort_key(entry)
        return key

    def _icon(self, state: TaskState) -> QIcon:
        icon = self._icons.get(state)
        if icon is None:
            icon = self._icons[state] = state_icon(state)
        return icon
