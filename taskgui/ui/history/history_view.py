"""A task's run history: every attempt, and what each one printed. This dialog puts
together the table (``run_table.RunTableModel``) and the output (``output_view``).

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
from datetime import datetime

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from taskgui.core.status import RunRecord, RunTicket, TaskSnapshot
from taskgui.ui.history.output_view import NOT_RUN_YET, NOTHING_YET, PRINTED_NOTHING, OutputView
from taskgui.ui.history.run_table import (
    RunColumn,
    RunTableModel,
)
from taskgui.ui.plain_text import (
    LEFT_TO_RIGHT_MARK,
    escape_markup,
    has_right_to_left,
    isolated,
    shown,
    window_title,
)

AnyIndex = QModelIndex | QPersistentModelIndex


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
        self.setWindowTitle(window_title(f"History — {shown(task.spec.name)}"))
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
        # The command only made visible, not isolated: it is selectable, and what is
        # copied from it must paste into a shell as it is.
        name, line = escape_markup(isolated(spec.name)), escape_markup(shown(spec.command.line))
        # It begins with the name: left to right, whatever script that is in.
        lead = LEFT_TO_RIGHT_MARK if has_right_to_left(spec.name) else ""
        self.summary.setText(
            f"{lead}<b>{name}</b> — {escape_markup(spec.describe_schedule())} · "
            f"{task.state.value} · <code>{line}</code>"
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
        self.table.setColumnHidden(RunColumn.NODE, not self.runs.has_nodes())
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
