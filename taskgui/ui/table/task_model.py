"""The task table: one row per task, fed by the scheduler service's signals.

The model holds task ids in row order and a cache of each task's latest snapshot keyed
by id, so every ``data()`` call is a few dict and list lookups whatever the number of
tasks. Service events become precise ``rowsInserted`` / ``dataChanged`` /
``rowsRemoved``; the only full reset is ``reset_tasks`` (a reload).

Three decisions keep a 100,000-task table responsive:

* **Adds and changes are coalesced.** The service publishes a bulk import, or a wake
  that finds thousands of tasks due, as a synchronous burst of signals, and every row
  event costs the proxy and the view some work (placing the row, relayout), so
  handling each on the spot would freeze the window for seconds. The slots only
  update the cache (and the per-state counts); rows are inserted and ``dataChanged``
  emitted on the next turns of the event loop, changes first, as many per turn as
  keep the turn near 25 ms (measured with the clock's monotonic time), so paints and
  input get in between. ``flush_pending()`` does it all at once.
* **Sort keys and schedule texts are cached** per task. The proxy
  (``task_filter.TaskFilterProxy``) sorts in Python on keys it reads straight from
  here (``sort_keys``), once per row, not through ``data()`` per comparison; a cached
  key makes clicking back to a column cheap, and describing a cron expression takes
  ~0.3 ms.
* **The id -> row index is repaired lazily.** Removing row r shifts every later row;
  rather than rewrite their entries, the index remembers that rows from r on are
  stale and re-walks them only as far as a lookup needs.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from enum import IntEnum
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QColor, QIcon

from taskgui.core.clock import Clock
from taskgui.core.states import RunOutcome, TaskState
from taskgui.core.status import RunResult, RunTicket, TaskSnapshot
from taskgui.core.task import TaskId
from taskgui.ui.icons import state_icon
from taskgui.ui.plain_text import plain_tooltip
from taskgui.ui.table.formatting import (
    EMPTY,
    LastRun,
    attempts_text,
    command_tooltip,
    last_result_text,
    last_result_tooltip,
    next_run_text,
    next_run_tooltip,
    schedule_text,
    state_text,
    waiting_text,
)

__all__ = ["Column", "LastRun", "Role", "TaskTableModel"]

log = logging.getLogger(__name__)

DEFAULT_MAX_BATCH = 2_000  # rows per event-loop turn, at most
INITIAL_BATCH = 64
MIN_BATCH = 8
# A turn of the event loop while queued rows drain should take about TURN_TARGET_S.
# What the rows cost *after* a flush (the view's relayout of its header, the repaint)
# is outside the flush, so the flush gets what the rest of the last turn left over.
TURN_TARGET_S = 0.025
FIRST_BUDGET_S = 0.010
MIN_BUDGET_S = 0.003


class Column(IntEnum):
    """The table's columns, in display order."""

    NAME = 0
    STATE = 1
    PRIORITY = 2
    NEXT_RUN = 3
    SCHEDULE = 4
    LAST_RESULT = 5
    ATTEMPTS = 6


class Role(IntEnum):
    """Data roles beyond Qt's: what the proxy sorts on and what views read back."""

    SORT_KEY = int(Qt.ItemDataRole.UserRole.value)
    TASK_ID = SORT_KEY + 1
    STATE = SORT_KEY + 2
    SNAPSHOT = SORT_KEY + 3


COLUMN_TITLES = {
    Column.NAME: "Name",
    Column.STATE: "State",
    Column.PRIORITY: "Priority",
    Column.NEXT_RUN: "Next run",
    Column.SCHEDULE: "Schedule",
    Column.LAST_RESULT: "Last result",
    Column.ATTEMPTS: "Attempts",
}

# Sorting by state groups what needs attention first.
STATE_ORDER = {
    state: rank
    for rank, state in enumerate(
        (
            TaskState.RUNNING,
            TaskState.RETRYING,
            TaskState.PENDING,
            TaskState.PAUSED,
            TaskState.EXHAUSTED,
            TaskState.MISSED,
            TaskState.CANCELLED,
            TaskState.SUCCEEDED,
        )
    )
}

