"""The countdown ticker refreshes what is on screen, never the whole table.

A real ``QTableView`` is shown (offscreen) over 10,000 tasks with a small viewport;
the test counts the rows the model announces per tick.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTableView
from pytestqt.qtbot import QtBot

from taskgui.core.clock import FakeClock
from taskgui.core.status import TaskSnapshot, TaskStatus
from taskgui.core.task import Command, TaskSpec
from taskgui.ui.table.countdown import CountdownTicker
from taskgui.ui.table.task_filter import StateFilter, TaskFilterProxy
from taskgui.ui.table.task_model import Column, TaskTableModel

# The offscreen platform says this for every shown window with a layout; it is about
# the test platform, not the table.
pytestmark = pytest.mark.qt_log_ignore(r"This plugin does not support propagateSizeHints\(\)")

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
TASKS = 10_000


def many(count: int) -> list[TaskSnapshot]:
    """Tasks whose run times run backwards, so sorting by next run reverses the rows."""
    command = Command(line="true")
    return [
        TaskSnapshot(
            TaskSpec(id=i, name=f"task {i}", command=command, first_run_at=T0),
            TaskStatus(next_run_at=T0 + timedelta(seconds=count - i + 1)),
        )
        for i in range(1, count + 1)
    ]


class Table:
    def __init__(self, qtbot: QtBot, count: int, *, by_next_run: bool = False) -> None:
        self.model = TaskTableModel(FakeClock(T0))
        self.model.reset_tasks(many(count), {})
        self.proxy = TaskFilterProxy()
        self.proxy.setSourceModel(self.model)
        self.view = QTableView()
        qtbot.addWidget(self.view)
        self.view.setModel(self.proxy)
        if by_next_run:  # sorting 10,000 rows through Python keys takes a second
            self.view.setSortingEnabled(True)
            self.view.sortByColumn(Column.NEXT_RUN, Qt.SortOrder.AscendingOrder)
        self.view.resize(500, 200)
        self.view.show()
        qtbot.waitExposed(self.view)
        self.ticker = CountdownTicker(self.view, self.proxy, self.model)
        self.refreshed: list[tuple[int, int, int]] = []  # first row, last row, column
        self.model.dataChanged.connect(
            lambda tl, br, _roles: self.refreshed.append((tl.row(), br.row(), tl.column()))
        )

    def visible_proxy_rows(self) -> range:
        first = self.view.rowAt(0)
        last = self.view.rowAt(self.view.viewport().height() - 1)
        return range(first, (last if last >= 0 else self.proxy.rowCount() - 1) + 1)

    def refreshed_rows(self) -> list[int]:
        """Rows whose countdown was refreshed (their "Last result" goes with it)."""
        return sorted(
            row
            for first, last, column in self.refreshed
            if column == Column.NEXT_RUN
            for row in range(first, last + 1)
        )


@pytest.fixture
def table(qtbot: QtBot) -> Iterator[Table]:
    table = Table(qtbot, TASKS)
    yield table
    table.ticker.stop()


@pytest.fixture
def sorted_table(qtbot: QtBot) -> Iterator[Table]:
    table = Table(qtbot, TASKS, by_next_run=True)
    yield table
    table.ticker.stop()


def test_one_tick_refreshes_only_the_visible_rows(sorted_table: Table) -> None:
    table = sorted_table
    visible = table.visible_proxy_rows()
    assert 0 < len(visible) < 30  # a small viewport over 10,000 rows

    assert table.ticker.tick() == len(visible)

    refreshed = table.refreshed_rows()
    assert len(refreshed) == len(visible)
    assert {column for *_, column in table.refreshed} == {Column.NEXT_RUN, Column.LAST_RESULT}
    expected = sorted(table.proxy.mapToSource(table.proxy.index(r, 0)).row() for r in visible)
    assert refreshed == expected
    # Sorted by next run, the first rows on screen are the last source rows.
    assert refreshed[-1] == TASKS - 1


def test_after_scrolling_the_tick_follows_the_viewport(sorted_table: Table) -> None:
    table = sorted_table
    table.view.scrollTo(table.proxy.index(5_000, 0), QTableView.ScrollHint.PositionAtTop)
    visible = table.visible_proxy_rows()
    assert visible.start >= 4_990

    table.ticker.tick()

    assert len(table.refreshed_rows()) == len(visible)
    source = {table.proxy.mapToSource(table.proxy.index(r, 0)).row() for r in visible}
    assert set(table.refreshed_rows()) == source


def test_a_short_table_refreshes_every_row(qtbot: QtBot) -> None:
    table = Table(qtbot, 3)  # rowAt(bottom) is -1: the rows end above it
    assert table.ticker.tick() == 3
    assert table.refreshed_rows() == [0, 1, 2]


def test_filtered_out_rows_are_not_refreshed(table: Table) -> None:
    table.proxy.set_state_filter(StateFilter.RUNNING)  # none running
    assert table.ticker.tick() == 0
    assert table.refreshed == []


def test_a_hidden_view_costs_nothing(table: Table) -> None:
    table.view.hide()
    assert table.ticker.tick() == 0
    assert table.refreshed == []


def test_ago_texts_are_refreshed_with_every_countdown(table: Table) -> None:
    table.ticker.tick()
    columns = [column for *_, column in table.refreshed]
    assert columns.count(Column.LAST_RESULT) == columns.count(Column.NEXT_RUN) >= 1


def test_the_timer_drives_the_ticks(qtbot: QtBot) -> None:
    table = Table(qtbot, 50)
    ticker = CountdownTicker(table.view, table.proxy, table.model, interval_ms=10)
    ticker.start()
    assert ticker.is_active
    with qtbot.waitSignal(table.model.dataChanged, timeout=2000):
        pass
    ticker.stop()
    assert not ticker.is_active
