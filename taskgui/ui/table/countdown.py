"""The once-a-second refresh of the texts that move with time, for the rows on screen.

"in 4m 12s" and "running 0:42" change every second, and "just now" in "Last result"
turns into "5s ago" beside them (it refreshes with the countdowns, so the two never
disagree about what time it is); only the thirty-odd rows a person can see need
repainting. The ticker asks the view which proxy rows cover its
viewport, maps them to source rows and has the model announce just those cells, so a
tick costs the same with 100 tasks or 100,000.
"""

from __future__ import annotations

from PySide6.QtCore import QAbstractProxyModel, QObject, Qt, QTimer
from PySide6.QtWidgets import QTableView

from taskgui.runtime.guard import never_raises
from taskgui.ui.table.task_model import TaskTableModel

TICK_MS = 1_000


class CountdownTicker(QObject):
    """Refreshes the visible "Next run" and "Last result" cells every second while shown.

    ``start()`` / ``stop()`` control the timer; ``tick()`` does one refresh (the
    timer's slot, public for tests and for an immediate refresh).

    Signals: none.
    """

    def __init__(
        self,
        view: QTableView,
        proxy: QAbstractProxyModel,
        model: TaskTableModel,
        parent: QObject | None = None,
        *,
        interval_ms: int = TICK_MS,
    ) -> None:
        super().__init__(parent)
        self._view = view
        self._proxy = proxy
        self._model = model
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        # Coarse is fine for a display and lets the OS batch wake-ups.
        self._timer.setTimerType(Qt.TimerType.CoarseTimer)
        self._timer.timeout.connect(self._on_timer_timeout)

    def start(self) -> None:
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()

    @property
    def is_active(self) -> bool:
        return self._timer.isActive()

    def visible_source_ranges(self) -> list[tuple[int, int]]:
        """Contiguous source-row ranges behind the proxy rows in the viewport."""
        view = self._view
        proxy = self._proxy
        rows = proxy.rowCount()
        if rows == 0:
            return []
        first = view.rowAt(0)
        if first < 0:
            return []
        last = view.rowAt(view.viewport().height() - 1)
        if last < 0:  # the table ends above the bottom of the viewport
            last = rows - 1
        source_rows = sorted(
            proxy.mapToSource(proxy.index(row, 0)).row() for row in range(first, last + 1)
        )
        ranges: list[tuple[int, int]] = []
        for source_row in source_rows:
            if source_row < 0:
                continue
            if ranges and source_row == ranges[-1][1] + 1:
                ranges[-1] = (ranges[-1][0], source_row)
            else:
                ranges.append((source_row, source_row))
        return ranges

    def tick(self) -> int:
        """Refresh the visible rows now; returns how many source rows were refreshed."""
        view = self._view
        if not view.isVisible() or view.window().isMinimized():
            return 0
        refreshed = 0
        for first, last in self.visible_source_ranges():
            self._model.refresh_countdowns(first, last, ages=True)
            refreshed += last - first + 1
        return refreshed

    @never_raises("countdown tick")
    def _on_timer_timeout(self) -> None:
        self.tick()
