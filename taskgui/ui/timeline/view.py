"""The timeline widget: time across, a lane per task, drawn for what is in view only.

Each paint reads the lanes in view from a ``LaneSource`` (the table's proxy, so the
filters and the sort order are the table's), their finished runs from a ``RunCache``,
and their occurrences in the visible span from ``lanes.upcoming``; nothing is done for
the lanes scrolled away, so the cost of a paint follows the window's size, not the
schedule's (``benchmarks/bench_timeline.py`` measures it).

Mouse and keyboard: the wheel scrolls the lanes, Shift+wheel (or a sideways wheel)
scrolls time, Ctrl+wheel zooms around the pointer; + and - zoom, Left and Right
scroll time, Up and Down move the selection, Home brings now back. A click selects
a lane's task; a double click on empty time, or a click below the last lane, asks for
a new task at that time; a one-off task's upcoming mark can be dragged to another
time. Hovering shows what is under the pointer, as plain text.

Signals:
    task_selected(int): a lane was clicked (the table selects the task).
    new_task_requested(object): a datetime (aware) at which to create a task.
    reschedule_requested(int, object): a one-off task dragged to a new first run time.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from PySide6.QtCore import QPoint, QPointF, QRect, Qt, QTimer, Signal
from PySide6.QtGui import (
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPalette,
    QPen,
    QResizeEvent,
    QWheelEvent,
)
from PySide6.QtWidgets import QAbstractScrollArea, QToolTip, QWidget

from taskgui.core.clock import Clock
from taskgui.core.duration import format_duration
from taskgui.core.recurrence import Once
from taskgui.core.status import TaskSnapshot
from taskgui.core.task import TaskId
from taskgui.runtime.guard import never_raises
from taskgui.ui.plain_text import left_to_right, plain_tooltip, shown, shown_lines
from taskgui.ui.table.formatting import local_time_text, outcome_text
from taskgui.ui.timeline.lanes import Bar, bars_of, expected_duration, upcoming
from taskgui.ui.timeline.painting import (
    DRAG_THRESHOLD,
    HEADER_HEIGHT,
    LABEL_WIDTH,
    LANE_HEIGHT,
    MIN_MARK_PX,
    NOW_COLOR,
    TICK_MS,
    ZOOM_STEP,
    paint_header,
    paint_lane,
)
from taskgui.ui.timeline.runs import RunCache
from taskgui.ui.timeline.scale import PRESETS, TimeScale


class LaneSource(Protocol):
    """The tasks, in lane order."""

    def lane_count(self) -> int: ...

    def snapshot_at(self, lane: int) -> TaskSnapshot | None: ...

    def lane_of(self, task_id: TaskId) -> int | None: ...


@dataclass(frozen=True, slots=True)
class Hit:
    """What is under a point: a lane (its task), and the bar or mark there, if any."""

    lane: int
    task_id: TaskId
    at: datetime
    bar: Bar | None = None
    mark: datetime | None = None


class TimelineView(QAbstractScrollArea):
    """See the module docstring."""

    task_selected = Signal(int)
    new_task_requested = Signal(object)
    reschedule_requested = Signal(int, object)

    def __init__(
        self,
        lanes: LaneSource,
        runs: RunCache,
        clock: Clock,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("timeline")
        self.setAccessibleName("Timeline")
        self.lanes = lanes
        self.runs = runs
        self._clock = clock
        self.scale = TimeScale.showing(PRESETS["day"], 800, clock.now()).centred_on(
            clock.now(), 800
        )
        self.selected: TaskId | None = None
        self._press: QPoint | None = None
        self._drag: tuple[TaskId, datetime] | None = None  # task, its new time
        self._drag_to: datetime | None = None
        self.lanes_painted = 0  # for tests and the benchmark: lanes the last paint drew
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.viewport().setMouseTracking(True)
        self.verticalScrollBar().setSingleStep(LANE_HEIGHT)
        self._timer = QTimer(self)
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self._on_timer_timeout)
        self._timer.start()
        self.refresh()

    # -------------------------------------------------------------- geometry

    @property
    def time_width(self) -> int:
        return max(1, self.viewport().width() - LABEL_WIDTH)

    def show_span(self, name: str) -> None:
        """Hours, a day or a week across, with now a quarter of the way in."""
        self.scale = TimeScale.showing(PRESETS[name], self.time_width, self._clock.now())
        self.go_to_now()

    def go_to_now(self) -> None:
        self.scale = self.scale.centred_on(self._clock.now(), self.time_width)
        self.viewport().update()

    def zoom(self, factor: float, anchor_x: float | None = None) -> None:
        anchor = self.time_width / 2 if anchor_x is None else anchor_x
        self.scale = self.scale.zoomed(factor, anchor)
        self.viewport().update()

    def scroll_time(self, dx_px: float) -> None:
        self.scale = self.scale.scrolled(dx_px)
        self.viewport().update()

    def refresh(self) -> None:
        """The lanes changed (tasks added, removed, filtered, sorted): repaint."""
        count = self.lanes.lane_count()
        visible = max(0, self.viewport().height() - HEADER_HEIGHT)
        bar = self.verticalScrollBar()
        bar.setRange(0, max(0, count * LANE_HEIGHT - visible))
        bar.setPageStep(max(LANE_HEIGHT, visible))
        self.viewport().update()

    @never_raises("refreshing the timeline")
    def on_lanes_changed(self, *_args: object) -> None:
        """A slot for the lane source's model signals."""
        self.refresh()

    def lane_rows(self) -> range:
        """The lanes in view, by index."""
        first = self.verticalScrollBar().value() // LANE_HEIGHT
        shown = (self.viewport().height() - HEADER_HEIGHT) // LANE_HEIGHT + 2
        return range(first, min(self.lanes.lane_count(), first + shown))

    def _lane_top(self, lane: int) -> int:
        return HEADER_HEIGHT + lane * LANE_HEIGHT - self.verticalScrollBar().value()

    def _lane_at(self, y: int) -> int | None:
        if y < HEADER_HEIGHT:
            return None
        lane = (y - HEADER_HEIGHT + self.verticalScrollBar().value()) // LANE_HEIGHT
        return lane if 0 <= lane < self.lanes.lane_count() else None

    def _x(self, moment: datetime) -> float:
        return LABEL_WIDTH + self.scale.x_of(moment)

    def time_at(self, x: float) -> datetime:
        return self.scale.time_at(x - LABEL_WIDTH)

    def set_selected(self, task_id: TaskId | None) -> None:
        """Follow the table's selection: highlight the lane and bring it into view."""
        if task_id == self.selected:
            return
        self.selected = task_id
        lane = self.lanes.lane_of(task_id) if task_id is not None else None
        if lane is not None:
            top = lane * LANE_HEIGHT
            bar = self.verticalScrollBar()
            visible = self.viewport().height() - HEADER_HEIGHT - LANE_HEIGHT
            if top < bar.value():
                bar.setValue(top)
            elif top > bar.value() + visible:
                bar.setValue(top - visible)
        self.viewport().update()

    # ---------------------------------------------------------------- content

    def _max_marks(self) -> int:
        return max(32, self.time_width // MIN_MARK_PX)

    def hit(self, point: QPoint) -> Hit | None:
        """The lane, and the run or occurrence, under ``point`` (viewport coordinates)."""
        lane = self._lane_at(point.y())
        if lane is None or point.x() < LABEL_WIDTH:
            return None
        snapshot = self.lanes.snapshot_at(lane)
        if snapshot is None:
            return None
        at = self.time_at(point.x())
        slack = timedelta(seconds=MIN_MARK_PX * self.scale.seconds_per_px)
        now = self._clock.now()
        for bar in self._bars(snapshot, now):
            if bar.start - slack <= at <= bar.end + slack:
                return Hit(lane, snapshot.id, at, bar=bar)
        start, end = self.scale.start, self.scale.end(self.time_width)
        found = upcoming(snapshot, start, end, self._max_marks())
        expected = expected_duration(self.runs.runs_of(snapshot.id)) or timedelta(0)
        for mark in found.marks:
            if mark - slack <= at <= mark + max(expected, slack):
                return Hit(lane, snapshot.id, at, mark=mark)
        return Hit(lane, snapshot.id, at)

    def _bars(self, snapshot: TaskSnapshot, now: datetime) -> list[Bar]:
        start, end = self.scale.start, self.scale.end(self.time_width)
        bars = bars_of(self.runs.runs_of(snapshot.id), start, end, now)
        since = snapshot.status.running_since
        if since is not None and not any(bar.outcome is None for bar in bars):
            bars.append(Bar(start=since, end=now, outcome=None))
        return bars

    def describe(self, hit: Hit) -> str:
        """The hover text for ``hit``: plain, for a tooltip."""
        snapshot = self.lanes.snapshot_at(hit.lane)
        name = shown(snapshot.spec.name) if snapshot is not None else ""
        if hit.bar is not None:
            bar = hit.bar
            took = format_duration(bar.end - bar.start)
            what = "running" if bar.outcome is None else outcome_text(bar.outcome)
            text = f"{name}\nattempt {bar.attempt}: {what}\n{local_time_text(bar.start)}, {took}"
            return text + (f"\n{shown_lines(bar.error)}" if bar.error else "")
        if hit.mark is not None:
            expected = expected_duration(self.runs.runs_of(hit.task_id))
            text = f"{name}\nnext run {local_time_text(hit.mark)}"
            if expected is not None:
                text += f"\nusually takes {format_duration(expected)}"
            return text
        return f"{name}\n{local_time_text(hit.at)}"

    # ---------------------------------------------------------------- painting

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        painter = QPainter(self.viewport())
        try:
            self._paint_guarded(painter)
        finally:
            painter.end()

    @never_raises("drawing the timeline")
    def _paint_guarded(self, painter: QPainter) -> None:
        self.paint(painter)

    def paint(self, painter: QPainter) -> None:
        """Everything in view, onto ``painter`` (the benchmark paints into an image)."""
        rect = self.viewport().rect()
        palette = self.palette()
        painter.fillRect(rect, palette.color(QPalette.ColorRole.Base))
        now = self._clock.now()
        start, end = self.scale.start, self.scale.end(self.time_width)
        max_marks = self._max_marks()
        painted = 0
        painter.setClipRect(QRect(0, HEADER_HEIGHT, rect.width(), rect.height()))
        for lane in self.lane_rows():
            snapshot = self.lanes.snapshot_at(lane)
            if snapshot is None:
                continue
            painted += 1
            paint_lane(
                self, painter, lane, snapshot, now=now, start=start, end=end, max_marks=max_marks
            )
        painter.setClipping(False)
        self.lanes_painted = painted
        paint_header(self, painter, rect)
        x_now = self._x(now)
        if LABEL_WIDTH <= x_now <= rect.width():
            painter.setPen(QPen(NOW_COLOR, 2))
            painter.drawLine(QPointF(x_now, 0), QPointF(x_now, rect.height()))

    # ------------------------------------------------------------------ input

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        self.refresh()

    def scrollContentsBy(self, dx: int, dy: int) -> None:  # noqa: N802
        self.viewport().update()

    def wheelEvent(self, event: QWheelEvent) -> None:  # noqa: N802
        delta = event.angleDelta()
        modifiers = event.modifiers()
        if modifiers & Qt.KeyboardModifier.ControlModifier:
            steps = delta.y() / 120
            self.zoom(ZOOM_STEP**steps, event.position().x() - LABEL_WIDTH)
        elif modifiers & Qt.KeyboardModifier.ShiftModifier or delta.x():
            amount = delta.x() or delta.y()
            self.scroll_time(-amount / 120 * self.time_width / 10)
        else:
            super().wheelEvent(event)
            return
        event.accept()

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        key = event.key()
        if key in (Qt.Key.Key_Plus, Qt.Key.Key_Equal):
            self.zoom(ZOOM_STEP)
        elif key == Qt.Key.Key_Minus:
            self.zoom(1 / ZOOM_STEP)
        elif key == Qt.Key.Key_Left:
            self.scroll_time(-self.time_width / 8)
        elif key == Qt.Key.Key_Right:
            self.scroll_time(self.time_width / 8)
        elif key == Qt.Key.Key_Home:
            self.go_to_now()
        elif key in (Qt.Key.Key_Up, Qt.Key.Key_Down):
            self._move_selection(-1 if key == Qt.Key.Key_Up else 1)
        else:
            super().keyPressEvent(event)
            return
        event.accept()

    def _move_selection(self, step: int) -> None:
        lane = self.lanes.lane_of(self.selected) if self.selected is not None else None
        target = 0 if lane is None else min(max(lane + step, 0), self.lanes.lane_count() - 1)
        snapshot = self.lanes.snapshot_at(target)
        if snapshot is not None:
            self.set_selected(snapshot.id)
            self.task_selected.emit(snapshot.id)

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if event.button() != Qt.MouseButton.LeftButton:
            return
        point = event.position().toPoint()
        self._press = point
        hit = self.hit(point)
        if hit is not None and hit.mark is not None:
            snapshot = self.lanes.snapshot_at(hit.lane)
            if snapshot is not None and isinstance(snapshot.spec.recurrence, Once):
                self._drag = (hit.task_id, hit.mark)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        point = event.position().toPoint()
        if self._drag is not None and self._press is not None:
            if abs(point.x() - self._press.x()) >= DRAG_THRESHOLD:
                mark = self._drag[1]
                self._drag_to = mark + (self.time_at(point.x()) - self.time_at(self._press.x()))
                self.viewport().update()
            return
        hit = self.hit(point)
        if hit is None:
            QToolTip.hideText()
            return
        QToolTip.showText(
            event.globalPosition().toPoint(),
            plain_tooltip(left_to_right(self.describe(hit))),
            self.viewport(),
        )

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if event.button() != Qt.MouseButton.LeftButton or self._press is None:
            return
        point = event.position().toPoint()
        drag, moved_to = self._drag, self._drag_to
        self._press = self._drag = self._drag_to = None
        if drag is not None and moved_to is not None:
            self.reschedule_requested.emit(drag[0], moved_to)
            self.viewport().update()
            return
        lane = self._lane_at(point.y())
        if lane is None:
            if point.y() >= HEADER_HEIGHT and point.x() >= LABEL_WIDTH:
                self.new_task_requested.emit(self.time_at(point.x()))  # below the last lane
            return
        snapshot = self.lanes.snapshot_at(lane)
        if snapshot is not None:
            self.set_selected(snapshot.id)
            self.task_selected.emit(snapshot.id)

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        point = event.position().toPoint()
        if point.x() < LABEL_WIDTH or point.y() < HEADER_HEIGHT:
            return
        hit = self.hit(point)
        if hit is None or (hit.bar is None and hit.mark is None):
            self.new_task_requested.emit(self.time_at(point.x()))

    def _on_timer_timeout(self) -> None:
        """The now line moves and running bars grow: repaint while now is in view."""
        x_now = self._x(self._clock.now())
        if LABEL_WIDTH - 5 <= x_now <= self.viewport().width() + 5:
            self.viewport().update()
