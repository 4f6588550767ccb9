"""The timeline beside the table: a "Timeline" tab in the main window, kept in step.

``attach_timeline(window)`` wraps the window's task area in two tabs, "Tasks" and
"Timeline", and wires the timeline to what the window already has: its lanes are the
rows of the table's proxy (same filters, same order), a click selects the task in the
table and a selection in the table highlights the lane, a finished run refreshes that
task's runs, a double click on empty time opens the New Task dialog at that time, and
dragging a one-off task's mark reschedules it (``update_task`` with the new first
run). The window knows only the one call that builds it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import QDateTime, QItemSelection, QObject, QTimer
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QTabWidget, QVBoxLayout, QWidget

from taskgui.core.clock import Clock
from taskgui.core.errors import TaskguiError
from taskgui.core.recurrence import Once
from taskgui.core.states import RunOutcome
from taskgui.core.status import RunResult, RunTicket, TaskSnapshot
from taskgui.core.task import TaskId
from taskgui.runtime.guard import never_raises
from taskgui.runtime.schedule_client import LiveScheduleClient
from taskgui.ui.table.task_filter import TaskFilterProxy
from taskgui.ui.task_dialog.mode import DialogMode, open_task_dialog
from taskgui.ui.timeline.runs import RunCache
from taskgui.ui.timeline.view import TimelineView

if TYPE_CHECKING:
    from taskgui.ui.window.main_window import MainWindow

log = logging.getLogger(__name__)


class ProxyLanes:
    """The table's shown rows as lanes."""

    def __init__(
        self, proxy: TaskFilterProxy, snapshot_of: Callable[[TaskId], TaskSnapshot | None]
    ) -> None:
        self._proxy = proxy
        self._snapshot_of = snapshot_of

    def lane_count(self) -> int:
        return self._proxy.rowCount()

    def snapshot_at(self, lane: int) -> TaskSnapshot | None:
        task_id = self._proxy.task_id_at(lane)
        if task_id is None:
            return None
        return self._snapshot_of(task_id)

    def lane_of(self, task_id: TaskId) -> int | None:
        return self._proxy.row_of(task_id)


class TimelinePanel(QWidget):
    """The view and its span buttons (6 hours, Day, Week, Now)."""

    def __init__(self, view: TimelineView, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.view = view
        bar = QHBoxLayout()
        bar.setContentsMargins(0, 0, 0, 0)
        self.buttons: dict[str, QPushButton] = {}
        for name, text in (("hours", "6 Hours"), ("day", "Day"), ("week", "Week")):
            button = QPushButton(text, self)
            button.setObjectName(f"timeline_{name}")
            button.clicked.connect(lambda _checked=False, n=name: view.show_span(n))
            bar.addWidget(button)
            self.buttons[name] = button
        now = QPushButton("Now", self)
        now.setObjectName("timeline_now")
        now.setToolTip("Bring the current time into view (Home)")
        now.clicked.connect(lambda _checked=False: view.go_to_now())
        bar.addWidget(now)
        self.buttons["now"] = now
        bar.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(bar)
        layout.addWidget(view, 1)


class TimelineLink(QObject):
    """Keeps the timeline and the window in step; see the module docstring.

    A QObject child of the window, so the service's signals stop reaching it when
    the window goes (the service may outlive it).
    """

    def __init__(self, window: MainWindow, clock: Clock) -> None:
        super().__init__(window)
        self.window = window
        self._clock = clock
        self.runs = RunCache(window.service.history)
        self.lanes = ProxyLanes(window.proxy, window.model.snapshot_of)
        self.view = TimelineView(self.lanes, self.runs, clock)
        self.panel = TimelinePanel(self.view)
        self.tabs = QTabWidget(window)
        self.tabs.setObjectName("views")
        self.tabs.setDocumentMode(True)
        holder = window.stack.parentWidget()
        layout = holder.layout() if holder is not None else None
        if layout is not None:
            layout.replaceWidget(window.stack, self.tabs)
        self.tabs.addTab(window.stack, "&Tasks")
        self.tabs.addTab(self.panel, "Time&line")
        self.view.task_selected.connect(self._on_view_task_selected)
        self.view.new_task_requested.connect(self._on_view_new_task_requested)
        self.view.reschedule_requested.connect(self._on_view_reschedule_requested)
        proxy = window.proxy
        # To the view's own slot: connections die with it (the central widget that
        # holds it goes before this link when the window closes).
        for signal in (
            proxy.rowsInserted,
            proxy.rowsRemoved,
            proxy.modelReset,
            proxy.layoutChanged,
        ):
            signal.connect(self.view.on_lanes_changed)
        proxy.dataChanged.connect(self.view.on_lanes_changed)
        window.table.selectionModel().selectionChanged.connect(self._on_table_selection_changed)
        self.follow(window.service)

    def follow(self, service: LiveScheduleClient) -> None:
        """The window shows another schedule now (``adopt``)."""
        self.runs.set_history(self.window.service.history)
        service.run_finished.connect(self._on_service_run_finished)

    def show(self) -> None:
        self.tabs.setCurrentWidget(self.panel)

    @never_raises("refreshing the timeline after a run")
    def _on_service_run_finished(
        self, ticket: RunTicket, _outcome: RunOutcome, _result: RunResult
    ) -> None:
        self.runs.forget(ticket.task_id)
        if shiboken6.isValid(self.view):
            self.view.viewport().update()

    @never_raises("following the table's selection")
    def _on_table_selection_changed(self, *_args: QItemSelection) -> None:
        tasks = self.window.selected_tasks()
        self.view.set_selected(tasks[0].id if tasks else None)

    @never_raises("selecting a task from the timeline")
    def _on_view_task_selected(self, task_id: int) -> None:
        self.window.select_task(task_id)

    def _on_view_new_task_requested(self, at: datetime) -> None:
        # After the click is handled: the dialog runs its own event loop, which must
        # not start inside the view's mouse event.
        QTimer.singleShot(0, self.panel, lambda: self._new_task(at))

    @never_raises("creating a task from the timeline")
    def _new_task(self, at: datetime) -> None:
        """The New Task dialog with its first run at ``at``; the task is selected."""
        try:
            dialog = open_task_dialog(self._clock, self.window, mode=DialogMode.CREATE)
            dialog.schedule.when.setDateTime(QDateTime.fromSecsSinceEpoch(int(at.timestamp())))
            if dialog.exec() and (spec := dialog.result_spec()) is not None:
                stored = self.window.service.add_task(spec)
                self.window.select_task(stored.id)
        except TaskguiError as error:
            self.window.statusBar().showMessage(str(error), 15_000)

    @never_raises("rescheduling a task from the timeline")
    def _on_view_reschedule_requested(self, task_id: int, at: datetime) -> None:
        try:
            snapshot = self.window.model.snapshot_of(task_id)
            if snapshot is None or not isinstance(snapshot.spec.recurrence, Once):
                return
            self.window.service.update_task(replace(snapshot.spec, first_run_at=at))
        except TaskguiError as error:
            self.window.statusBar().showMessage(str(error), 15_000)


def attach_timeline(window: MainWindow, clock: Clock) -> TimelineLink:
    return TimelineLink(window, clock)
