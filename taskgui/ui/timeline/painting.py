"""Drawing the timeline: one lane (its runs, its occurrences), and the time axis.

Apart from the widget so each stays small; these functions read the view's geometry
and caches and draw with ``painter``, nothing else.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from PySide6.QtCore import QPointF, QRect, QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPalette, QPen

from taskgui.core.states import RunOutcome
from taskgui.core.status import TaskSnapshot
from taskgui.ui.plain_text import shown
from taskgui.ui.timeline.lanes import expected_duration, upcoming

if TYPE_CHECKING:
    from taskgui.ui.timeline.view import TimelineView

LANE_HEIGHT = 24
HEADER_HEIGHT = 26
LABEL_WIDTH = 180
MIN_MARK_PX = 3
TICK_MS = 1_000
DRAG_THRESHOLD = 4
ZOOM_STEP = 1.25

OUTCOME_COLORS = {
    RunOutcome.SUCCEEDED: QColor("#2e9d4d"),
    RunOutcome.FAILED: QColor("#d0393e"),
    RunOutcome.TIMED_OUT: QColor("#b5287a"),
    RunOutcome.INTERRUPTED: QColor("#e08a1e"),
    RunOutcome.CANCELLED: QColor("#8a8a8a"),
    RunOutcome.STOPPED: QColor("#a0a040"),
}
RUNNING_COLOR = QColor("#2f7fd6")
MARK_COLOR = QColor("#6b7fa6")
NOW_COLOR = QColor("#e0245e")


def paint_lane(
    view: TimelineView,
    painter: QPainter,
    lane: int,
    snapshot: TaskSnapshot,
    *,
    now: datetime,
    start: datetime,
    end: datetime,
    max_marks: int,
) -> None:
    top = view._lane_top(lane)
    width = view.viewport().width()
    palette = view.palette()
    if snapshot.id == view.selected:
        painter.fillRect(
            QRect(0, top, width, LANE_HEIGHT),
            palette.color(QPalette.ColorRole.Highlight).lighter(170),
        )
    elif lane % 2:
        painter.fillRect(
            QRect(0, top, width, LANE_HEIGHT), palette.color(QPalette.ColorRole.AlternateBase)
        )
    painter.setPen(palette.color(QPalette.ColorRole.Text))
    # drawText never reads markup: a task's name is shown as written.
    painter.drawText(
        QRect(6, top, LABEL_WIDTH - 10, LANE_HEIGHT),
        int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft),
        painter.fontMetrics().elidedText(
            shown(snapshot.spec.name), Qt.TextElideMode.ElideRight, LABEL_WIDTH - 12
        ),
    )
    painter.save()
    painter.setClipRect(QRect(LABEL_WIDTH, max(top, HEADER_HEIGHT), width, LANE_HEIGHT))
    inner = top + 4
    height = LANE_HEIGHT - 8
    spp = view.scale.seconds_per_px
    runs = view.runs.runs_of(snapshot.id)
    found = upcoming(snapshot, start, end, max_marks)
    expected = expected_duration(runs)
    mark_px = max(MIN_MARK_PX, (expected.total_seconds() / spp) if expected else 0)
    painter.setPen(Qt.PenStyle.NoPen)
    if found.dense_from is not None:
        # Occurrences closer than a few pixels: a strip whose strength is the rate.
        per_px = found.rate * spp
        color = QColor(MARK_COLOR)
        color.setAlphaF(min(1.0, 0.25 + 0.15 * per_px))
        x0 = max(float(LABEL_WIDTH), view._x(found.dense_from))
        painter.fillRect(QRectF(x0, inner + 3, width - x0, height - 6), color)
    else:
        outline = QPen(MARK_COLOR, 1)
        fill = QColor(MARK_COLOR)
        fill.setAlpha(60)
        for mark in found.marks:
            x = view._x(mark)
            painter.setPen(outline)
            painter.setBrush(fill)
            painter.drawRect(QRectF(x, inner + 2, mark_px, height - 4))
    painter.setPen(Qt.PenStyle.NoPen)
    for bar in view._bars(snapshot, now):
        x0 = view._x(bar.start)
        x1 = max(x0 + 2, view._x(bar.end))
        brush = (
            RUNNING_COLOR if bar.outcome is None else OUTCOME_COLORS.get(bar.outcome, MARK_COLOR)
        )
        painter.setBrush(brush)
        painter.drawRect(QRectF(x0, inner, x1 - x0, height))
    if view._drag is not None and view._drag[0] == snapshot.id and view._drag_to:
        painter.setPen(QPen(RUNNING_COLOR, 1, Qt.PenStyle.DashLine))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRect(QRectF(view._x(view._drag_to), inner, mark_px, height))
    painter.restore()


def paint_header(view: TimelineView, painter: QPainter, rect: QRect) -> None:
    palette = view.palette()
    painter.fillRect(
        QRect(0, 0, rect.width(), HEADER_HEIGHT), palette.color(QPalette.ColorRole.Button)
    )
    painter.setPen(palette.color(QPalette.ColorRole.ButtonText))
    painter.drawText(
        QRect(6, 0, LABEL_WIDTH - 8, HEADER_HEIGHT),
        int(Qt.AlignmentFlag.AlignVCenter),
        f"{view.lanes.lane_count():,} tasks",
    )
    grid = QColor(palette.color(QPalette.ColorRole.Mid))
    grid.setAlpha(90)
    for x, label in view.scale.ticks(view.time_width):
        px = LABEL_WIDTH + x
        painter.setPen(palette.color(QPalette.ColorRole.ButtonText))
        painter.drawText(QPointF(px + 3, HEADER_HEIGHT - 8), label)
        painter.setPen(grid)
        painter.drawLine(QPointF(px, HEADER_HEIGHT - 6), QPointF(px, rect.height()))
