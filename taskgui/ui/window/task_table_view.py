"""The table view of the task list: rows selected whole, sortable, no grid, sized columns."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QAbstractItemModel, Qt
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView, QWidget

from taskgui.ui.table.columns import TaskColumn


def task_table(
    model: QAbstractItemModel, columns: Sequence[TaskColumn], parent: QWidget
) -> QTableView:
    """A view of ``model`` (the filter proxy), its header sized as ``columns`` say: the
    column without a width ("Name") takes the width that is left."""
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
    for column in columns:
        if column.width is None:
            header.setSectionResizeMode(column.column, QHeaderView.ResizeMode.Stretch)
        else:
            header.resizeSection(column.column, column.width)
    return table
