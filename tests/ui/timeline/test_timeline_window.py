"""The Timeline tab in the real window over a real scheduler: lanes are the table's
rows, selection goes both ways, runs appear with their outcome, a double click on
empty time opens New Task at that time, and dragging a one-off reschedules it."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QImage, QPainter
from pytestqt.qtbot import QtBot

from taskgui.core.clock import SystemClock
from taskgui.core.duration import format_duration
from taskgui.core.recurrence import Every
from taskgui.core.retry import RetryPolicy
from taskgui.core.states import RunOutcome, TaskState
from taskgui.core.task import Command, TaskSpec
from taskgui.runtime.service import SchedulerService
from taskgui.store.sqlite.repository import SqliteRepository
from taskgui.ui.table.formatting import local_time_text
from taskgui.ui.task_dialog.dialog import TaskDialog
from taskgui.ui.timeline.painting import HEADER_HEIGHT, LABEL_WIDTH, LANE_HEIGHT
from taskgui.ui.timeline.view import TimelineView
from taskgui.ui.window.main_window import MainWindow
from tests.ui.window.test_main_window import Confirmations, wait_state, when_dialog_opens

CLOCK = SystemClock()
pytestmark = pytest.mark.qt_log_ignore("This plugin does not support raise")


@pytest.fixture
def window(tmp_path: Path, qtbot: QtBot) -> Iterator[MainWindow]:
    repository = SqliteRepository(tmp_path / "timeline.sqlite3")
    service = SchedulerService(repository, CLOCK, workers=2, kill_grace=0.3)
    service.start()
    main = MainWindow(service, CLOCK, location=str(tmp_path), confirm=Confirmations())
    qtbot.addWidget(main)
    main.resize(1100, 650)
    main.show()
    main.timeline.show()
    qtbot.waitExposed(main)
    yield main
    main.close()
    with qtbot.waitSignal(service.stopped, timeout=10_000):
        service.shutdown(grace=0.0)
    service.pool.wait_for_done(5_000)
    repository.close()


def spec(name: str, line: str = "true", **fields: object) -> TaskSpec:
    values: dict[str, object] = {
        "name": name,
        "command": Command(line=line),
        "first_run_at": CLOCK.now() + timedelta(hours=1),
    }
    values.update(fields)
    return TaskSpec(**values)  # type: ignore[arg-type]


def next_run(window: MainWindow, task_id: int) -> datetime:
    moment = window.service.task(task_id).status.next_run_at
    assert moment is not None
    return moment


def lane_point(view: TimelineView, lane: int, x: float) -> QPoint:
    return QPoint(int(x), HEADER_HEIGHT + lane * LANE_HEIGHT + LANE_HEIGHT // 2)


def test_lanes_follow_the_table_and_selection_goes_both_ways(
    window: MainWindow, qtbot: QtBot
) -> None:
    view = window.timeline.view
    first = window.service.add_task(spec("First"))
    second = window.service.add_task(spec("Second"))
    window.model.flush_pending()
    qtbot.waitUntil(lambda: view.lanes.lane_count() == 2, timeout=5_000)
    window.select_task(second.id)
    assert view.selected == second.id
    lane = view.lanes.lane_of(first.id)
    assert lane is not None
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=lane_point(view, lane, 200))
    assert [task.id for task in window.selected_tasks()] == [first.id]
    window.search.setText("Second")  # a filter of the table filters the lanes too
    qtbot.waitUntil(lambda: view.lanes.lane_count() == 1, timeout=5_000)


def test_finished_runs_show_with_their_outcome_and_the_paint_is_for_the_view_only(
    window: MainWindow, qtbot: QtBot
) -> None:
    view = window.timeline.view
    ok = window.service.add_task(spec("Works", first_run_at=CLOCK.now()))
    bad = window.service.add_task(
        spec("Breaks", "exit 3", first_run_at=CLOCK.now(), retry=RetryPolicy.no_retry())
    )
    wait_state(qtbot, window, ok.id, TaskState.SUCCEEDED)
    wait_state(qtbot, window, bad.id, TaskState.EXHAUSTED)
    view.show_span("hours")
    outcomes = {
        snap.spec.name: [b.outcome for b in view._bars(snap, CLOCK.now())]
        for lane in range(view.lanes.lane_count())
        if (snap := view.lanes.snapshot_at(lane)) is not None
    }
    assert outcomes["Works"] == [RunOutcome.SUCCEEDED]
    assert outcomes["Breaks"] == [RunOutcome.FAILED]
    image = QImage(view.viewport().size(), QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    view.paint(painter)
    painter.end()
    assert view.lanes_painted == 2
    lane = view.lanes.lane_of(bad.id)
    assert lane is not None
    hit = view.hit(lane_point(view, lane, view._x(CLOCK.now() - timedelta(seconds=1)) - 1))
    assert hit is not None and hit.bar is not None
    assert "failed" in view.describe(hit)
    # The run's length in the one duration format (core.duration), as the table has it.
    took = format_duration(hit.bar.end - hit.bar.start)
    assert f"{local_time_text(hit.bar.start)}, {took}" in view.describe(hit).splitlines()


def test_a_double_click_on_empty_time_opens_new_task_at_that_time(
    window: MainWindow, qtbot: QtBot
) -> None:
    view = window.timeline.view
    view.show_span("day")
    x = LABEL_WIDTH + view.time_width * 0.75
    wanted = view.time_at(x)

    def fill(dialog: TaskDialog) -> None:
        qtbot.keyClicks(dialog.name, "At that time")
        qtbot.keyClicks(dialog.command, "true")
        assert dialog.ok_button.isEnabled(), dialog.problems()
        qtbot.mouseClick(dialog.ok_button, Qt.MouseButton.LeftButton)

    when_dialog_opens(qtbot, fill)
    qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(int(x), 400))
    qtbot.waitUntil(lambda: window.model.rowCount() == 1, timeout=5_000)
    (task_id,) = window.model.task_ids()
    first = window.service.task(task_id).spec.first_run_at
    assert abs((first - wanted).total_seconds()) <= 60  # the field shows whole minutes


def test_dragging_a_one_off_mark_reschedules_it(window: MainWindow, qtbot: QtBot) -> None:
    view = window.timeline.view
    task = window.service.add_task(spec("Once"))
    window.model.flush_pending()
    qtbot.waitUntil(lambda: view.lanes.lane_count() == 1, timeout=5_000)
    view.show_span("hours")
    lane = view.lanes.lane_of(task.id)
    assert lane is not None
    start = lane_point(view, lane, view._x(next_run(window, task.id)) + 1)
    end = QPoint(start.x() + 120, start.y())
    moved = view.time_at(end.x()) - view.time_at(start.x())
    before = next_run(window, task.id)
    qtbot.mousePress(view.viewport(), Qt.MouseButton.LeftButton, pos=start)
    qtbot.mouseMove(view.viewport(), QPoint(start.x() + 60, start.y()))
    qtbot.mouseMove(view.viewport(), end)
    qtbot.mouseRelease(view.viewport(), Qt.MouseButton.LeftButton, pos=end)
    qtbot.waitUntil(
        lambda: abs((next_run(window, task.id) - (before + moved)).total_seconds()) < 1,
        timeout=5_000,
    )


def test_a_recurring_task_s_mark_does_not_drag(window: MainWindow, qtbot: QtBot) -> None:
    view = window.timeline.view
    task = window.service.add_task(spec("Hourly", recurrence=Every(timedelta(hours=1))))
    window.model.flush_pending()
    qtbot.waitUntil(lambda: view.lanes.lane_count() == 1, timeout=5_000)
    view.show_span("hours")
    before = next_run(window, task.id)
    start = lane_point(view, 0, view._x(before) + 1)
    qtbot.mousePress(view.viewport(), Qt.MouseButton.LeftButton, pos=start)
    qtbot.mouseMove(view.viewport(), QPoint(start.x() + 100, start.y()))
    qtbot.mouseRelease(
        view.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(start.x() + 100, start.y())
    )
    assert next_run(window, task.id) == before


def test_keys_zoom_scroll_and_come_back_to_now(window: MainWindow, qtbot: QtBot) -> None:
    view = window.timeline.view
    view.setFocus()
    spp = view.scale.seconds_per_px
    qtbot.keyClick(view, Qt.Key.Key_Plus)
    assert view.scale.seconds_per_px < spp
    qtbot.keyClick(view, Qt.Key.Key_Minus)
    assert abs(view.scale.seconds_per_px - spp) < 1e-6
    start = view.scale.start
    qtbot.keyClick(view, Qt.Key.Key_Right)
    assert view.scale.start > start
    qtbot.keyClick(view, Qt.Key.Key_Home)
    x_now = view._x(CLOCK.now())
    assert abs(x_now - (LABEL_WIDTH + view.time_width / 4)) < 5


def test_a_hostile_name_is_drawn_and_described_as_text(window: MainWindow, qtbot: QtBot) -> None:
    view = window.timeline.view
    name = "<img src=/dev/zero><b>x</b>"
    task = window.service.add_task(spec(name))
    window.model.flush_pending()
    qtbot.waitUntil(lambda: view.lanes.lane_count() == 1, timeout=5_000)
    hit = view.hit(lane_point(view, 0, LABEL_WIDTH + 5))
    assert hit is not None and hit.task_id == task.id
    assert view.describe(hit).startswith(name)


def test_a_name_with_a_line_break_is_one_line_in_its_lane_and_its_tooltip(
    window: MainWindow, qtbot: QtBot
) -> None:
    """The lane's label and the hover text's first line are the name on one line,
    written as ``taskgui list`` does (the break wrapped the label onto the lane)."""
    view = window.timeline.view
    task = window.service.add_task(spec("tab\there\nnext"))
    window.model.flush_pending()
    qtbot.waitUntil(lambda: view.lanes.lane_count() == 1, timeout=5_000)
    hit = view.hit(lane_point(view, 0, LABEL_WIDTH + 5))
    assert hit is not None and hit.task_id == task.id
    assert view.describe(hit).splitlines()[0] == "tab\\there\\nnext"


def test_a_failure_in_drawing_or_following_is_logged_and_the_window_goes_on(
    window: MainWindow,
    qtbot: QtBot,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    view = window.timeline.view
    task = window.service.add_task(spec("Drawn"))

    def broken(*_args: object) -> None:
        raise RuntimeError("broken on purpose")

    monkeypatch.setattr(view, "paint", broken)
    monkeypatch.setattr(view, "refresh", broken)
    with caplog.at_level("ERROR"):
        view.viewport().repaint()  # a paint event through Qt: the painter is still ended
        view.on_lanes_changed()
        window.select_task(task.id)
    assert "drawing the timeline failed" in caplog.text
    assert "refreshing the timeline failed" in caplog.text
    monkeypatch.undo()
    view.refresh()
    assert view.lanes.lane_of(task.id) is not None  # still following the table
