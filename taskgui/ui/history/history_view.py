"""A task's run history: every attempt, and what each one printed.

The table lists runs newest first (attempt, scheduled and start times, how long it
took, outcome, exit code, error). Below it, the selected run's captured output in a
monospace view that can be searched (Ctrl+F, Enter / F3 for the next match, Shift+F3
for the previous one, every match highlighted) and copied whole.

A run still going shows what it printed so far, and more as it prints
(``show_live_output``, fed by the scheduler's ``run_output``): new text is added at
the end, so a selection stays put, and the view keeps following the end if it was
there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime
from enum import IntEnum
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import (
    QColor,
    QFontDatabase,
    QGuiApplication,
    QKeySequence,
    QShortcut,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTableView,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from taskgui.core.duration import format_duration
from taskgui.core.states import RunOutcome
from taskgui.core.status import RunRecord, RunTicket, TaskSnapshot
from taskgui.ui.plain_text import escape_markup, plain_tooltip, window_title
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
    ERROR = 6


_HEADERS = {
    RunColumn.ATTEMPT: "Attempt",
    RunColumn.SCHEDULED: "Scheduled",
    RunColumn.STARTED: "Started",
    RunColumn.DURATION: "Took",
    RunColumn.OUTCOME: "Outcome",
    RunColumn.EXIT_CODE: "Exit",
    RunColumn.ERROR: "Error",
}
_BAD = {RunOutcome.FAILED, RunOutcome.TIMED_OUT, RunOutcome.INTERRUPTED}
PRINTED_NOTHING = "This run printed nothing."
NOTHING_YET = "Nothing printed yet; what the command prints shows here while it runs."
NOT_RUN_YET = "This task has not run yet."


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
        """The row of a run in progress (its start is the ticket's dispatch time)."""
        for row, run in enumerate(self._runs):
            if (
                run.outcome is None
                and run.task_id == ticket.task_id
                and run.started_at == ticket.dispatched_at
            ):
                return row
        return None

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
        return "running…" if run.outcome is None else "—"
    if column is RunColumn.OUTCOME:
        return outcome_text(run.outcome) if run.outcome else "Running"
    if column is RunColumn.EXIT_CODE:
        return exit_text(run.exit_code)
    return (run.error or "").splitlines()[0] if run.error else ""


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
        return run.error
    if column is RunColumn.EXIT_CODE and run.exit_code is not None and run.exit_code < 0:
        return f"stopped by signal {-run.exit_code} ({signal_name(-run.exit_code)})"
    return None


class OutputView(QWidget):
    """Monospace output with a search bar and a copy button."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.text = QPlainTextEdit(self)
        self.text.setReadOnly(True)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.setAccessibleName("Run output")
        self.text.setPlaceholderText(PRINTED_NOTHING)
        self.search = QLineEdit(self)
        self.search.setPlaceholderText("Find in output (Ctrl+F)")
        self.search.setClearButtonEnabled(True)
        self.search.setAccessibleName("Find in output")
        self.matches = QLabel(self)
        self.previous_button = QPushButton("Previous", self)
        self.next_button = QPushButton("Next", self)
        self.copy_button = QPushButton("Copy output", self)
        bar = QHBoxLayout()
        bar.addWidget(self.search, 1)
        bar.addWidget(self.matches)
        bar.addWidget(self.previous_button)
        bar.addWidget(self.next_button)
        bar.addWidget(self.copy_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(bar)
        layout.addWidget(self.text, 1)
        self._pinned = False  # keep the end in view (a running command's output)
        self._moving = False  # the view scrolls itself, not a person
        scroll = self.text.verticalScrollBar()
        scroll.valueChanged.connect(self._on_scroll_value_changed)
        scroll.rangeChanged.connect(self._on_scroll_range_changed)
        self.search.textChanged.connect(self._on_search_text_changed)
        self.search.returnPressed.connect(self.find_next)
        self.next_button.clicked.connect(self.find_next)
        self.previous_button.clicked.connect(self.find_previous)
        self.copy_button.clicked.connect(self.copy_all)
        for keys, slot in (
            (QKeySequence.StandardKey.Find, self.focus_search),
            (QKeySequence.StandardKey.FindNext, self.find_next),
            (QKeySequence.StandardKey.FindPrevious, self.find_previous),
        ):
            shortcut = QShortcut(QKeySequence(keys), self)
            shortcut.activated.connect(slot)

    def set_output(self, output: str) -> None:
        self._pinned = False
        self._set_text(output)
        self._highlight()

    def scroll_to_end(self) -> None:
        """Show the end, and keep showing it as output comes (until scrolled away)."""
        self._pinned = True
        self._to_end()

    def follow(self, output: str) -> None:
        """More of a running command's output: added at the end when it only grew
        (a selection and the place read stay); the end stays in view if it was."""
        shown = self.text.toPlainText()
        if output.startswith(shown):
            cursor = QTextCursor(self.text.document())
            cursor.movePosition(QTextCursor.MoveOperation.End)
            cursor.insertText(output[len(shown) :])
        else:  # the tail was cut at its start: show it anew
            bar = self.text.verticalScrollBar()
            place = bar.value()
            self._set_text(output)
            self._moving = True
            bar.setValue(place)
            self._moving = False
        if self._pinned:
            self._to_end()
        self._highlight()

    def _set_text(self, output: str) -> None:
        self._moving = True  # not a person scrolling away from the end
        try:
            self.text.setPlainText(output)
        finally:
            self._moving = False

    def _to_end(self) -> None:
        bar = self.text.verticalScrollBar()
        self._moving = True
        bar.setValue(bar.maximum())
        self._moving = False

    def _on_scroll_value_changed(self, value: int) -> None:
        if not self._moving:  # a person scrolled: follow the end only if they went there
            self._pinned = value >= self.text.verticalScrollBar().maximum()

    def _on_scroll_range_changed(self, _low: int, _high: int) -> None:
        if self._pinned:  # more lines, or a new size: the end is still where to look
            self._to_end()

    def focus_search(self) -> None:
        self.search.setFocus()
        self.search.selectAll()

    def find_next(self) -> bool:
        return self._find(QTextDocument.FindFlag(0))

    def find_previous(self) -> bool:
        return self._find(QTextDocument.FindFlag.FindBackward)

    def copy_all(self) -> None:
        clipboard = QGuiApplication.clipboard()
        if clipboard is not None:
            clipboard.setText(self.text.toPlainText())

    def _find(self, flags: QTextDocument.FindFlag) -> bool:
        needle = self.search.text()
        if not needle:
            return False
        if self.text.find(needle, flags):
            return True
        # Wrap around, as find bars in editors do.
        cursor = self.text.textCursor()
        backward = bool(flags & QTextDocument.FindFlag.FindBackward)
        cursor.movePosition(
            QTextCursor.MoveOperation.End if backward else QTextCursor.MoveOperation.Start
        )
        self.text.setTextCursor(cursor)
        return bool(self.text.find(needle, flags))

    def _on_search_text_changed(self, _: str) -> None:
        self._highlight()
        cursor = self.text.textCursor()
        cursor.movePosition(QTextCursor.MoveOperation.Start)
        self.text.setTextCursor(cursor)
        self.find_next()

    def _highlight(self) -> None:
        needle = self.search.text()
        selections: list[QTextEdit.ExtraSelection] = []
        if needle:
            highlight = QTextCharFormat()
            highlight.setBackground(QColor("#ffe082"))
            highlight.setForeground(QColor("#000000"))
            document = self.text.document()
            cursor = document.find(needle)
            while not cursor.isNull() and len(selections) < 10_000:
                selection = QTextEdit.ExtraSelection()
                selection.cursor = cursor
                selection.format = highlight
                selections.append(selection)
                cursor = document.find(needle, cursor)
        self.text.setExtraSelections(selections)
        if needle:
            count = len(selections)
            self.matches.setText("no match" if not count else f"{count} match(es)")
        else:
            self.matches.clear()


class HistoryDialog(QDialog):
    """The runs of one task and their output. Non-modal; refresh with ``set_runs``."""

    def __init__(
        self,
        task: TaskSnapshot,
        load_runs: Callable[[], Sequence[RunRecord]],
        parent: QWidget | None = None,
        *,
        now: Callable[[], datetime] | None = None,
    ) -> None:
        super().__init__(parent)
        self.task_id = task.id
        self._load_runs = load_runs
        self._loaded = False
        self._looked_for: set[int] = set()  # run ids a refresh was made to find
        self.setWindowTitle(window_title(f"History — {task.spec.name}"))
        self.resize(900, 600)
        self.summary = QLabel(self)
        self.summary.setTextFormat(Qt.TextFormat.RichText)  # built from escaped parts
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.runs = RunTableModel(now, self)
        self.table = QTableView(self)
        self.table.setModel(self.runs)
        self.table.setAccessibleName("Runs")
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        self.table.setAlternatingRowColors(True)
        header = self.table.horizontalHeader()
        header.setStretchLastSection(True)
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(RunColumn.ERROR, QHeaderView.ResizeMode.Stretch)
        self.output = OutputView(self)
        splitter = QSplitter(Qt.Orientation.Vertical, self)
        splitter.addWidget(self.table)
        splitter.addWidget(self.output)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 2)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        self.refresh_button = buttons.addButton("Refresh", QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        self.refresh_button.clicked.connect(self.refresh)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(splitter, 1)
        layout.addWidget(buttons)
        selection = self.table.selectionModel()
        selection.currentRowChanged.connect(self._on_table_current_row_changed)
        self.update_task(task)
        self.refresh()

    def update_task(self, task: TaskSnapshot) -> None:
        spec = task.spec
        self.summary.setText(
            f"<b>{escape_markup(spec.name)}</b> — {escape_markup(spec.describe_schedule())} · "
            f"{task.state.value} · <code>{escape_markup(spec.command.line)}</code>"
        )
        if self._loaded and task.status.running and not self.runs.has_open_run():
            self.refresh()  # a run began: show it (with its output as it comes)

    def show_live_output(self, ticket: RunTicket, output: str) -> None:
        """What a run of this task printed so far; shown at once if it is selected."""
        row = self.runs.row_of_ticket(ticket)
        if row is None and ticket.run_id not in self._looked_for:
            self._looked_for.add(ticket.run_id)  # once: a run begun since the last load
            self.refresh()
            row = self.runs.row_of_ticket(ticket)
        if row is None:
            return
        self.runs.set_output(row, output)
        if self.table.currentIndex().row() == row:
            self.output.follow(output)

    def refresh(self) -> None:
        """Reload the runs, keeping the selected run selected when it is still there."""
        current = self.runs.run_at(self.table.currentIndex().row())
        self.runs.set_runs(self._load_runs())
        row = 0
        if current is not None:
            for index in range(self.runs.rowCount()):
                run = self.runs.run_at(index)
                if run is not None and run.id == current.id:
                    row = index
                    break
        self._loaded = True
        if self.runs.rowCount():
            self.table.selectRow(row)
            self._show_output(row)
        else:
            self.output.set_output("")
            self.output.text.setPlaceholderText(NOT_RUN_YET)

    def _on_table_current_row_changed(self, current: QModelIndex, _: QModelIndex) -> None:
        self._show_output(current.row())

    def _show_output(self, row: int) -> None:
        run = self.runs.run_at(row)
        going = run is not None and run.outcome is None
        self.output.text.setPlaceholderText(NOTHING_YET if going else PRINTED_NOTHING)
        self.output.set_output(run.output if run is not None else "")
        if going:
            self.output.scroll_to_end()  # where new output appears