# Mid grey reads as "dim" on light and dark palettes alike; red marks failures.
_DIM = QColor(128, 128, 128)
_ALERT = QColor(198, 40, 40)

_DISPLAY = int(Qt.ItemDataRole.DisplayRole.value)
_DECORATION = int(Qt.ItemDataRole.DecorationRole.value)
_TOOLTIP = int(Qt.ItemDataRole.ToolTipRole.value)
_ALIGNMENT = int(Qt.ItemDataRole.TextAlignmentRole.value)
_FOREGROUND = int(Qt.ItemDataRole.ForegroundRole.value)
_SORT_KEY = int(Role.SORT_KEY)
_TASK_ID = int(Role.TASK_ID)
_STATE = int(Role.STATE)
_SNAPSHOT = int(Role.SNAPSHOT)
_RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
_COLUMNS = len(Column)
_LAST_COLUMN = _COLUMNS - 1
_ROOT = QModelIndex()
_INF = math.inf
_UNSET = object()
MAX_CACHED_SCHEDULES = 4_096

ModelIndex = QModelIndex | QPersistentModelIndex


class _Entry:
    """What the model knows of one task, with what is derived from it cached.

    ``keys`` holds the sort key of each column, computed on first use, so sorting by a
    column a second time reads them back. Every cached field is cleared when the
    snapshot or the last run changes. ``seq`` numbers rows in the order they were
    inserted, which is always their source row order (rows are only ever appended or
    removed): the proxy's key for "unsorted".
    """

    __slots__ = ("haystack", "keys", "last_run", "schedule", "seq", "snapshot")

    def __init__(self, snapshot: TaskSnapshot, last_run: LastRun | None) -> None:
        self.snapshot = snapshot
        self.last_run = last_run
        self.seq = -1  # set when the task becomes a row
        self.keys: list[Any] | None = None  # per column; allocated on first use
        self.schedule: str | None = None
        self.haystack: str | None = None  # casefolded name and command, built on demand

    def update(self, snapshot: TaskSnapshot) -> None:
        if snapshot.spec is not self.snapshot.spec:
            self.schedule = None
            self.haystack = None
        self.snapshot = snapshot
        self.keys = None

    def set_last_run(self, last_run: LastRun) -> None:
        self.last_run = last_run
        if self.keys is not None:
            self.keys[Column.LAST_RESULT] = _UNSET

    def effective_last_run(self) -> LastRun | None:
        """The recorded last run, or what the engine's status says of it."""
        if self.last_run is not None:
            return self.last_run
        status = self.snapshot.status
        if status.last_outcome is None:
            return None
        return LastRun(outcome=status.last_outcome, finished_at=status.last_run_at)


def _next_run_key(entry: _Entry) -> float:
    at = entry.snapshot.status.next_run_at
    return at.timestamp() if at is not None else _INF


def _last_result_key(entry: _Entry) -> float:
    last = entry.effective_last_run()
    if last is None or last.finished_at is None:
        return -_INF
    return last.finished_at.timestamp()


_STATE_COUNT = len(STATE_ORDER)

