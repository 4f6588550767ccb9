"""Filtering and sorting the task table: by state group, by text, on sort keys.

``TaskFilterProxy`` sorts on ``Role.SORT_KEY`` (numbers sort as numbers, "Next run" by
time rather than by its "in 4m" text) and filters by reading the source model's cached
snapshots directly, without going through ``data()`` and display text.
"""

from __future__ import annotations

import logging
from enum import Enum

from PySide6.QtCore import (
    QAbstractItemModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QSortFilterProxyModel,
)

from taskgui.core.states import TaskState
from taskgui.ui.task_model import Role, TaskTableModel

log = logging.getLogger(__name__)


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


class TaskFilterProxy(QSortFilterProxyModel):
    """Sorts on ``Role.SORT_KEY`` and filters by state group and search text.

    Sorting is dynamic: a changed row moves to its place. Each comparison calls the
    source model's ``data()`` twice (Python, ~3 us a call), so sorting is the costly
    part at 100,000 rows: the first sort, or a reload while sorted, takes seconds
    (see ``benchmarks/bench_model.py``); a single changed row costs a binary search.

    Signals: none beyond QSortFilterProxyModel's.
    """

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._tasks: TaskTableModel | None = None
        self._state_filter = StateFilter.ALL
        self._states: frozenset[TaskState] | None = None  # None: every state
        self._needle = ""
        self.setSortRole(Role.SORT_KEY)
        self.setDynamicSortFilter(True)

    def setSourceModel(self, source_model: QAbstractItemModel) -> None:  # noqa: N802
        self._tasks = source_model if isinstance(source_model, TaskTableModel) else None
        super().setSourceModel(source_model)

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

    def filterAcceptsRow(  # noqa: N802
        self, source_row: int, source_parent: QModelIndex | QPersistentModelIndex
    ) -> bool:
        try:
            tasks = self._tasks
            if tasks is None:
                return True
            states = self._states
            if states is not None:
                snapshot = tasks.snapshot_at(source_row)
                if snapshot is None or snapshot.status.state not in states:
                    return False
            return not self._needle or self._needle in tasks.search_text_at(source_row)
        except Exception:  # never raise into Qt
            log.exception("task filter failed on row %s", source_row)
            return True

    def _change_filter(self, state_filter: StateFilter, needle: str) -> None:
        # beginFilterChange/endFilterChange (Qt 6.10) replace invalidateRowsFilter.
        begin = getattr(self, "beginFilterChange", None)
        if begin is not None:
            begin()
        self._state_filter = state_filter
        self._states = None if state_filter is StateFilter.ALL else state_filter.states
        self._needle = needle
        if begin is not None:
            self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        else:
            self.invalidateRowsFilter()
