"""The task table's rows: task ids in row order and an id -> row index.

The index is repaired lazily. Removing row r shifts every later row; rather than
rewrite their entries, the index remembers that rows from r on are stale and re-walks
them only as far as a lookup needs. Rows are only ever appended or removed.
"""

from __future__ import annotations

from taskgui.core.task import TaskId


class RowIndex:
    """``ids`` in row order (read it directly on hot paths; only ``reset`` rebinds it), with
    ``row_of`` correct for every row below ``_valid_below`` (see ``_reindex_to``)."""

    __slots__ = ("_row_of", "_valid_below", "ids")

    def __init__(self) -> None:
        self.ids: list[TaskId] = []
        self._row_of: dict[TaskId, int] = {}
        self._valid_below = 0

    def __len__(self) -> int:
        return len(self.ids)

    def reset(self, ids: list[TaskId]) -> None:
        """Take ``ids`` (not a copy) as the rows; ``ids`` is a new list from now on."""
        self.ids = ids
        self._row_of = {task_id: row for row, task_id in enumerate(self.ids)}
        self._valid_below = len(self.ids)

    def id_at(self, row: int) -> TaskId | None:
        ids = self.ids
        return ids[row] if 0 <= row < len(ids) else None

    def row_of(self, task_id: TaskId) -> int | None:
        """The row of a task, or None if it is not a row."""
        row = self._row_of.get(task_id)
        if row is None or row < self._valid_below:
            return row
        return self._reindex_to(task_id)

    def append(self, batch: list[TaskId]) -> int:
        """Append ``batch`` as rows; returns the first one's row."""
        ids = self.ids
        first = len(ids)
        was_valid = self._valid_below == first
        ids.extend(batch)
        row_of = self._row_of
        for offset, task_id in enumerate(batch):
            row_of[task_id] = first + offset
        if was_valid:
            self._valid_below = len(ids)
        return first

    def remove(self, task_id: TaskId, row: int) -> None:
        """Remove the task in ``row`` (from ``row_of``); later rows move up one."""
        del self.ids[row]
        del self._row_of[task_id]
        self._valid_below = min(self._valid_below, row)

    def _reindex_to(self, task_id: TaskId) -> int | None:
        """Walk the stale rows from the first one to ``task_id``, repairing the index.

        A stale entry can only be too high (rows only ever move up), so the walk
        stops at the task and every row before it is valid again.
        """
        ids = self.ids
        row_of = self._row_of
        for row in range(self._valid_below, len(ids)):
            current = ids[row]
            row_of[current] = row
            if current == task_id:
                self._valid_below = row + 1
                return row
        self._valid_below = len(ids)
        return None
