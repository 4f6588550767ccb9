"""The run history's table: one row per attempt, newest first, as a Qt model."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime
from enum import IntEnum
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import (
    QColor,
)
from PySide6.QtWidgets import (
    QWidget,
)

from taskgui.core.duration import format_duration
from taskgui.core.states import RunOutcome
from taskgui.core.status import RunRecord, RunTicket
from taskgui.ui.plain_text import plain_tooltip, shown, shown_lines
from taskgui.ui.table.formatting import (
    exit_text,
    local_time_full_text,
    local_time_text,
    outcome_text,
    signal_name,
)

AnyIndex = QModelIndex | QPersistentModelIndex


class RunColumn(IntEnum):
    ATTEMPT = 0
    SCHEDULED = 1
    STARTED = 2
    DURATION = 3
    OUTCOME = 4
    EXIT_CODE = 5
    NODE = 6  # on a shared schedule: which node ran it (hidden when none did)
    ERROR = 7


_HEADERS = {
    RunColumn.ATTEMPT: "Attempt",
    RunColumn.SCHEDULED: "Scheduled",
    RunColumn.STARTED: "Started",
    RunColumn.DURATION: "Took",
    RunColumn.OUTCOME: "Outcome",
    RunColumn.EXIT_CODE: "Exit",
    RunColumn.NODE: "Node",
    RunColumn.ERROR: "Error",
}
_BAD = {RunOutcome.FAILED, RunOutcome.TIMED_OUT, RunOutcome.INTERRUPTED}


class RunTableModel(QAbstractTableModel):
    """Runs of one task, newest first. Small (history is capped), so a plain list."""

    def __init__(
        self, now: Callable[[], datetime] | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self._runs: list[RunRecord] = []
        self._now = now

    def set_runs(self, runs: Sequence[RunRecord]) -> None:
        self.beginResetModel()
        self._runs = list(runs)
        self.endResetModel()

    def run_at(self, row: int) -> RunRecord | None:
        return self._runs[row] if 0 <= row < len(self._runs) else None

    def row_of_ticket(self, ticket: RunTicket) -> int | None:
        """The row of a run in progress (its start is the ticket's dispatch time, or for
        a run that was queued for a worker, later: then its occurrence and attempt)."""
        for row, run in enumerate(self._runs):
            if (
                run.outcome is None
                and run.task_id == ticket.task_id
                and (
                    run.started_at == ticket.dispatched_at
                    or (run.scheduled_at == ticket.scheduled_at and run.attempt == ticket.attempt)
                )
            ):
                return row
        return None

    def has_nodes(self) -> bool:
        """Whether any run names the node that ran it (a shared schedule's)."""
        return any(run.node for run in self._runs)

    def has_open_run(self) -> bool:
        return any(run.outcome is None for run in self._runs)

    def set_output(self, row: int, output: str) -> None:
        """What a run in progress printed so far (no signal: output is not a column)."""
        run = self.run_at(row)
        if run is not None:
            self._runs[row] = replace(run, output=output)

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(self._runs)

    def columnCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(RunColumn)

    def headerData(  # noqa: N802
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            try:
                return _HEADERS[RunColumn(section)]
            except ValueError:
                return None
        return None

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        run = self.run_at(index.row()) if index.isValid() else None
        if run is None or not 0 <= index.column() < len(RunColumn):
            return None
        column = RunColumn(index.column())
        if role == Qt.ItemDataRole.DisplayRole:
            return _display(run, column, self._now() if self._now is not None else None)
        if role == Qt.ItemDataRole.ToolTipRole:
            return plain_tooltip(_tooltip(run, column))
        if role == Qt.ItemDataRole.ForegroundRole and run.outcome in _BAD:
            return QColor("#c62828") if column is RunColumn.OUTCOME else None
        if role == Qt.ItemDataRole.TextAlignmentRole and column in (
            RunColumn.ATTEMPT,
            RunColumn.EXIT_CODE,
            RunColumn.DURATION,
        ):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


def _display(run: RunRecord, column: RunColumn, now: datetime | None) -> str:
    if column is RunColumn.ATTEMPT:
        return str(run.attempt) if run.attempt else "—"
    if column is RunColumn.SCHEDULED:
        return local_time_text(run.scheduled_at, now=now)
    if column is RunColumn.STARTED:
        return local_time_text(run.started_at, now=now) if run.started_at else "—"
    if column is RunColumn.DURATION:
        if run.started_at and run.finished_at:
            return format_duration(run.finished_at - run.started_at)
        return "running…" if run.outcome is None and run.started_at else "—"
    if column is RunColumn.OUTCOME:
        if run.outcome is not None:
            return outcome_text(run.outcome)
        # Open: a shared schedule's run that no node has taken yet has no start.
        return "Running" if run.started_at else "Waiting for a node"
    if column is RunColumn.EXIT_CODE:
        return exit_text(run.exit_code)
    if column is RunColumn.NODE:
        return run.node
    return shown(run.error.splitlines()[0]) if run.error else ""


def _tooltip(run: RunRecord, column: RunColumn) -> str | None:
    moments: dict[RunColumn, datetime | None] = {
        RunColumn.SCHEDULED: run.scheduled_at,
        RunColumn.STARTED: run.started_at,
        RunColumn.DURATION: run.finished_at,
    }
    moment = moments.get(column)
    if moment is not None:
        prefix = "Finished " if column is RunColumn.DURATION else ""
        return prefix + local_time_full_text(moment)
    if column is RunColumn.ERROR and run.error:
        return shown_lines(run.error)  # the cell has its first line, the tooltip them all
    if column is RunColumn.NODE and run.node:
        return f"Ran on node {run.node}" if run.outcome else f"Runs on node {run.node}"
    if column is RunColumn.EXIT_CODE and run.exit_code is not None and run.exit_code < 0:
        return f"stopped by signal {-run.exit_code} ({signal_name(-run.exit_code)})"
    return None
