"""Filtering and sorting the task table: by state group, by text, on sort keys.

``TaskFilterProxy`` is a ``QAbstractProxyModel`` that keeps its own row order in
Python (a ``row_order.RowOrder``) rather than a ``QSortFilterProxyModel``. Qt's proxy
sorts by calling the source's Python ``data()`` twice per comparison: ~1.7 million
calls, ten seconds, to sort 100,000 tasks. Here a sort reads each row's key once
straight from the model's cache (``TaskTableModel.sort_keys``: numbers as numbers,
"Next run" by time rather than by its "in 4m" text) and runs one ``list.sort``; a
changed, added or removed row is placed with a binary search in C. The source keeps
its arrival order; only this proxy's order is sorted.

What views see is what Qt's proxy gives them: precise ``rowsInserted`` /
``rowsRemoved`` / ``rowsMoved`` / ``dataChanged`` for the source's row events (a row
whose key changed moves, one ``beginMoveRows`` each), and a layout change, with every
persistent index moved to its task's new row, for a sort or a large filter change.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable, Iterable, Sequence
from enum import Enum
from typing import Any, overload

import shiboken6
from PySide6.QtCore import (
    QAbstractItemModel,
    QAbstractProxyModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
)

from taskgui.core.states import TaskState
from taskgui.core.task import TaskId
from taskgui.ui.row_order import RowOrder, sorted_by_key
from taskgui.ui.task_model import Column, TaskTableModel

__all__ = ["StateFilter", "TaskFilterProxy", "count_for"]

log = logging.getLogger(__name__)

# Up to this many runs of rows, a filter change or a batch of changed rows is
# announced row by row (rowsRemoved / rowsInserted / rowsMoved, each a list insert or
# pop); beyond it one layout change (a re-sort) is cheaper than the runs.
MAX_RUNS = 256

ModelIndex = QModelIndex | QPersistentModelIndex

_ROOT = QModelIndex()
_COLUMNS = len(Column)
_MISSING: Any = object()
_DISPLAY = int(Qt.ItemDataRole.DisplayRole.value)
_ASCENDING = Qt.SortOrder.AscendingOrder
_DESCENDING = Qt.SortOrder.DescendingOrder
_Hint = QAbstractItemModel.LayoutChangeHint
_SORT_HINT = _Hint.VerticalSortHint
_ANY_HINT = _Hint.NoLayoutChangeHint
_LAYOUT_SIGNATURE = ("QList<QPersistentModelIndex>", "QAbstractItemModel::LayoutChangeHint")
# The table is read-only: every cell can be selected, none edited.
_FLAGS = Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemNeverHasChildren


class StateFilter(Enum):
    """The state groups a person filters by (the buttons above the table)."""

    ALL = "all"
    PENDING = "pending"
    RUNNING = "running"
    FAILED = "failed"
    DONE = "done"
    CANCELLED = "cancelled"

    @property
    def label(self) -> str:
        return _LABELS[self]

    @property
    def states(self) -> frozenset[TaskState]:
        return _STATES[self]


_LABELS = {
    StateFilter.ALL: "All",
    StateFilter.PENDING: "Pending",
    StateFilter.RUNNING: "Running",
    StateFilter.FAILED: "Failed",
    StateFilter.DONE: "Done",
    StateFilter.CANCELLED: "Cancelled",
}

_STATES = {
    StateFilter.ALL: frozenset(TaskState),
    StateFilter.PENDING: frozenset({TaskState.PENDING, TaskState.PAUSED}),
    StateFilter.RUNNING: frozenset({TaskState.RUNNING}),
    StateFilter.FAILED: frozenset({TaskState.RETRYING, TaskState.EXHAUSTED, TaskState.MISSED}),
    StateFilter.DONE: frozenset({TaskState.SUCCEEDED}),
    StateFilter.CANCELLED: frozenset({TaskState.CANCELLED}),
}


def count_for(state_filter: StateFilter, model: TaskTableModel) -> int:
    """How many rows a filter would show before text search: O(number of states)."""
    if state_filter is StateFilter.ALL:
        return model.rowCount()
    counts = model.counts()
    return sum(counts.get(state, 0) for state in state_filter.states)


class TaskFilterProxy(QAbstractProxyModel):
    """Sorts a ``TaskTableModel`` on its sort keys and filters by state and text.

    ``sort(column, order)`` (what a view's header calls) orders by the column's key,
    then by task id, so ties are deterministic; descending is ascending reversed.
    Column -1 shows the source order. Sorting is dynamic: a changed row moves to its
    place. The source must be a ``TaskTableModel``: the proxy reads its caches by task
    id and follows what it emits (appends, removals, changes, resets; never moves or
    layout changes).

    Signals: none beyond QAbstractItemModel's.
    """

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._tasks: TaskTableModel | None = None
        self._state_filter = StateFilter.ALL
        self._states: frozenset[TaskState] | None = None  # None: every state
        self._needle = ""
        self._column = -1
        self._order = _ASCENDING
        self._rows = RowOrder()  # the rows shown, in order
        self._key_of: dict[TaskId, Any] = {}  # shown task -> the key it is placed by
        self._links: list[tuple[Any, Callable[..., None]]] = []

    # ------------------------------------------------------------ Qt model API

    def setSourceModel(self, source_model: QAbstractItemModel | None) -> None:  # noqa: N802
        if source_model is not None and not isinstance(source_model, TaskTableModel):
            raise TypeError("TaskFilterProxy shows a TaskTableModel only")
        self.beginResetModel()
        try:
            for signal, slot in self._links:
                signal.disconnect(slot)
            self._links = []
            super().setSourceModel(source_model)  # type: ignore[arg-type]
            self._tasks = source_model
            if source_model is not None:
                self._links = [
                    (source_model.modelAboutToBeReset, self._on_tasks_model_about_to_be_reset),
                    (source_model.modelReset, self._on_tasks_model_reset),
                    (source_model.rowsInserted, self._on_tasks_rows_inserted),
                    (source_model.rowsAboutToBeRemoved, self._on_tasks_rows_about_to_be_removed),
                    (source_model.dataChanged, self._on_tasks_data_changed),
                    (source_model.destroyed, _call_on_destroyed(self)),
                ]
                for signal, slot in self._links:
                    signal.connect(slot)
            self._rebuild()
        finally:
            self.endResetModel()

    def index(self, row: int, column: int, parent: ModelIndex = _ROOT) -> QModelIndex:
        if 0 <= row < len(self._rows) and 0 <= column < _COLUMNS and not parent.isValid():
            return self.createIndex(row, column)
        return QModelIndex()

    @overload
    def parent(self) -> QObject | None: ...
    @overload
    def parent(self, child: ModelIndex, /) -> QModelIndex: ...
    def parent(self, child: ModelIndex | None = None) -> QObject | QModelIndex | None:
        if child is None:  # QObject.parent()
            return super().parent()
        return QModelIndex()  # a flat table

    def rowCount(self, parent: ModelIndex = _ROOT) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: ModelIndex = _ROOT) -> int:  # noqa: N802
        return 0 if parent.isValid() or self._tasks is None else _COLUMNS

    def hasChildren(self, parent: ModelIndex = _ROOT) -> bool:  # noqa: N802
        return not parent.isValid() and len(self._rows) > 0

    def sibling(self, row: int, column: int, idx: ModelIndex) -> QModelIndex:
        return self.index(row, column)

    def flags(self, index: ModelIndex) -> Qt.ItemFlag:
        if 0 <= index.row() < len(self._rows) and 0 <= index.column() < _COLUMNS:
            return _FLAGS
        return Qt.ItemFlag.NoItemFlags

    def data(self, index: ModelIndex, role: int = _DISPLAY) -> Any:
        try:
            row = index.row()
            if self._tasks is None or not 0 <= row < len(self._rows):
                return None
            return self._tasks.data_of(self._rows.id_at(row), index.column(), role)
        except Exception:  # a model method must never raise into Qt
            log.exception("task filter: data(%s, %s) failed", index, role)
            return None

    def headerData(  # noqa: N802
        self, section: int, orientation: Qt.Orientation, role: int = _DISPLAY
    ) -> Any:
        tasks = self._tasks
        if tasks is None:
            return None
        if orientation == Qt.Orientation.Vertical:  # the source row's, as Qt's proxy does
            source_row = self._source_row(section)
            if source_row is None:
                return None
            section = source_row
        return tasks.headerData(section, orientation, role)

    def mapToSource(self, proxy_index: ModelIndex) -> QModelIndex:  # noqa: N802
        source_row = self._source_row(proxy_index.row())
        if source_row is None or self._tasks is None:
            return QModelIndex()
        return self._tasks.index(source_row, proxy_index.column())

    def mapFromSource(self, source_index: ModelIndex) -> QModelIndex:  # noqa: N802
        if self._tasks is None or not source_index.isValid():
            return QModelIndex()
        task_id = self._tasks.id_at(source_index.row())
        row = None if task_id is None else self.row_of(task_id)
        return QModelIndex() if row is None else self.createIndex(row, source_index.column())

    def sort(self, column: int, order: Qt.SortOrder = _ASCENDING) -> None:
        """Order the rows by ``column`` (-1: as the source has them) in ``order``."""
        try:
            if not 0 <= column < _COLUMNS:
                column = -1
            if column == self._column and order == self._order:
                return
            same_column = column == self._column
            self._column = column
            self._order = order
            if same_column:
                descending = column >= 0 and order == _DESCENDING
                if descending != self._rows.descending:
                    self._relayout(lambda: self._flip(descending), _SORT_HINT)
                return
            self._relayout(lambda: self._arrange(self._shown_after((), ())), _SORT_HINT)
        except Exception:
            log.exception("task filter: sorting by column %s failed", column)

    def sortColumn(self) -> int:  # noqa: N802
        return self._column

    def sortOrder(self) -> Qt.SortOrder:  # noqa: N802
        return self._order

    # ----------------------------------------------------------------- reads

    def task_id_at(self, row: int) -> TaskId | None:
        """The task shown in ``row``, or None outside the table."""
        return self._rows.id_at(row) if 0 <= row < len(self._rows) else None

    def row_of(self, task_id: TaskId) -> int | None:
        """The row a task is shown in, or None (filtered out, unknown, or queued)."""
        key = self._key_of.get(task_id, _MISSING)
        return None if key is _MISSING else self._rows.find(key, task_id)

    # --------------------------------------------------------------- filters

    @property
    def state_filter(self) -> StateFilter:
        return self._state_filter

    @property
    def search_text(self) -> str:
        return self._needle

    def set_state_filter(self, state_filter: StateFilter) -> None:
        if state_filter is self._state_filter:
            return
        self._change_filter(state_filter, self._needle)

    def set_search_text(self, text: str) -> None:
        """Case-insensitive substring of the name or the command line; blank shows all."""
        needle = text.strip().casefold()
        if needle == self._needle:
            return
        self._change_filter(self._state_filter, needle)

    def accepts(self, task_id: TaskId) -> bool:
        """Whether the filters let a task's row through."""
        tasks = self._tasks
        if tasks is None:
            return False
        states = self._states
        if states is not None:
            snapshot = tasks.snapshot_of(task_id)
            if snapshot is None or snapshot.status.state not in states:
                return False
        return not self._needle or self._needle in tasks.search_text_of(task_id)

    def _change_filter(self, state_filter: StateFilter, needle: str) -> None:
        try:
            old_states, old_needle = self._states, self._needle
            self._state_filter = state_filter
            self._states = None if state_filter is StateFilter.ALL else state_filter.states
            self._needle = needle
            new_states = self._states
            narrower = old_needle in needle and (
                old_states is None or (new_states is not None and new_states <= old_states)
            )
            if self._tasks is None:
                return
            key_of = self._key_of
            accepts = self.accepts
            gone: list[TaskId] = []
            added: list[TaskId] = []
            for task_id in self._tasks.task_ids():  # in source order: see _arrange
                if task_id in key_of:
                    if not accepts(task_id):
                        gone.append(task_id)
                elif not narrower and accepts(task_id):
                    added.append(task_id)
            self._update(gone, [], added)
        except Exception:
            log.exception("task filter: changing the filter failed")

    # --------------------------------------------------------- source signals

    def _on_tasks_destroyed(self) -> None:
        # Qt's proxy falls back to an empty model; follow it, calling nothing on the
        # dying one.
        self.beginResetModel()
        self._tasks = None
        self._links = []
        self._key_of = {}
        self._rows.assign([], [])
        self.endResetModel()

    def _on_tasks_model_about_to_be_reset(self) -> None:
        self.beginResetModel()

    def _on_tasks_model_reset(self) -> None:
        try:
            self._rebuild()
        except Exception:
            log.exception("task filter: following a reset failed")
        finally:
            self.endResetModel()

    def _on_tasks_rows_inserted(self, parent: QModelIndex, first: int, last: int) -> None:
        try:
            tasks = self._tasks
            if tasks is None or parent.isValid():
                return
            ids = [
                task_id
                for row in range(first, last + 1)
                if (task_id := tasks.id_at(row)) is not None and self.accepts(task_id)
            ]
            # Row by row even when there are many runs: the model's batches adapt their
            # size to what a turn costs, so the cost must grow with the batch.
            self._insert(ids, relayout_over=None)
        except Exception:
            log.exception("task filter: following inserted rows failed")

    def _on_tasks_rows_about_to_be_removed(
        self, parent: QModelIndex, first: int, last: int
    ) -> None:
        try:
            tasks = self._tasks
            if tasks is None or parent.isValid():
                return
            for source_row in range(last, first - 1, -1):
                task_id = tasks.id_at(source_row)
                row = None if task_id is None else self.row_of(task_id)
                if task_id is not None and row is not None:
                    self.beginRemoveRows(_ROOT, row, row)
                    self._rows.remove_row(row)
                    del self._key_of[task_id]
                    self.endRemoveRows()
        except Exception:
            log.exception("task filter: following removed rows failed")

    def _on_tasks_data_changed(
        self, top_left: QModelIndex, bottom_right: QModelIndex, roles: Sequence[int] = ()
    ) -> None:
        try:
            tasks = self._tasks
            if tasks is None:
                return
            ids = [
                task_id
                for row in range(top_left.row(), bottom_right.row() + 1)
                if (task_id := tasks.id_at(row)) is not None
            ]
            columns = (top_left.column(), bottom_right.column())
            if roles and all(role == _DISPLAY for role in roles):
                # Only texts that move with time: no key or filter can have changed.
                self._announce(ids, columns, roles)
                return
            key_of = self._key_of
            column = self._column
            gone: list[TaskId] = []
            moved: list[tuple[TaskId, Any]] = []
            added: list[TaskId] = []
            kept: list[TaskId] = []
            for task_id in ids:
                old = key_of.get(task_id, _MISSING)
                if not self.accepts(task_id):
                    if old is not _MISSING:
                        gone.append(task_id)
                    continue
                key = tasks.sort_key(task_id, column)
                if old is _MISSING:
                    added.append(task_id)
                elif key == old:
                    kept.append(task_id)
                else:
                    moved.append((task_id, key))
                    kept.append(task_id)
            self._update(gone, moved, added)
            self._announce(kept, columns, roles)
        except Exception:
            log.exception("task filter: following changed rows failed")

    # -------------------------------------------------------------- updating

    def _update(
        self, gone: Sequence[TaskId], moved: Sequence[tuple[TaskId, Any]], added: list[TaskId]
    ) -> None:
        """Hide ``gone``, re-key ``moved``, show ``added``: row by row, or one relayout."""
        if len(gone) + len(moved) + len(added) > MAX_RUNS * 16:  # surely too many runs
            self._relayout(lambda: self._arrange(self._shown_after(gone, added)), _ANY_HINT)
            return
        gone_rows = sorted(row for task_id in gone if (row := self.row_of(task_id)) is not None)
        runs = _runs(gone_rows)
        if len(runs) + len(moved) > MAX_RUNS:
            self._relayout(lambda: self._arrange(self._shown_after(gone, added)), _ANY_HINT)
            return
        for first, last in reversed(runs):
            self.beginRemoveRows(_ROOT, first, last)
            for task_id in self._rows.remove_rows(first, last):
                del self._key_of[task_id]
            self.endRemoveRows()
        for task_id, key in moved:
            self._move(task_id, key)
        self._insert(added, relayout_over=MAX_RUNS)

    def _shown_after(self, gone: Iterable[TaskId], added: Iterable[TaskId]) -> list[TaskId]:
        """The ids shown once ``gone`` are hidden and ``added`` shown, in source order."""
        if self._tasks is None:
            return []
        shown = set(self._key_of)
        shown.difference_update(gone)
        shown.update(added)
        every = self._tasks.task_ids()
        if len(shown) == len(every):
            return list(every)
        return [task_id for task_id in every if task_id in shown]

    def _insert(self, task_ids: list[TaskId], *, relayout_over: int | None) -> None:
        """Show ``task_ids`` (not shown yet): run by run, or in one relayout if that
        would take more than ``relayout_over`` runs."""
        if not task_ids or self._tasks is None:
            return
        key_of = dict(zip(task_ids, self._tasks.sort_keys(task_ids, self._column), strict=True))
        ids = sorted_by_key(task_ids, key_of)
        keys = [key_of[task_id] for task_id in ids]
        plan = self._rows.insert_plan(keys, ids)
        if relayout_over is not None and len(plan) > relayout_over:
            self._relayout(lambda: self._arrange(self._shown_after((), ids)), _ANY_HINT)
            return
        for index, start, stop in plan:
            first, last = self._rows.rows_for_insert(index, stop - start)
            self.beginInsertRows(_ROOT, first, last)
            self._rows.insert_run(index, keys[start:stop], ids[start:stop])
            self._key_of.update(zip(ids[start:stop], keys[start:stop], strict=True))
            self.endInsertRows()

    def _move(self, task_id: TaskId, key: Any) -> None:
        row = self.row_of(task_id)
        if row is None:
            return
        target = self._rows.target_row(row, key)
        if target == row:
            self._rows.set_key(row, key)
            self._key_of[task_id] = key
            return
        destination = target if target < row else target + 1
        if not self.beginMoveRows(_ROOT, row, row, _ROOT, destination):
            raise RuntimeError(f"cannot move row {row} to {destination}")
        self._rows.move_row(row, target, key)
        self._key_of[task_id] = key
        self.endMoveRows()

    def _announce(self, task_ids: Iterable[TaskId], columns: tuple[int, int], roles: Any) -> None:
        """Emit ``dataChanged`` for the rows of ``task_ids`` (those shown), run by run."""
        rows = sorted(row for task_id in task_ids if (row := self.row_of(task_id)) is not None)
        for first, last in _runs(rows):
            self.dataChanged.emit(
                self.index(first, columns[0]), self.index(last, columns[1]), list(roles)
            )

    # ------------------------------------------------------------- arranging

    def _rebuild(self) -> None:
        """Show every source row the filters accept, sorted (no signals)."""
        tasks = self._tasks
        ids: list[TaskId] = []
        if tasks is not None:
            ids = list(tasks.task_ids())
            if self._states is not None or self._needle:
                ids = [task_id for task_id in ids if self.accepts(task_id)]
        self._arrange(ids)

    def _arrange(self, task_ids: list[TaskId]) -> None:
        """Show exactly ``task_ids``, sorted by the current column (no signals).

        ``task_ids`` come in source order: the model's entries lie in memory about in
        that order, and reading 100,000 keys in a shuffled order costs five times as
        much in cache misses.
        """
        tasks = self._tasks
        keys = tasks.sort_keys(task_ids, self._column) if tasks is not None else []
        key_of = dict(zip(task_ids, keys, strict=True))
        ids = sorted_by_key(task_ids, key_of)
        self._rows.assign(list(map(key_of.__getitem__, ids)), ids)
        self._rows.descending = self._column >= 0 and self._order == _DESCENDING
        self._key_of = key_of

    def _flip(self, descending: bool) -> None:
        self._rows.descending = descending

    def _relayout(self, arrange: Callable[[], None], hint: _Hint) -> None:
        """Rearrange the rows in one layout change; persistent indexes follow their tasks."""
        # The overload with a hint: a sort lets selections save rows, not cells.
        about_to_change: Any = self.layoutAboutToBeChanged
        changed: Any = self.layoutChanged
        about_to_change[_LAYOUT_SIGNATURE].emit([], hint)
        before = self.persistentIndexList()
        ids = [self.task_id_at(index.row()) for index in before]
        try:
            arrange()
        finally:
            after = []
            for index, task_id in zip(before, ids, strict=True):
                row = None if task_id is None else self.row_of(task_id)
                moved = QModelIndex() if row is None else self.createIndex(row, index.column())
                after.append(moved)
            self.changePersistentIndexList(before, after)
            changed[_LAYOUT_SIGNATURE].emit([], hint)

    def _source_row(self, row: int) -> int | None:
        if self._tasks is None or not 0 <= row < len(self._rows):
            return None
        return self._tasks.row_of(self._rows.id_at(row))


def _call_on_destroyed(proxy: TaskFilterProxy) -> Callable[..., None]:
    """A slot for the source's ``destroyed`` that holds the proxy weakly.

    A bound method would be called even while the proxy itself is being torn down
    (PySide then fails to find the slot); a function checks the proxy still lives.
    """
    ref = weakref.ref(proxy)

    def on_destroyed(*_args: object) -> None:
        target = ref()
        if target is not None and shiboken6.isValid(target):
            target._on_tasks_destroyed()

    return on_destroyed


def _runs(rows: Sequence[int]) -> list[tuple[int, int]]:
    """Sorted rows as contiguous (first, last) runs."""
    runs: list[tuple[int, int]] = []
    for row in rows:
        if runs and row == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], row)
        else:
            runs.append((row, row))
    return runs
