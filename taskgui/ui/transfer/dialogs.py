"""The dialogs of import: the report (preview or summary) and the crontab editor.

``ReportDialog`` shows a ``TransferReport``: counts, the tasks to add, the existing
tasks to replace, every skipped line or task with its reason, and notes. As a
preview it can plan again with "Replace tasks with the same name" ticked. The flow
around them (files, the schedule) is ``transfer_actions``.

The file is someone else's: every text from it is plain (``plain_text``), and the
preview shows, next to each command, what else decides what runs (its environment,
risky variables marked, and its folder) and when it first runs (at once, if its start
has passed), under a line that says the commands will run as you.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from PySide6.QtGui import QColor, QFont, QFontDatabase
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from taskgui.core.errors import TaskguiError
from taskgui.core.transfer.plan import ImportPlan
from taskgui.core.transfer.report import RUNS_AT_ONCE, AddedTask, TransferReport
from taskgui.system.files import read_import_file
from taskgui.ui.plain_text import isolated, plain_label, plain_tooltip, shown, window_title

FilePicker = Callable[[QWidget, str, str], "str | None"]  # (parent, caption, filter)
Message = Callable[[QWidget, str, str], None]  # (parent, title, text)
Replan = Callable[[bool], ImportPlan]

CRONTAB_FILTER = "All files (*)"
ADDED_HEADERS = ("Name", "Schedule", "Starts", "Command", "Folder", "Environment")
HOME_FOLDER = "home folder"
RISKY_MARK = "⚠ "
MAX_COLUMN_WIDTH = 260
_ALERT = QColor(198, 40, 40)


@dataclass(frozen=True, slots=True)
class Cell:
    """A table cell: its text, its tooltip (the text itself when None), a warning look."""

    text: str
    tip: str | None = None
    alert: bool = False


def _table(headers: Sequence[str], parent: QWidget) -> QTableWidget:
    table = QTableWidget(0, len(headers), parent)
    table.setHorizontalHeaderLabels(list(headers))
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.verticalHeader().setVisible(False)
    table.setWordWrap(False)
    header = table.horizontalHeader()
    header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    header.setStretchLastSection(True)
    return table


def _fill(table: QTableWidget, rows: Sequence[Sequence[str | Cell]]) -> None:
    """Show ``rows``, each cell on one line; the tooltip keeps the text as it was."""
    table.setRowCount(len(rows))
    for row, cells in enumerate(rows):
        for column, value in enumerate(cells):
            cell = value if isinstance(value, Cell) else Cell(value)
            item = QTableWidgetItem(" ".join(cell.text.split()))
            item.setToolTip(plain_tooltip(cell.text if cell.tip is None else cell.tip))
            if cell.alert:
                item.setForeground(_ALERT)
                font = QFont(item.font())
                font.setBold(True)
                item.setFont(font)
            table.setItem(row, column, item)
    table.resizeColumnsToContents()
    for column in range(table.columnCount() - 1):  # the last one stretches
        # A long command must not push the folder and environment out of sight.
        table.setColumnWidth(column, min(table.columnWidth(column), MAX_COLUMN_WIDTH))
    table.setVisible(bool(rows))


def added_row(task: AddedTask) -> tuple[Cell, ...]:
    """The preview's row of a task: what it runs, where, with what, and when first."""
    risky = set(task.risky_env)
    # The risky ones first: a cut-off cell still shows them.
    ordered = sorted(task.env, key=lambda pair: pair[0] not in risky)
    env = [
        (RISKY_MARK if name in risky else "") + shown(f"{name}={value}") for name, value in ordered
    ]
    return (
        Cell(shown(task.name)),
        Cell(task.schedule),
        Cell(RUNS_AT_ONCE, alert=True) if task.runs_at_once else Cell("on schedule"),
        Cell(shown(task.command)),
        Cell(shown(task.cwd) if task.cwd else HOME_FOLDER),
        Cell("; ".join(env), "\n".join(env), alert=bool(risky)),
    )


def _plain_label(parent: QWidget) -> QLabel:
    return plain_label(parent=parent, word_wrap=True)  # commands and names are not HTML


