"""The main window: the live task list, its filters, and everything you can do to a task.

It reads the scheduler service (snapshots at start, then its signals) and asks it to
act; it never touches the database. The table is a model/view pair: the model is fed
by the service's events and the proxy filters and sorts; a ticker refreshes only the
visible countdowns once a second.

The window itself neither quits nor hides: with ``intercept_close`` set, closing it
emits ``close_requested`` and the desktop shell (``ui.shell``) decides (hide to the
tray, or quit after asking). Quit and Settings are requests for the shell too.

When the process it follows stops, a bar says that nothing runs the schedule and
offers to run it here (``run_here_requested``); the composition root then starts a
scheduler in this process and hands it over with ``adopt``.

Signals:
    history_requested(int): a task's history should be shown (used by notifications).
    close_requested(): the window was asked to close while ``intercept_close`` is set.
    quit_requested(): Quit was chosen.
    settings_requested(): Settings… was chosen.
    run_here_requested(): run the schedule in this window (nobody runs it now).
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import (
    QCoreApplication,
    QItemSelection,
    QModelIndex,
    QPoint,
    Qt,
    Signal,
)
from PySide6.QtGui import QCloseEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QMainWindow,
    QMenu,
    QMessageBox,
    QVBoxLayout,
    QWidget,
)

from taskgui import __version__
from taskgui.core.clock import Clock
from taskgui.core.errors import TaskguiError
from taskgui.core.states import TaskState
from taskgui.core.status import RunRecord, RunTicket, TaskSnapshot
from taskgui.core.task import TaskId
from taskgui.runtime.schedule_client import LiveScheduleClient
from taskgui.ui.notify.banner import Banner
from taskgui.ui.plain_text import ask_yes_no, warn
from taskgui.ui.table.countdown import CountdownTicker
from taskgui.ui.table.state_filter import StateFilter
from taskgui.ui.table.task_model import Column
from taskgui.ui.task_dialog.mode import open_task_dialog
from taskgui.ui.timeline.attach import attach_timeline
from taskgui.ui.transfer.actions import TransferActions
from taskgui.ui.window.about import show_about
from taskgui.ui.window.actions import TaskActions, Verb
from taskgui.ui.window.filter_bar import FilterBar
from taskgui.ui.window.history_windows import HistoryWindows
from taskgui.ui.window.menus import context_menu, install_menus, install_table_actions
from taskgui.ui.window.questions import Confirm, delete_question
from taskgui.ui.window.schedule_banner import NoSchedulerBanner
from taskgui.ui.window.status_line import LOCAL_OWNER, StatusLine
from taskgui.ui.window.task_commands import DialogFactory, TaskCommands
from taskgui.ui.window.task_list import TaskList
from taskgui.ui.window.window_actions import add_verb_icons, build_window_actions

__all__ = ["LOCAL_OWNER", "Confirm", "MainWindow", "ask_yes_no", "delete_question"]

log = logging.getLogger(__name__)


class MainWindow(QMainWindow):
    """The live list of tasks. See the module docstring."""

    history_requested = Signal(int)
    close_requested = Signal()
    quit_requested = Signal()
    settings_requested = Signal()
    run_here_requested = Signal()

    def __init__(
        self,
        service: LiveScheduleClient,
        clock: Clock,
        *,
        location: str = "",
        log_file: str = "",
        schedule_owner: str = LOCAL_OWNER,
        dialog_factory: DialogFactory = open_task_dialog,
        confirm: Confirm = ask_yes_no,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.service = service
        self._clock = clock
        # Through a method: the service may be replaced (adopt), the histories stay.
        self.histories = HistoryWindows(self, self._history_of, clock.now)
        self._location = location
        self._log_file = log_file
        self.about: QMessageBox | None = None
        self.intercept_close = False
        self._closing = False
        self.setWindowTitle("taskgui")
        self.resize(1100, 650)

        self.actions_ = TaskActions(self)
        add_verb_icons(self.actions_)
        self.window_actions = build_window_actions(
            self,
            {
                "settings": self.settings_requested.emit,
                "close": self.close,
                "quit": self.quit_requested.emit,
                "pause_all": lambda: self._safely(self.pause_all),
                "resume_all": lambda: self._safely(self.resume_all),
                "about": lambda: self._safely(self.show_about),
            },
        )
        self._owner = schedule_owner
        self._build_central()
        install_table_actions(self.table, self.actions_)
        self.commands = TaskCommands(
            self,
            lambda: self.service,
            self.tasks,
            clock,
            dialog_factory=dialog_factory,
            confirm=confirm,
            report=self._report,
            acted=self._on_selection_changed,
        )
        # File > Import…, Import Crontab…, Export…: the same rules as the CLI's.
        self.transfer = TransferActions(self, service, clock)
        self.file_menu, self.tasks_menu = install_menus(
            self, self.actions_, self.window_actions, self.transfer.actions()
        )
        self.transfer.imported.connect(
            lambda report: self.statusBar().showMessage(report.summary(), 10_000)
        )
        self._build_status_bar(location, schedule_owner)
        self._connect()
        self._set_tab_order()
        self.ticker = CountdownTicker(self.table, self.proxy, self.model, self)
        self._load_tasks()
        self.timeline = attach_timeline(self, clock)  # a "Timeline" tab beside the table
        self.table.sortByColumn(Column.NEXT_RUN, Qt.SortOrder.AscendingOrder)
        self._on_model_counts_changed()
        self.ticker.start()

    # ------------------------------------------------------------- building

    def _build_central(self) -> None:
        """Top to bottom: the bars that say something, the filters, then the tasks (or
        what to say instead of an empty table)."""
        self.tasks = TaskList(self._clock, self.actions_[Verb.NEW], self._show_everything, self)
        # The parts, by the names the rest of the window (and its tests) use.
        self.stack = self.tasks
        self.model, self.proxy, self.table = self.tasks.model, self.tasks.proxy, self.tasks.table
        self.empty, self.no_matches = self.tasks.empty, self.tasks.no_matches
        self.filter_bar = FilterBar(self)
        self.search = self.filter_bar.search
        self.filter_buttons = self.filter_bar.buttons
        self.banner = Banner(self)
        self.no_scheduler = NoSchedulerBanner(self)
        self.no_scheduler.run_here_requested.connect(self.run_here_requested)
        central = QWidget(self)
        layout = QVBoxLayout(central)
        layout.addWidget(self.no_scheduler)
        layout.addWidget(self.banner)
        layout.addWidget(self.filter_bar)
        layout.addWidget(self.stack, 1)
        self.setCentralWidget(central)

    def _set_tab_order(self) -> None:
        """Top to bottom, as the eye reads: notice, filters, search, then the tasks."""
        chain: list[QWidget] = [
            self.no_scheduler.run_here_button,
            self.banner.history_button,
            self.banner.dismiss_button,
            *self.filter_buttons.values(),
            self.search,
            self.table,
        ]
        for first, second in itertools.pairwise(chain):
            QWidget.setTabOrder(first, second)

    def _build_status_bar(self, location: str, schedule_owner: str) -> None:
        self.status_line = StatusLine(self.statusBar(), location, self)
        self.counts_label = self.status_line.counts
        self.workers_label = self.status_line.workers
        self.owner_label = self.status_line.owner
        self.location_label = self.status_line.location
        self.set_schedule_owner(schedule_owner)

    def _service_links(self) -> list[tuple[Any, Callable[..., None]]]:
        """Every (signal of the service, slot here): connected, and undone on adopt."""
        service = self.service
        return [
            (service.task_added, self.model.on_task_added),
            (service.task_changed, self.model.on_task_changed),
            (service.task_removed, self.model.on_task_removed),
            (service.tasks_loaded, self.tasks.add_loaded),
            (service.run_finished, self.model.on_run_finished),
            (service.run_finished, self._on_service_run_finished),
            (service.run_output, self._on_service_run_output),
            (service.task_changed, self._on_service_task_changed),
            (service.error_occurred, self._on_service_error_occurred),
            (service.store_lost, self._on_service_store_lost),
            (service.history_read, self.histories.run_finished),  # read off the GUI thread
            (service.tasks_stored, self.commands.on_tasks_stored),  # its id came later
        ]

    def _load_tasks(self) -> None:
        """The tasks at hand, with the latest result of each; the rest follow."""
        self.tasks.load(self.service.first_snapshot(), self.service.last_runs())

    def _connect(self) -> None:
        for signal, slot in self._service_links():
            signal.connect(slot)
        self.model.counts_changed.connect(self._on_model_counts_changed)
        self.proxy.counts_changed.connect(self._on_model_counts_changed)
        for model in (self.model, self.proxy):
            for signal in (model.rowsInserted, model.rowsRemoved, model.modelReset):
                signal.connect(self._on_model_rows_changed)
        self.proxy.layoutChanged.connect(self._on_model_rows_changed)
        self.search.textChanged.connect(self.proxy.set_search_text)
        self.search.textChanged.connect(self._on_model_rows_changed)
        self.filter_bar.filter_chosen.connect(self.set_state_filter)
        self.filter_bar.search_left.connect(self.table.setFocus)
        self.no_matches.show_all.clicked.connect(self._on_no_matches_show_all_clicked)
        QShortcut(QKeySequence(QKeySequence.StandardKey.Find), self).activated.connect(
            self._on_find_shortcut_activated
        )
        self.table.customContextMenuRequested.connect(self._on_table_context_menu_requested)
        self.table.doubleClicked.connect(self._on_table_double_clicked)
        self.table.selectionModel().selectionChanged.connect(self._on_selection_changed)
        self.history_requested.connect(self.show_history)
        handlers = self.commands.handlers()
        handlers[Verb.HISTORY] = self._show_selected_history
        for verb, handler in handlers.items():
            self.actions_[verb].triggered.connect(lambda _=False, h=handler: self._safely(h))

    # ---------------------------------------------------------------- reads

    def selected_tasks(self) -> list[TaskSnapshot]:
        return self.tasks.selected_tasks()

    def select_task(self, task_id: TaskId) -> bool:
        """Select and reveal a task (clearing a filter that hides it)."""
        return self.tasks.select_task(task_id)

    def _show_everything(self) -> None:
        self.search.clear()
        self.set_state_filter(StateFilter.ALL)

    def set_schedule_owner(self, owner: str) -> None:
        """Say which process runs the schedule ("" when none does, and offer to run it
        here)."""
        self.status_line.set_owner(owner)
        if owner:
            self.no_scheduler.hide()
            self._owner = owner
        else:
            self.no_scheduler.show_stopped(self._owner)  # who ran it, if known

    def adopt(self, service: LiveScheduleClient, owner: str = LOCAL_OWNER) -> None:
        """Show ``service`` from now on (the schedule now runs in this window).

        The tasks are read afresh from it; the selection stays on the same tasks.
        """
        selected = [task.id for task in self.selected_tasks()]
        for signal, slot in self._service_links():
            signal.disconnect(slot)
        self.service = service
        self.transfer.retarget(service)
        self.timeline.follow(service)
        for signal, slot in self._service_links():
            signal.connect(slot)
        self._load_tasks()
        self.tasks.select_ids(selected)
        self.set_schedule_owner(owner)
        self.refresh_status()

    def reveal(self) -> None:
        """Bring the window to the front, from the tray, a notification or a second start."""
        if self.isMinimized():
            self.showNormal()
        else:
            self.show()
        self.raise_()
        self.activateWindow()

    # -------------------------------------------------------------- actions

    def pause_all(self) -> None:
        """Pause every task that can be paused now."""
        self.commands.pause_all()

    def resume_all(self) -> None:
        """Resume every paused task."""
        self.commands.resume_all()

    def set_state_filter(self, state_filter: StateFilter) -> None:
        self.filter_bar.check(state_filter)
        self.proxy.set_state_filter(state_filter)
        self._on_model_rows_changed()

    def _history_of(self, task_id: TaskId) -> list[RunRecord]:
        return self.service.history(task_id)

    def show_history(self, task_id: TaskId) -> None:
        try:
            task = self.service.task(task_id)
        except TaskguiError as error:
            self._report(str(error))
            return
        self.histories.show(task)

    def show_about(self) -> None:
        """Help > About: the version, the database and the log file."""
        if self.about is not None and self.about.isVisible():
            self.about.raise_()
            return
        version = QCoreApplication.applicationVersion() or __version__
        self.about = show_about(self, version, self._location, self._log_file)

    def _show_selected_history(self) -> None:
        tasks = self.selected_tasks()
        if len(tasks) == 1:
            self.show_history(tasks[0].id)

    def _safely(self, handler: Callable[[], None]) -> None:
        """No exception escapes a slot: show it to the person instead."""
        try:
            handler()
        except TaskguiError as error:
            self._report(str(error))
        except Exception as error:
            log.exception("unexpected error in the main window")
            self._report(f"Something went wrong inside taskgui: {error}")

    def _report(self, message: str) -> None:
        warn(self, "taskgui", message)

    # ---------------------------------------------------------------- slots

    def _on_selection_changed(
        self, _selected: QItemSelection | None = None, _deselected: QItemSelection | None = None
    ) -> None:
        self.actions_.update(self.selected_tasks())

    def _on_service_task_changed(self, snapshot: object) -> None:
        assert isinstance(snapshot, TaskSnapshot)
        if any(task.id == snapshot.id for task in self.selected_tasks()):
            self._on_selection_changed()
        self.histories.task_changed(snapshot)
        self._update_workers()

    def _on_service_run_finished(self, ticket: object, _outcome: object, _result: object) -> None:
        if isinstance(ticket, RunTicket):
            self.histories.run_finished(ticket.task_id)

    def _on_service_run_output(self, ticket: object, output: str) -> None:
        if isinstance(ticket, RunTicket):
            self.histories.run_output(ticket, output)

    def _on_service_error_occurred(self, message: str) -> None:
        self.statusBar().showMessage(message, 15_000)

    def _on_service_store_lost(self, message: str) -> None:
        # Not a passing status line: nothing runs any more until taskgui starts again.
        self.banner.show_message("The schedule has stopped", message, urgent=True)

    def _on_model_counts_changed(self) -> None:
        self.filter_bar.set_counts({f: self.proxy.count_of(f) for f in StateFilter})
        counts = self.model.counts()
        self.status_line.set_counts(
            counts.get(TaskState.RUNNING, 0),
            counts.get(TaskState.PENDING, 0),
            counts.get(TaskState.RETRYING, 0),
        )
        self._update_workers()

    def refresh_status(self) -> None:
        """Redo the status bar texts (after the worker count changed, say)."""
        self._on_model_counts_changed()

    def _update_workers(self) -> None:
        self.status_line.set_workers(self.service.busy_workers, self.service.workers)

    def _on_model_rows_changed(self, *_: object) -> None:
        self.tasks.show_fitting_page(self.search.text().strip())

    def _on_no_matches_show_all_clicked(self) -> None:
        self._show_everything()
        self.table.setFocus()

    def _on_find_shortcut_activated(self) -> None:
        self.search.setFocus()
        self.search.selectAll()

    def _on_table_double_clicked(self, index: QModelIndex) -> None:
        if index.isValid():
            self._safely(self.commands.edit_selected)

    def _on_table_context_menu_requested(self, position: QPoint) -> None:
        menu = self.build_context_menu(on_a_task=self.table.indexAt(position).isValid())
        menu.exec(self.table.viewport().mapToGlobal(position))

    def build_context_menu(self, *, on_a_task: bool = True) -> QMenu:
        return context_menu(self, self.actions_, self.commands, self._safely, on_a_task=on_a_task)

    def close_for_quit(self) -> None:
        """Close for good (the app is quitting), past ``intercept_close``."""
        self._closing = True
        self.close()

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802
        if self.intercept_close and not self._closing:
            self.close_requested.emit()  # the shell hides the window, or quits
            if not self._closing:
                event.ignore()
                return
        self.ticker.stop()
        self.histories.close_all()
        super().closeEvent(event)
