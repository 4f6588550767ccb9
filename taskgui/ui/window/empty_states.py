"""What the task list shows instead of an empty table: there are no tasks yet, or the
filters hide them all.

An empty table says nothing; these say why it is empty and offer the way out (create a
task, or show everything again).
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QMouseEvent
from PySide6.QtWidgets import QLabel, QPushButton, QVBoxLayout, QWidget

from taskgui.ui.table.state_filter import StateFilter

HINT_MAX_WIDTH = 560
MAX_SEARCH_SHOWN = 40


def _title(text: str, parent: QWidget) -> QLabel:
    title = QLabel(text, parent)
    title.setTextFormat(Qt.TextFormat.PlainText)
    font = title.font()
    font.setPointSizeF(font.pointSizeF() * 1.6)
    font.setBold(True)
    title.setFont(font)
    title.setAlignment(Qt.AlignmentFlag.AlignCenter)
    title.setWordWrap(True)
    return title


def _hint(text: str, parent: QWidget) -> QLabel:
    """A centred paragraph. It spans the page's width (a word-wrapped label given only
    its size hint is cut off), and the page's margins keep its lines short."""
    hint = QLabel(text, parent)
    hint.setTextFormat(Qt.TextFormat.PlainText)
    hint.setWordWrap(True)
    hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
    return hint


def _page(parent: QWidget, *widgets: QWidget) -> QVBoxLayout:
    layout = QVBoxLayout(parent)
    layout.addStretch(2)
    for widget in widgets:
        if isinstance(widget, QPushButton):
            layout.addWidget(widget, 0, Qt.AlignmentFlag.AlignHCenter)
        else:
            layout.addWidget(widget)
    layout.addStretch(3)
    return layout


class EmptyState(QWidget):
    """What a new user sees instead of an empty table: what to do next."""

    def __init__(self, new_action: QAction, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = _title("No tasks yet", self)
        self.hint = _hint(
            "Create a task to run a command once, every few minutes, or on a cron "
            "schedule. Failures are retried with backoff, and nothing is lost if you quit.",
            self,
        )
        self.button = QPushButton(f"New Task  ({new_action.shortcut().toString()})", self)
        self.button.setDefault(True)
        self.button.clicked.connect(new_action.trigger)
        _page(self, self.title, self.hint, self.button)

    def resizeEvent(self, event: object) -> None:  # noqa: N802
        # Short lines read better than a paragraph across a wide window.
        side = max(12, (self.width() - HINT_MAX_WIDTH) // 2)
        layout = self.layout()
        if layout is not None:
            layout.setContentsMargins(side, 12, side, 12)
        super().resizeEvent(event)  # type: ignore[arg-type]

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        self.button.click()


class NoMatches(QWidget):
    """Tasks exist, but the state filter and the search hide every one of them.

    ``show_all`` is pressed to clear both (the window connects it).
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = _title("No matching tasks", self)
        self.hint = _hint("", self)
        self.show_all = QPushButton("Show All Tasks", self)
        _page(self, self.title, self.hint, self.show_all)

    def describe(self, state_filter: StateFilter, search: str) -> None:
        """Say what hides the tasks: the group, the search, or both."""
        group = "" if state_filter is StateFilter.ALL else f"{state_filter.label.lower()} "
        if search:
            shown = search if len(search) <= MAX_SEARCH_SHOWN else search[:MAX_SEARCH_SHOWN] + "…"
            self.title.setText(f"No {group}tasks match “{shown}”")
            self.hint.setText("Check the spelling, or search for part of a name or command.")
        else:
            self.title.setText(f"No {group}tasks")
            self.hint.setText("None of the tasks is in this group now.")