# The sort key of each column but "Schedule" (which needs the model's text cache),
# indexed by column: a sort computes 100,000 of them, so no chain of comparisons.
_KEY_OF_COLUMN: tuple[Callable[[_Entry], Any] | None, ...] = (
    lambda e: e.snapshot.spec.name.casefold(),  # NAME
    lambda e: STATE_ORDER.get(e.snapshot.status.state, _STATE_COUNT),  # STATE
    lambda e: e.snapshot.spec.priority,  # PRIORITY
    _next_run_key,  # NEXT_RUN
    None,  # SCHEDULE
    _last_result_key,  # LAST_RESULT
    lambda e: e.snapshot.status.attempt,  # ATTEMPTS
)
assert len(_KEY_OF_COLUMN) == len(Column) and _KEY_OF_COLUMN[Column.SCHEDULE] is None


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
        if max_batch < 1:
            raise ValueError("max_batch must be at least 1")
        self._clock = clock
        self._max_batch = max_batch
        self._batch = min(max_batch, INITIAL_BATCH)
        self._flushed_at: float | None = None  # monotonic end of the last flush turn
        self._ids: list[TaskId] = []
        self._entries: dict[TaskId, _Entry] = {}
        self._next_seq = 0  # _Entry.seq of the next row
        # id -> row, correct for every row below _valid_below (see _reindex_to).
        self._row_of: dict[TaskId, int] = {}
        self._valid_below = 0
        self._pending: dict[TaskId, None] = {}  # added, not yet rows (ordered set)
        self._dirty: dict[TaskId, None] = {}  # rows changed, dataChanged not yet emitted
        self._counts_moved = False  # counts_changed owed at the next flush
        self._counts: dict[TaskState, int] = dict.fromkeys(TaskState, 0)
        self._icons: dict[TaskState, QIcon] = {}
        self._schedules: dict[object, str] = {}  # recurrence -> text, shared by tasks
        self._flush_timer = QTimer(self)
        self._flush_timer.setSingleShot(True)
        self._flush_timer.setInterval(0)
        self._flush_timer.timeout.connect(self._on_flush_timer_timeout)
        self._cell_text: dict[int, Callable[[_Entry, datetime], str]] = {
            Column.NAME: lambda e, _now: e.snapshot.spec.name,
            Column.STATE: lambda e, _now: state_text(e.snapshot.status.state),
            Column.PRIORITY: lambda e, _now: str(e.snapshot.spec.priority),
            Column.NEXT_RUN: lambda e, now: next_run_text(e.snapshot, now),
            Column.SCHEDULE: lambda e, _now: self._schedule(e),
            Column.LAST_RESULT: lambda e, now: last_result_text(e.effective_last_run(), now),
            Column.ATTEMPTS: lambda e, _now: attempts_text(e.snapshot),
        }

    # ------------------------------------------------------------ Qt model API

    def rowCount(self, parent: ModelIndex = _ROOT) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(self._ids)

    def columnCount(self, parent: ModelIndex = _ROOT) -> int:  # noqa: N802
        return 0 if parent.isValid() else _COLUMNS

    def data(self, index: ModelIndex, role: int = _DISPLAY) -> Any:
        try:
            row = index.row()
            column = index.column()
            # An invalid index has row and column -1; no isValid() call needed.
            if row < 0 or column < 0 or row >= len(self._ids) or column >= _COLUMNS:
                return None
            return self._value(self._entries[self._ids[row]], column, role)
        except Exception:  # a model method must never raise into Qt
            log.exception("task table: data(%s, %s) failed", index, role)
        return None

    def data_of(self, task_id: TaskId, column: int, role: int = _DISPLAY) -> Any:
        """``data()`` of a task's cell by id: the proxy's path, with no row lookup."""
        try:
            entry = self._entries.get(task_id)
            if entry is None or not 0 <= column < _COLUMNS:
                return None
            return self._value(entry, column, role)
        except Exception:  # called from the proxy's data(): never raise into Qt
            log.exception("task table: data of task %s (%s, %s) failed", task_id, column, role)
        return None

    def _value(self, entry: _Entry, column: int, role: int) -> Any:
        if role == _DISPLAY:
            return self._cell_text[column](entry, self._clock.now())
        if role == _FOREGROUND:
            return _foreground(entry.snapshot.status.state)
        if role == _ALIGNMENT:
            return _RIGHT if column in (Column.PRIORITY, Column.ATTEMPTS) else None
        if role == _DECORATION:
            return self._icon(entry.snapshot.status.state) if column == Column.STATE else None
        if role == _TOOLTIP:
            return plain_tooltip(self._tooltip(entry, column)) or None
        if role == _SORT_KEY:
            return self._sort_key(entry, column)
        if role == _TASK_ID:
            return entry.snapshot.spec.id
        if role == _STATE:
            return entry.snapshot.status.state
        if role == _SNAPSHOT:
            return entry.snapshot
        return None

    def headerData(  # noqa: N802
        self,
        section: int,
        orientation: Qt.Orientation,
        role: int = _DISPLAY,
    ) -> Any:
        try:
            if orientation == Qt.Orientation.Horizontal and role == _DISPLAY:
                return COLUMN_TITLES[Column(section)] if 0 <= section < _COLUMNS else None
            return super().headerData(section, orientation, role)
        except Exception:
            log.exception("task table: headerData(%s) failed", section)
            return None

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
        if entry is None:
            return ""
        if entry.haystack is None:
            spec = entry.snapshot.spec
            entry.haystack = f"{spec.name}\0{spec.command.line}".casefold()
        return entry.haystack

    def found_states(
        self, task_ids: Iterable[TaskId], needle: str
    ) -> list[tuple[TaskId, TaskState]]:
        """(id, state) of each of ``task_ids`` whose search text holds ``needle``.

        One pass over the cache: a search over 100,000 tasks asks this once per
        keystroke, so it does not go through ``search_text_of`` per task.
        """
        entries = self._entries
        found: list[tuple[TaskId, TaskState]] = []
        for task_id in task_ids:
            entry = entries.get(task_id)
            if entry is None:
                continue
            haystack = entry.haystack
            if haystack is None:
                spec = entry.snapshot.spec
                haystack = entry.haystack = f"{spec.name}\0{spec.command.line}".casefold()
            if needle in haystack:
                found.append((task_id, entry.snapshot.status.state))
        return found

    def id_at(self, row: int) -> TaskId | None:
        """The task in source ``row``, or None outside the table."""
        return self._ids[row] if 0 <= row < len(self._ids) else None

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
        compute = _KEY_OF_COLUMN[column]
        if compute is None:
            sort_key = self._sort_key
            return [sort_key(entries[task_id], column) for task_id in task_ids]
        unset = _UNSET
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
        row = self._row_of.get(task_id)
        if row is None or row < self._valid_below:
            return row
        return self._reindex_to(task_id)

    def task_ids(self) -> Sequence[TaskId]:
        """The ids of the rows, in row order (a copy)."""
        return tuple(self._ids)

    def counts(self) -> Mapping[TaskState, int]:
        """Rows per state, every state present (a copy of 8 numbers)."""
        return dict(self._counts)

    @property
    def queued_updates(self) -> int:
        """Adds and changes received but not yet announced to views."""
        return len(self._pending) + len(self._dirty)

    # ---------------------------------------------------------------- updates

    def reset_tasks(
        self,
        snapshots: Iterable[TaskSnapshot],
        last_runs: Mapping[TaskId, LastRun] | None = None,
    ) -> None:
        """Replace every row (a reload). The one place the model resets."""
        last_runs = last_runs or {}
        entries: dict[TaskId, _Entry] = {}
        for snapshot in snapshots:
            entries[snapshot.spec.id] = _Entry(snapshot, last_runs.get(snapshot.spec.id))
        ids = list(entries)
        counts = dict.fromkeys(TaskState, 0)
        for seq, entry in enumerate(entries.values()):
            counts[entry.snapshot.status.state] += 1
            entry.seq = seq
        self._flush_timer.stop()
        self._flushed_at = None
        self.beginResetModel()
        self._ids = ids
        self._entries = entries
        self._row_of = {task_id: row for row, task_id in enumerate(ids)}
        self._valid_below = len(ids)
        self._next_seq = len(ids)
        self._pending = {}
        self._dirty = {}
        self._counts = counts
        self._counts_moved = False
        self.endResetModel()
        self.counts_changed.emit()

    def on_task_added(self, snapshot: TaskSnapshot) -> None:
        """A new task: cached now, inserted as a row on a coming event-loop turn."""
        try:
            task_id = snapshot.spec.id
            if task_id in self._entries:
                self.on_task_changed(snapshot)
                return
            self._entries[task_id] = _Entry(snapshot, None)
            self._pending[task_id] = None
            self._schedule_flush()
        except Exception:
            log.exception("task table: adding a task failed")

    def on_task_changed(self, snapshot: TaskSnapshot) -> None:
        """A task changed: its whole row is refreshed (an unknown task is added)."""
        try:
            task_id = snapshot.spec.id
            entry = self._entries.get(task_id)
            if entry is None:
                self.on_task_added(snapshot)
                return
            old_state = entry.snapshot.status.state
            entry.update(snapshot)
            if task_id in self._pending:
                return  # counted and announced when it is inserted
            self._dirty[task_id] = None
            new_state = snapshot.status.state
            if new_state is not old_state:
                self._counts[old_state] -= 1
                self._counts[new_state] += 1
                self._counts_moved = True
            self._schedule_flush()
        except Exception:
            log.exception("task table: changing a task failed")

    def on_task_removed(self, task_id: TaskId) -> None:
        """A task was deleted: its row goes now; later rows move up one."""
        try:
            entry = self._entries.get(task_id)
            if entry is None:
                return
            if task_id in self._pending:  # never became a row
                del self._pending[task_id]
                del self._entries[task_id]
                return
            row = self.row_of(task_id)
            if row is None:
                return
            self._dirty.pop(task_id, None)
            self.beginRemoveRows(_ROOT, row, row)
            del self._ids[row]
            del self._entries[task_id]
            del self._row_of[task_id]
            self._valid_below = min(self._valid_below, row)
            self._counts[entry.snapshot.status.state] -= 1
            self.endRemoveRows()
            self._counts_moved = True
            self._schedule_flush()
        except Exception:
            log.exception("task table: removing a task failed")

    def on_run_finished(self, ticket: RunTicket, outcome: RunOutcome, result: RunResult) -> None:
        """Record how a task's run ended, for the "Last result" column."""
        try:
            entry = self._entries.get(ticket.task_id)
            if entry is None:
                return
            entry.set_last_run(
                LastRun(
                    outcome=outcome,
                    exit_code=result.exit_code,
                    finished_at=self._clock.now(),
                    error=result.error,
                )
            )
            if ticket.task_id not in self._pending:
                self._dirty[ticket.task_id] = None
                self._schedule_flush()
        except Exception:
            log.exception("task table: recording a finished run failed")

    def refresh_countdowns(self, first_row: int, last_row: int, *, ages: bool = False) -> None:
        """Announce new "Next run" texts for source rows ``first_row..last_row`` now.

        The signal names ``DisplayRole`` only: nothing but the text moves with time, so
        the proxy forwards it without re-checking filters or sort places. ``ages`` also
        refreshes "Last result" ("5m ago"), which goes stale slowly.
        """
        try:
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
        except Exception:
            log.exception("task table: refreshing countdowns failed")

    def flush_pending(self) -> None:
        """Announce every queued change and insert every queued add, now."""
        self._flush_timer.stop()
        self._flushed_at = None
        while self._pending or self._dirty:
            self._flush(len(self._pending) + len(self._dirty))
        self._announce_counts()

    # ---------------------------------------------------------- coalescing

    def _schedule_flush(self) -> None:
        if not self._flush_timer.isActive():
            self._flush_timer.start()

    def _on_flush_timer_timeout(self) -> None:
        try:
            started = self._clock.monotonic()
            budget = FIRST_BUDGET_S
            if self._flushed_at is not None:
                budget = max(MIN_BUDGET_S, TURN_TARGET_S - (started - self._flushed_at))
            done = self._flush(self._batch)
            ended = self._clock.monotonic()
            if done >= MIN_BATCH and ended > started:
                fits = done * budget / (ended - started)
                self._batch = int(max(MIN_BATCH, min(self._max_batch, (self._batch + fits) / 2)))
            self._flushed_at = ended if self._pending or self._dirty else None
            self._announce_counts()
        except Exception:
            log.exception("task table: announcing queued updates failed")
        if self._pending or self._dirty:
            self._flush_timer.start()

    def _announce_counts(self) -> None:
        if self._counts_moved:
            self._counts_moved = False
            self.counts_changed.emit()

    def _flush(self, limit: int) -> int:
        """Announce up to ``limit`` queued rows, changes first; returns how many.

        Changes go first, so rows already shown are current before new ones join them.
        """
        done = self._emit_changes(limit) if self._dirty else 0
        if done < limit and not self._dirty and self._pending:
            done += self._insert_pending(limit - done)
        return done

    def _emit_changes(self, limit: int) -> int:
        batch = _take(self._dirty, limit)
        rows = sorted(row for row in map(self.row_of, batch) if row is not None)
        start = 0
        for i, row in enumerate(rows):
            if i + 1 == len(rows) or rows[i + 1] != row + 1:
                self.dataChanged.emit(self.index(rows[start], 0), self.index(row, _LAST_COLUMN))
                start = i + 1
        return len(batch)

    def _insert_pending(self, limit: int) -> int:
        batch = _take(self._pending, limit)
        if not batch:
            return 0
        ids = self._ids
        first = len(ids)
        was_valid = self._valid_below == first
        self.beginInsertRows(_ROOT, first, first + len(batch) - 1)
        ids.extend(batch)
        row_of = self._row_of
        counts = self._counts
        entries = self._entries
        seq = self._next_seq
        for offset, task_id in enumerate(batch):
            row_of[task_id] = first + offset
            entry = entries[task_id]
            entry.seq = seq + offset
            counts[entry.snapshot.status.state] += 1
        self._next_seq = seq + len(batch)
        if was_valid:
            self._valid_below = len(ids)
        self.endInsertRows()
        self._counts_moved = True
        return len(batch)

    def _reindex_to(self, task_id: TaskId) -> int | None:
        """Walk the stale rows from the first one to ``task_id``, repairing the index.

        A stale entry can only be too high (rows only ever move up), so the walk
        stops at the task and every row before it is valid again.
        """
        ids = self._ids
        row_of = self._row_of
        for row in range(self._valid_below, len(ids)):
            current = ids[row]
            row_of[current] = row
            if current == task_id:
                self._valid_below = row + 1
                return row
        self._valid_below = len(ids)
        return None

    # -------------------------------------------------------------- display

    def _sort_key(self, entry: _Entry, column: int) -> Any:
        if column < 0:
            return entry.seq
        keys = entry.keys
        if keys is None:
            keys = entry.keys = [_UNSET] * _COLUMNS
        key = keys[column]
        if key is _UNSET:
            compute = _KEY_OF_COLUMN[column]
            key = keys[column] = (
                compute(entry) if compute is not None else self._schedule(entry).casefold()
            )
        return key

    def _schedule(self, entry: _Entry) -> str:
        text = entry.schedule
        if text is None:
            recurrence = entry.snapshot.spec.recurrence
            try:
                text = self._schedules.get(recurrence)
            except TypeError:  # unhashable: describe it each time
                return schedule_text(entry.snapshot.spec)
            if text is None:
                if len(self._schedules) >= MAX_CACHED_SCHEDULES:
                    self._schedules.clear()
                text = self._schedules[recurrence] = schedule_text(entry.snapshot.spec)
            entry.schedule = text
        return text

    def _icon(self, state: TaskState) -> QIcon:
        icon = self._icons.get(state)
        if icon is None:
            icon = self._icons[state] = state_icon(state)
        return icon

    def _tooltip(self, entry: _Entry, column: int) -> str | None:
        snapshot = entry.snapshot
        if column == Column.NAME:
            return command_tooltip(snapshot)
        if column == Column.STATE:
            return waiting_text(snapshot) or None
        if column == Column.NEXT_RUN:
            return next_run_tooltip(snapshot)
        if column == Column.SCHEDULE:
            text = self._schedule(entry)
            return text if text != EMPTY else None
        if column == Column.LAST_RESULT:
            return last_result_tooltip(entry.effective_last_run())
        return None


def _take(queue: dict[TaskId, None], limit: int) -> list[TaskId]:
    """Remove and return up to ``limit`` ids from the front of an ordered set."""
    batch: list[TaskId] = []
    for task_id in queue:
        if len(batch) >= limit:
            break
        batch.append(task_id)
    for task_id in batch:
        del queue[task_id]
    return batch


def _foreground(state: TaskState) -> QColor | None:
    if state in (TaskState.EXHAUSTED, TaskState.RETRYING):
        return _ALERT
    if state.is_terminal:
        return _DIM
    return None
