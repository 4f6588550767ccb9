"""The rows a filtering, sorting proxy of the task table shows, and how they change.

``ShownRows`` is the half of ``task_filter.TaskFilterProxy`` that keeps the shown
rows in order (a ``row_order.RowOrder`` of sort keys) and tells views precisely what
moved: rows hidden, re-keyed or shown are announced run by run (``rowsRemoved`` /
``rowsMoved`` / ``rowsInserted``), and anything larger as one layout change with
every persistent index moved to its task's new row. What is shown is the subclass's
business (``accepts``); so is following the source model.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from PySide6.QtCore import QAbstractItemModel, QAbstractProxyModel, QModelIndex, QObject, Qt

from taskgui.core.task import TaskId
from taskgui.ui.table.row_order import RowOrder, sorted_by_key
from taskgui.ui.table.task_model import TaskTableModel

# Up to this many runs of rows, a filter change or a batch of changed rows is
# announced row by row (rowsRemoved / rowsInserted / rowsMoved, each a list insert or
# pop); beyond it one layout change (a re-sort) is cheaper than the runs.
MAX_RUNS = 256

_ROOT = QModelIndex()
_ASCENDING = Qt.SortOrder.AscendingOrder
_DESCENDING = Qt.SortOrder.DescendingOrder
_Hint = QAbstractItemModel.LayoutChangeHint
_ANY_HINT = _Hint.NoLayoutChangeHint
_LAYOUT_SIGNATURE = ("QList<QPersistentModelIndex>", "QAbstractItemModel::LayoutChangeHint")
_MISSING: Any = object()


class ShownRows(QAbstractProxyModel):
    """The shown rows of a ``TaskTableModel``, sorted by ``_column`` in ``_order``.

    Subclasses set ``_tasks`` (the source), decide ``accepts`` and call the updating
    methods as the source changes.

    Signals: none beyond QAbstractItemModel's.
    """

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._tasks: TaskTableModel | None = None
        self._column = -1
        self._order = _ASCENDING
        self._rows = RowOrder()  # the rows shown, in order
        self._key_of: dict[TaskId, Any] = {}  # shown task -> the key it is placed by

    def accepts(self, task_id: TaskId) -> bool:
        """Whether a task's row is shown."""
        raise NotImplementedError

    def filtering(self) -> bool:
        """False when ``accepts`` takes every row (so a rebuild need not ask it)."""
        raise NotImplementedError

    # ----------------------------------------------------------------- reads

    def task_id_at(self, row: int) -> TaskId | None:
        """The task shown in ``row``, or None outside the table."""
        return self._rows.id_at(row) if 0 <= row < len(self._rows) else None

    def row_of(self, task_id: TaskId) -> int | None:
        """The row a task is shown in, or None (filtered out, unknown, or queued)."""
        key = self._key_of.get(task_id, _MISSING)
        return None if key is _MISSING else self._rows.find(key, task_id)

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
            if self.filtering():
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


def _runs(rows: Sequence[int]) -> list[tuple[int, int]]:
    """Sorted rows as contiguous (first, last) runs."""
    runs: list[tuple[int, int]] = []
    for row in rows:
        if runs and row == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], row)
        else:
            runs.append((row, row))
    return runs
