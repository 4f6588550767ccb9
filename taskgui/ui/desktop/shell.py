"""The desktop shell: what makes the window an app that lives beside the desktop.

It owns the decisions that are about the app rather than the task list:

* **Closing.** Where there is a tray, closing the window hides it and the schedule
  keeps running; the first time, a tray message says so (remembered in the settings).
  Without a tray there would be no way back, so closing quits; when the schedule runs
  here, the person is told first and chooses (``close_choice``): quit, keep it running
  in the background (``handover_requested``: the app starts ``taskgui daemon`` for the
  database once it has let go of it), or stay. The answer can be remembered.
* **Quitting** asks first when tasks are running here, naming them, because they are
  stopped (and retried at the next start). A schedule run by ``taskgui daemon`` goes
  on regardless.
* **Notifications**: the relay (``runtime.notify_relay``) judges each attempt by its
  task's rule (default: when it gives up) and ``ui.notify.news`` raises the notice
  through the ``Notifier`` and, where the schedule runs here, the outside channels;
  clicking a notice brings up the window with the task selected and its history
  open; its actions retry the task, open its log or snooze it for an hour.
* **The tray**: its menu, and a badge while something failed (``tray_link``).
* **Settings**, and a second start of the app (``show``) raising the window.

The question and quit callables are injected so tests never block on a dialog or end
the test run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QByteArray, QCoreApplication, QObject

from taskgui.core.clock import Clock, SystemClock
from taskgui.core.errors import TaskguiError
from taskgui.core.events import TaskExhausted
from taskgui.core.notify_rules import NotifyGate
from taskgui.core.states import SlotKind, TaskState
from taskgui.core.status import TaskSnapshot
from taskgui.runtime.guard import never_raises
from taskgui.runtime.notify_relay import NotifyRelay
from taskgui.runtime.notify_settings import channels
from taskgui.runtime.schedule_client import LiveScheduleClient
from taskgui.system.notify.dispatcher import Dispatcher
from taskgui.ui.desktop.autostart import Autostart
from taskgui.ui.desktop.close_choice import CloseChoice, CloseChooser, ask_close_choice
from taskgui.ui.desktop.settings import Settings
from taskgui.ui.desktop.settings_dialog import SettingsDialog
from taskgui.ui.desktop.single_instance import SHOW
from taskgui.ui.desktop.tray import Tray
from taskgui.ui.desktop.tray_link import TrayLink
from taskgui.ui.notify.news import News
from taskgui.ui.notify.notifier import BannerNotifier, Notifier, TrayNotifier
from taskgui.ui.plain_text import ask_yes_no, isolated
from taskgui.ui.window.main_window import MainWindow
from taskgui.ui.window.questions import Confirm

SettingsDialogFactory = Callable[..., SettingsDialog]

CLOSE_HINT_TITLE = "taskgui is still running"
CLOSE_HINT_TEXT = (
    "Your tasks keep running on schedule. Click the tray icon to open the window again, "
    "or choose Quit from its menu to stop."
)


def runs_again(snapshot: TaskSnapshot) -> bool:
    """Whether a task is on its way to another attempt: running, retrying, or due for a
    run a person asked for (it may wait for a worker first)."""
    status = snapshot.status
    return status.state in (TaskState.RUNNING, TaskState.RETRYING) or (
        status.state is TaskState.PENDING and status.slot_kind in (SlotKind.MANUAL, SlotKind.RETRY)
    )


def running_question(names: Sequence[str]) -> str:
    """``“Backup” is running. Quit and stop it? It will be retried at the next start.``"""
    listed = ", ".join(f"“{isolated(name)}”" for name in names[:3])
    if len(names) > 3:
        listed += f" and {len(names) - 3} more"
    if len(names) == 1:
        return f"{listed} is running. Quit and stop it? It will be retried at the next start."
    return (
        f"{len(names)} tasks are running ({listed}). Quit and stop them? They will be "
        "retried at the next start."
    )


class DesktopShell(QObject):
    """Tray, notifications, close/quit policy, settings. See the module docstring."""

    def __init__(
        self,
        window: MainWindow,
        settings: Settings,
        autostart: Autostart,
        *,
        tray_available: bool,
        notifier: Notifier | None = None,
        ask: Confirm = ask_yes_no,
        choose_close: CloseChooser = ask_close_choice,
        quit_app: Callable[[], None] = QCoreApplication.quit,
        settings_dialog_factory: SettingsDialogFactory = SettingsDialog,
        outside: Dispatcher | None = None,
        clock: Clock | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.window = window
        self.service = window.service
        self.settings = settings
        self.autostart = autostart
        self.tray_available = tray_available
        self.runs_here = self.service.runs_here
        self._ask = ask
        self._choose_close = choose_close
        self._quit_app = quit_app
        self._settings_dialog_factory = settings_dialog_factory
        self.settings_dialog: SettingsDialog | None = None
        self.quitting = False
        # Set when the person chose to keep the schedule running without the window:
        # the app hands it to taskgui daemon once this process has let go of it.
        self.handover_requested = False

        self.tray: Tray | None = Tray(self) if tray_available else None
        self.tray_link = (
            TrayLink(
                window,
                self.tray,
                hide_window=self.hide_to_tray,
                open_settings=self._on_window_settings_requested,
                request_quit=self._on_window_quit_requested,
                parent=self,
            )
            if self.tray is not None
            else None
        )
        if notifier is None:
            notifier = (
                TrayNotifier(self.tray.icon, self)
                if self.tray is not None
                else BannerNotifier(window.banner, self)
            )
        self.notifier = notifier
        notify = settings.notify
        relay = NotifyRelay(
            self.service,
            self.service.task,
            clock or SystemClock(),
            default_rule=lambda: self.settings.notify.default_rule,
            gate=NotifyGate(notify.quiet_hours),
        )
        self.news = News(
            relay,
            notifier,
            retry_now=self.service.retry_now,
            recurring=self._recurring,
            outside=outside,
            runs_here=self.runs_here,
            parent=self,
        )
        window.intercept_close = True
        self._describe_quit()
        self._connect()

    def _describe_quit(self) -> None:
        self.window.window_actions["quit"].setStatusTip(
            "Stop the scheduler and quit"
            if self.runs_here
            else "Quit taskgui; the process that runs the schedule goes on"
        )

    def _service_links(self) -> list[tuple[Any, Callable[..., None]]]:
        """Every (signal of the service, slot): connected, and undone on ``adopt``."""
        service = self.service
        links: list[tuple[Any, Callable[..., None]]] = [
            (service.task_exhausted, self._on_service_task_exhausted),
            (service.task_changed, self._on_service_task_changed),
            # Emitted only by a client of a schedule run elsewhere.
            (service.owner_changed, self.window.set_schedule_owner),
        ]
        return links

    def adopt(self, service: LiveScheduleClient) -> None:
        """The schedule now runs in this process, in ``service``: follow it from now on."""
        for signal, slot in self._service_links():
            signal.disconnect(slot)
        self.service = service
        self.runs_here = service.runs_here
        for signal, slot in self._service_links():
            signal.connect(slot)
        self.window.adopt(service)
        self.news.adopt(
            service,
            task_of=service.task,
            retry_now=service.retry_now,
            recurring=self._recurring,
            runs_here=self.runs_here,
        )
        self._describe_quit()

    def _connect(self) -> None:
        window = self.window
        window.close_requested.connect(self._on_window_close_requested)
        window.quit_requested.connect(self._on_window_quit_requested)
        window.settings_requested.connect(self._on_window_settings_requested)
        for signal, slot in self._service_links():
            signal.connect(slot)
        self.notifier.activated.connect(self._on_notifier_activated)
        self.news.log_requested.connect(self._on_notifier_activated)
        self.news.problem_occurred.connect(self._on_news_problem_occurred)

    # ------------------------------------------------------------------- life

    def start(self) -> None:
        """Show the window (or only the tray icon, when asked to start minimized)."""
        geometry = self.settings.window_geometry
        if geometry:
            self.window.restoreGeometry(QByteArray(geometry))
        if self.tray is not None:
            self.tray.show()
        if self.tray_link is not None and self.settings.start_minimized:
            self.tray_link.update()
            return
        self.window.show()

    def close(self) -> None:
        """Take the tray icon and notifications away (the app is ending)."""
        self.news.close()
        self.notifier.close()
        if self.tray is not None:
            self.tray.close()

    def show_window(self) -> None:
        self.window.reveal()

    def hide_to_tray(self) -> None:
        self._save_geometry()
        self.window.hide()
        if self.tray is not None and not self.settings.close_hint_shown:
            self.tray.show_message(CLOSE_HINT_TITLE, CLOSE_HINT_TEXT)
            self.settings.close_hint_shown = True

    def running_names(self) -> list[str]:
        """The tasks running in this process (quitting would stop them)."""
        return self.service.running_task_names() if self.runs_here else []

    def request_quit(self, *, asked: bool = False) -> bool:
        """Quit, after asking if that stops running tasks (unless the person was just
        ``asked``); False if the person declined."""
        running = self.running_names() if not asked else []
        if running and not self._ask(self.window, "Quit taskgui", running_question(running)):
            return False
        self._save_geometry()
        self.quitting = True
        self.window.close_for_quit()
        if self.tray is not None:
            self.tray.hide()
        self._quit_app()
        return True

    def open_task_history(self, task_id: int) -> None:
        """Bring up the window with the task selected and its history open."""
        self.show_window()
        self.window.select_task(task_id)
        self.window.history_requested.emit(task_id)

    def open_settings(self) -> SettingsDialog:
        if self.settings_dialog is not None:
            self.settings_dialog.raise_()
            self.settings_dialog.activateWindow()
            return self.settings_dialog
        elsewhere = 0 if self.runs_here else self.service.workers
        note = (
            ""
            if self.runs_here
            else "Set by the process that runs this schedule (taskgui daemon --workers N)."
            if not elsewhere
            else "Set by each node of this shared schedule when it starts (taskgui daemon "
            "--workers N); shown: the nodes answering now, in all."
        )
        dialog = self._settings_dialog_factory(
            self.settings,
            self.autostart,
            workers_editable=self.runs_here,
            workers_note=note,
            workers_elsewhere=elsewhere,
            tray_available=self.tray_available,
            parent=self.window,
        )
        dialog.applied.connect(self._on_settings_dialog_applied)
        dialog.finished.connect(self._on_settings_dialog_finished)
        self.settings_dialog = dialog
        if not self.window.isVisible():
            self.show_window()
        dialog.open()
        return dialog

    def handle_message(self, message: str) -> None:
        """A message from another start of the app (``show``)."""
        if message == SHOW:
            self.show_window()

    # ---------------------------------------------------------------- helpers

    @never_raises("saving the window geometry")
    def _save_geometry(self) -> None:
        self.settings.window_geometry = bytes(self.window.saveGeometry().data())

    def _task_name(self, task_id: int) -> str:
        try:
            return self.service.task(task_id).spec.name
        except TaskguiError:
            return f"task {task_id}"

    # ------------------------------------------------------------------ slots

    def close_without_tray(self) -> None:
        """Closing with no tray to hide in: quit, or hand the schedule over (see the
        module docstring). A schedule run elsewhere goes on anyway: just quit."""
        if not self.runs_here:
            self.request_quit()
            return
        choice = CloseChoice(self.settings.close_without_tray)
        asked = choice is CloseChoice.ASK
        if asked:
            choice, remember = self._choose_close(self.window, self.running_names())
            if remember and choice is not CloseChoice.CANCEL:
                self.settings.close_without_tray = choice.value
        if choice is CloseChoice.CANCEL:
            return
        if choice is CloseChoice.BACKGROUND:
            self.handover_requested = True
        if not self.request_quit(asked=asked):
            self.handover_requested = False

    @never_raises("closing the window")
    def _on_window_close_requested(self) -> None:
        if self.tray is not None:
            self.hide_to_tray()
        else:
            self.close_without_tray()

    @never_raises("quitting")
    def _on_window_quit_requested(self) -> None:
        self.request_quit()

    @never_raises("opening the settings")
    def _on_window_settings_requested(self) -> None:
        self.open_settings()

    def _on_settings_dialog_applied(self) -> None:
        if not self.runs_here:
            return
        self.news.relay.gate.quiet = self.settings.notify.quiet_hours
        if self.news.outside is not None:
            self.news.outside.set_channels(channels(self.settings.notify))
        try:
            self.service.set_workers(self.settings.workers)
        except TaskguiError as error:
            self.window.statusBar().showMessage(str(error), 15_000)
        self.window.refresh_status()

    def _on_settings_dialog_finished(self, _result: int) -> None:
        dialog, self.settings_dialog = self.settings_dialog, None
        if dialog is not None:
            dialog.deleteLater()

    def _recurring(self, task_id: int) -> bool:
        return self.service.task(task_id).spec.recurrence.is_recurring

    def _on_news_problem_occurred(self, message: str) -> None:
        self.window.statusBar().showMessage(message, 15_000)

    @never_raises("marking an exhausted task")
    def _on_service_task_exhausted(self, event: TaskExhausted, _error: str) -> None:
        """The tray's badge; the notice itself comes from the relay, by the task's rule."""
        if self.tray_link is not None:
            self.tray_link.gave_up(event.task_id)

    @never_raises("withdrawing a notice")
    def _on_service_task_changed(self, snapshot: TaskSnapshot) -> None:
        """A task that gave up and now runs again (Retry Now, its next occurrence):
        "gave up" is no longer the news about it."""
        if runs_again(snapshot):
            self.notifier.withdraw(snapshot.id)
            if self.tray_link is not None:
                self.tray_link.runs_again(snapshot.id)

    @never_raises("opening a task's history")
    def _on_notifier_activated(self, task_id: int) -> None:
        self.open_task_history(task_id)
