"""The table view of the task list: rows selected whole, sortable, no grid, sized columns."""

from __future__ import annotations

from PySide6.QtCore import QAbstractItemModel, Qt
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView, QWidget

from taskgui.ui.table.task_model import Column

COLUMN_WIDTHS = {
    Column.STATE: 110,
    Column.PRIORITY: 70,
    Column.NEXT_RUN: 190,
    Column.SCHEDULE: 230,
    Column.LAST_RESULT: 200,
    Column.ATTEMPTS: 80,
}


def task_table(model: QAbstractItemModel, parent: QWidget) -> QTableView:
    """A view of ``model`` (the filter proxy); "Name" takes the width that is left."""
    table = QTableView(parent)
    table.setModel(model)
    table.setAccessibleName("Tasks")
    table.setSortingEnabled(True)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
    table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
    table.setAlternatingRowColors(True)
    table.setShowGrid(False)
    table.setWordWrap(False)
    table.verticalHeader().setVisible(False)
    table.verticalHeader().setDefaultSectionSize(table.fontMetrics().height() + 10)
    header = table.horizontalHeader()
    header.setHighlightSections(False)
    header.setStretchLastSection(False)
    header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    header.setSectionResizeMode(Column.NAME, QHeaderView.ResizeMode.Stretch)
    for column, width in COLUMN_WIDTHS.items():
        header.resizeSection(column, width)
    return table
