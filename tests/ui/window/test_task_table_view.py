"""The task table's header: Name takes what the other columns leave, down to a floor.

A trial: with the Node column shown (a shared schedule) and a vertical scroll bar, the
Name column, the only stretching one, was ~45 px at a 1,100 px window. It now keeps at
least 16 average characters of the table's font, and the table scrolls sideways instead.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtWidgets import QHeaderView, QTableView, QVBoxLayout, QWidget
from pytestqt.qtbot import QtBot

from taskgui.core.states import TaskState
from taskgui.core.status import TaskSnapshot, TaskStatus
from taskgui.ui.table.columns import Column
from taskgui.ui.table.task_filter import TaskFilterProxy
from taskgui.ui.table.task_model import TaskTableModel
from taskgui.ui.window.task_table_view import task_table
from tests.helpers.factories import at, make_spec

# The offscreen platform says this whenever a shown window's size limits change.
pytestmark = pytest.mark.qt_log_ignore(r"This plugin does not support propagateSizeHints\(\)")

ROWS = 60  # more than a 500 px high window shows: the vertical scroll bar is there


class Page:
    """A window holding the task table, as the main window's central widget holds it."""

    def __init__(self, qtbot: QtBot, model: TaskTableModel, proxy: TaskFilterProxy) -> None:
        self.window = QWidget()
        qtbot.addWidget(self.window)
        self.table: QTableView = task_table(proxy, model.columns, self.window)
        self.table.setColumnHidden(Column.NODE, True)  # as TaskList has it: a file's schedule
        QVBoxLayout(self.window).addWidget(self.table)
        model.reset_tasks(
            [
                TaskSnapshot(
                    make_spec(task_id, name=f"Nightly backup of project {task_id}"),
                    TaskStatus(state=TaskState.PENDING, next_run_at=at(60), nodes=("n@host",)),
                )
                for task_id in range(1, ROWS + 1)
            ],
            {},
        )
        self.window.resize(1_100, 500)
        self.window.show()
        qtbot.waitExposed(self.window)

    @property
    def header(self) -> QHeaderView:
        return self.table.horizontalHeader()

    def name_width(self) -> int:
        return self.header.sectionSize(Column.NAME)

    def columns_width(self) -> int:
        """What the shown columns take side by side."""
        return sum(
            self.header.sectionSize(column)
            for column in Column
            if not self.header.isSectionHidden(column)
        )

    def floor(self) -> int:
        """16 average characters of the table's own font."""
        return 16 * self.table.fontMetrics().averageCharWidth()


@pytest.fixture
def page(qtbot: QtBot, model: TaskTableModel, proxy: TaskFilterProxy) -> Iterator[Page]:
    page = Page(qtbot, model, proxy)
    yield page
    page.window.close()


def test_at_1100_px_with_the_node_column_and_a_scroll_bar_the_name_keeps_its_floor(
    qtbot: QtBot, page: Page
) -> None:
    page.table.setColumnHidden(Column.NODE, False)  # a shared schedule's window
    qtbot.waitUntil(lambda: page.table.verticalScrollBar().isVisible())
    assert page.name_width() >= page.floor()
    # Too little room for all: the columns scroll sideways, by the pixel, all of them
    # at the widths they had.
    viewport = page.table.viewport().width()
    bar = page.table.horizontalScrollBar()
    qtbot.waitUntil(bar.isVisible)
    assert bar.maximum() == page.columns_width() - viewport
    assert page.header.sectionSize(Column.NODE) == 140
    bar.setValue(bar.maximum())
    assert page.header.offset() == bar.maximum()  # the header goes along


def test_with_room_to_spare_the_name_fills_exactly_what_is_left(qtbot: QtBot, page: Page) -> None:
    page.table.setColumnHidden(Column.NODE, False)
    page.window.resize(1_600, 500)
    qtbot.waitUntil(lambda: not page.table.horizontalScrollBar().isVisible())
    assert page.columns_width() == page.table.viewport().width()
    with_node = page.name_width()
    page.table.setColumnHidden(Column.NODE, True)  # the Node column's room goes to Name
    assert page.name_width() == with_node + 140
    assert page.columns_width() == page.table.viewport().width()


def test_widening_another_column_narrows_the_name_down_to_its_floor_only(
    qtbot: QtBot, page: Page
) -> None:
    qtbot.waitUntil(lambda: page.columns_width() == page.table.viewport().width())
    before = page.name_width()
    page.header.resizeSection(Column.SCHEDULE, 230 + 50)  # as a drag of its edge does
    assert page.name_width() == before - 50
    page.header.resizeSection(Column.SCHEDULE, 2_000)
    assert page.name_width() >= page.floor()
