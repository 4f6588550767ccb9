"""The table view of the task list: rows selected whole, sortable, no grid, sized columns."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QAbstractItemModel, QEvent, QObject, Qt
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QStyle, QTableView, QWidget

from taskgui.runtime.guard import never_raises
from taskgui.ui.table.columns import TaskColumn


class StretchWithFloor(QObject):
    """Gives one column the width the others leave in the viewport, but never less
    than ``min_chars`` average characters of the table's font: below that the table
    scrolls sideways.

    ``QHeaderView``'s Stretch mode has no floor of its own but the minimum section
    size, one for every column: with the Node column shown and a vertical scroll bar,
    a 1,100 px window left the name ~45 px (a trial). This keeps Stretch's feel: the
    column follows the window and the other columns' widths (it is not dragged
    itself, as a stretching one cannot be), and fills exactly what is left, so no
    horizontal scroll bar appears while there is room. The floor is measured in the
    table's font each time, so it follows a change of font or of the screen's DPI.
    """

    def __init__(self, table: QTableView, section: int, min_chars: int) -> None:
        super().__init__(table)
        self._table = table
        # Kept: the filter compares with it, and asking the table for it again fails
        # while the table is being destroyed (its last events still come here).
        self._viewport = table.viewport()
        self._section = section
        self._min_chars = min_chars
        header = table.horizontalHeader()
        header.setSectionResizeMode(section, QHeaderView.ResizeMode.Fixed)
        header.sectionResized.connect(self._on_header_section_resized)
        self._viewport.installEventFilter(self)
        table.installEventFilter(self)
        self.refit()

    def floor(self) -> int:
        """The fewest pixels the column gets: its characters, and a cell's margins."""
        table = self._table
        margin = table.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, table)
        return self._min_chars * table.fontMetrics().averageCharWidth() + 2 * (margin + 1)

    def refit(self) -> None:
        """Size the column to what is left (called on every change that moves it)."""
        header = self._table.horizontalHeader()
        others = sum(
            header.sectionSize(logical)
            for logical in range(header.count())
            if logical != self._section and not header.isSectionHidden(logical)
        )
        width = max(self.floor(), self._viewport.width() - others)
        if header.sectionSize(self._section) != width:
            header.resizeSection(self._section, width)

    @never_raises("sizing the stretching column", default=False)
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        # The viewport narrows when the window does, and when the vertical bar appears;
        # a new font (or DPI) changes the floor.
        kind = event.type()
        if (watched is self._viewport and kind == QEvent.Type.Resize) or (
            watched is self._table and kind == QEvent.Type.FontChange
        ):
            self.refit()
        return super().eventFilter(watched, event)

    @never_raises
    def _on_header_section_resized(self, logical: int, _old: int, _new: int) -> None:
        # Another column dragged, shown (the Node column) or hidden (a size of 0).
        if logical != self._section:
            self.refit()


def task_table(
    model: QAbstractItemModel, columns: Sequence[TaskColumn], parent: QWidget
) -> QTableView:
    """A view of ``model`` (the filter proxy), its header sized as ``columns`` say: the
    column without a width ("Name") takes the width that is left, down to its floor."""
    table = QTableView(parent)
    table.setModel(model)
    table.setAccessibleName("Tasks")
    table.setSortingEnabled(True)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
    table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
    table.setAlternatingRowColors(True)
    table.setShowGrid(False)
    # Rows are picked with the arrows; Tab leaves the table for the next control, as in
    # every list of a desktop app (cell by cell it kept the keyboard in it for ever).
    table.setTabKeyNavigation(False)
    table.setWordWrap(False)
    # A narrow window scrolls the columns sideways (StretchWithFloor): by the pixel, as
    # by the column it would jump past the whole Name column at the first step.
    table.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
    table.verticalHeader().setVisible(False)
    table.verticalHeader().setDefaultSectionSize(table.fontMetrics().height() + 10)
    header = table.horizontalHeader()
    header.setHighlightSections(False)
    header.setStretchLastSection(False)
    header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    for column in columns:
        if column.width is None:
            StretchWithFloor(table, column.column, column.min_chars)
        else:
            header.resizeSection(column.column, column.width)
    return table
