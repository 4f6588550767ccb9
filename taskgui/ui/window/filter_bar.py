"""The bar above the task table: a button per state group with its count, and the search.

The buttons are exclusive (one group at a time) and say how many tasks each shows,
counting only what the search finds while one is typed. Escape in the search box
clears it (a second Escape leaves it for the table).

The bar fits narrow windows: when the buttons and a usable search box do not fit on
one line, the search box moves to a line of its own under the buttons, rather than
being squeezed until its text is cut off.

Signals:
    filter_chosen(object): a StateFilter button was clicked.
    search_left(): Escape in an empty search box: focus should go back to the tasks.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QKeyEvent, QResizeEvent
from PySide6.QtWidgets import (
    QBoxLayout,
    QButtonGroup,
    QHBoxLayout,
    QLineEdit,
    QSizePolicy,
    QToolButton,
    QWidget,
)

from taskgui.ui.table.state_filter import StateFilter

SEARCH_MIN_WIDTH = 260
SEARCH_PLACEHOLDER = "Search name or command  (Ctrl+F)"


class FilterBar(QWidget):
    """State filter buttons and the search box; see the module docstring."""

    filter_chosen = Signal(object)
    search_left = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.buttons: dict[StateFilter, QToolButton] = {}
        group = QButtonGroup(self)
        group.setExclusive(True)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(2)
        for state_filter in StateFilter:
            button = QToolButton(self)
            button.setCheckable(True)
            button.setAutoRaise(True)
            button.setAccessibleName(f"Show {state_filter.label.lower()} tasks")
            button.setToolTip(state_filter.tooltip)
            button.clicked.connect(lambda _=False, f=state_filter: self.filter_chosen.emit(f))
            group.addButton(button)
            row.addWidget(button)
            self.buttons[state_filter] = button
        row.addStretch(1)
        self.buttons[StateFilter.ALL].setChecked(True)
        self.search = QLineEdit(self)
        self.search.setPlaceholderText(SEARCH_PLACEHOLDER)
        self.search.setClearButtonEnabled(True)
        self.search.setAccessibleName("Search tasks")
        self.search.setMinimumWidth(SEARCH_MIN_WIDTH)
        self.search.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.search.installEventFilter(self)
        self._layout = QBoxLayout(QBoxLayout.Direction.LeftToRight, self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.addLayout(row, 1)
        self._layout.addWidget(self.search)
        self._fit(self.width())

    def set_counts(self, counts: dict[StateFilter, int]) -> None:
        for state_filter, button in self.buttons.items():
            button.setText(f"{state_filter.label} ({counts.get(state_filter, 0)})")
        self._fit(self.width())

    def check(self, state_filter: StateFilter) -> None:
        self.buttons[state_filter].setChecked(True)

    @property
    def two_rows(self) -> bool:
        return self._layout.direction() is QBoxLayout.Direction.TopToBottom

    def _fit(self, width: int) -> None:
        """One row when everything fits in ``width``, else the search on a row of its own.

        The minimum width is that of the two-row form, so the window may be made
        narrower than one row needs; the switch happens here, on resize.
        """
        buttons = sum(button.sizeHint().width() + 2 for button in self.buttons.values())
        search = self.search.minimumWidth()
        self.setMinimumWidth(max(buttons, search))
        fits = width >= buttons + self._layout.spacing() + search
        direction = QBoxLayout.Direction.LeftToRight if fits else QBoxLayout.Direction.TopToBottom
        if direction is not self._layout.direction():
            self._layout.setDirection(direction)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        self._fit(event.size().width())
        super().resizeEvent(event)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if (
            watched is self.search
            and event.type() == QEvent.Type.KeyPress
            and isinstance(event, QKeyEvent)
            and event.key() == Qt.Key.Key_Escape
        ):
            if self.search.text():
                self.search.clear()
            else:
                self.search_left.emit()
            return True
        return False