class ReportDialog(QDialog):
    """A TransferReport: the counts, the tasks, every skipped line with its reason.

    As a preview (``replan`` given) it offers Import and Cancel and a "Replace tasks
    with the same name" box; ticking it plans again and shows the new preview, and
    ``plan`` is what Import will write. As a summary it only has Close.
    """

    def __init__(
        self,
        report: TransferReport | None = None,
        *,
        title: str,
        replan: Replan | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(window_title(title))  # it may hold the file's name
        self.resize(960, 540)  # six columns: what runs, where, with what, when
        self._replan = replan
        self.plan: ImportPlan | None = replan(False) if replan else None
        self.headline = _plain_label(self)
        self.cautions = _plain_label(self)
        self.cautions.setObjectName("import_cautions")
        self.cautions.setStyleSheet(f"color: {_ALERT.name()};")
        self.added = _table(ADDED_HEADERS, self)
        self.replaced = _plain_label(self)
        self.skipped = _table(("Where", "Line or task", "Reason"), self)
        self.notes = _plain_label(self)
        self.replace_box = QCheckBox("&Replace tasks with the same name", self)
        self.replace_box.setToolTip(
            "Delete existing tasks that have the name of an imported task, instead of "
            "skipping the imported one"
        )
        self.replace_box.setVisible(replan is not None)
        self.replace_box.toggled.connect(self._on_replace_box_toggled)
        layout = QVBoxLayout(self)
        for widget in (
            self.headline,
            self.cautions,
            self.added,
            self.replaced,
            self.skipped,
            self.notes,
        ):
            layout.addWidget(widget)
        layout.addWidget(self.replace_box)
        if replan is None:
            self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
            self.buttons.rejected.connect(self.reject)
        else:
            self.buttons = QDialogButtonBox(
                QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
            )
            self.import_button.setText("&Import")
            self.buttons.accepted.connect(self.accept)
            self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self.show_report(self.plan.report if self.plan else report or TransferReport())

    @property
    def import_button(self) -> QPushButton:
        return self.buttons.button(QDialogButtonBox.StandardButton.Ok)

    def show_report(self, report: TransferReport) -> None:
        self.report = report
        self.headline.setText(report.summary().capitalize())
        cautions = report.cautions()
        self.cautions.setText("\n".join(f"{RISKY_MARK}{caution}" for caution in cautions))
        self.cautions.setVisible(bool(cautions))
        _fill(self.added, [added_row(task) for task in report.added])
        _fill(
            self.skipped,
            [(item.where, shown(item.text), shown(item.reason)) for item in report.skipped],
        )
        verb = "Will delete" if report.preview else "Deleted"
        self.replaced.setText(
            f"{verb} (replaced by imported tasks): "
            + ", ".join(f"task {task.task_id} “{isolated(task.name)}”" for task in report.replaced)
        )
        self.replaced.setVisible(bool(report.replaced))
        self.notes.setText("\n".join(f"• {note}" for note in report.notes))
        self.notes.setVisible(bool(report.notes))
        if self.plan is not None:
            self.import_button.setEnabled(self.plan.changes_anything)

    def _on_replace_box_toggled(self, checked: bool) -> None:
        if self._replan is None:
            return
        try:
            self.plan = self._replan(checked)
        except TaskguiError as error:  # never out of a slot; and nothing to import
            self.headline.setText(str(error))
            self.import_button.setEnabled(False)
            return
        self.show_report(self.plan.report)


class CrontabDialog(QDialog):
    """Paste a crontab or load one from a file; OK goes on to the preview."""

    def __init__(
        self, open_file: FilePicker, error: Message, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Import Crontab")
        self.resize(720, 460)
        self._open_file = open_file
        self._error = error
        self._loaded: tuple[str, str] | None = None  # (path, its text) of the last load
        hint = QLabel("Paste a crontab (the output of 'crontab -l') or load one from a file.", self)
        self.editor = QPlainTextEdit(self)
        self.editor.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.editor.setPlaceholderText("# Nightly backup\n30 2 * * * rsync -a ~/docs /mnt/backup")
        self.load_button = QPushButton("&Load File…", self)
        self.load_button.clicked.connect(self._on_load_button_clicked)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        self.preview_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.preview_button.setText("&Preview…")
        self.preview_button.setEnabled(False)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.editor.textChanged.connect(self._on_editor_text_changed)
        row = QHBoxLayout()
        row.addWidget(self.load_button)
        row.addStretch(1)
        row.addWidget(self.buttons)
        layout = QVBoxLayout(self)
        layout.addWidget(hint)
        layout.addWidget(self.editor, 1)
        layout.addLayout(row)

    def text(self) -> str:
        return self.editor.toPlainText()

    def path(self) -> str | None:
        """The file the text was loaded from, while it is unchanged (a system crontab
        is recognised by its path); None for pasted or edited text."""
        if self._loaded is not None and self._loaded[1] == self.text():
            return self._loaded[0]
        return None

    def _on_editor_text_changed(self) -> None:
        self.preview_button.setEnabled(bool(self.text().strip()))

    def _on_load_button_clicked(self) -> None:
        path = self._open_file(self, "Load Crontab", CRONTAB_FILTER)
        if path is None:
            return
        try:
            self.editor.setPlainText(read_text(path))
        except (OSError, TaskguiError) as error:
            self._error(self, "Load Crontab", str(error))
        else:
            self._loaded = (path, self.text())


def read_text(path: str) -> str:
    """The file's text, bounded as the CLI's import reads it (``system.files``)."""
    return read_import_file(path)
