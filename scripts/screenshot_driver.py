"""The in-process half of ``screenshots.py``: build the real app and grab its windows.

Runs inside the Xvfb session that ``screenshots.py`` prepared (DISPLAY, XDG folders and
TASKGUI_DB point into a temporary directory). It wires the same pieces as
``taskgui.app.window`` (scheduler service, main window, desktop shell with its notifier) and
saves ``QWidget.grab()`` images; nothing is read from or written to the screen.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from PySide6.QtCore import QEventLoop, QPoint, Qt, QTimer
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QSystemTrayIcon, QWidget

from taskgui.app.window import DESKTOP_ID
from taskgui.core.clock import SystemClock
from taskgui.core.conditions import RunConditions, SystemConditions
from taskgui.core.events import TaskExhausted
from taskgui.core.spread import Spread
from taskgui.core.states import RunOutcome, TaskState
from taskgui.core.task import TaskSpec
from taskgui.runtime.service import SchedulerService
from taskgui.store.paths import resolve_database_path
from taskgui.store.sqlite.opening import open_sqlite
from taskgui.ui.desktop.autostart import Autostart, launch_command
from taskgui.ui.desktop.settings import Settings
from taskgui.ui.desktop.shell import DesktopShell
from taskgui.ui.desktop.tray import Tray
from taskgui.ui.history.history_view import HistoryDialog
from taskgui.ui.icons import app_icon
from taskgui.ui.notify.notifier import notice_for_exhausted
from taskgui.ui.task_dialog.dialog import DialogMode, TaskDialog
from taskgui.ui.window.main_window import LOCAL_OWNER, MainWindow

WINDOW_SIZE = (1180, 600)


# A laptop on mains power, online, in use: what the dialog's warnings are judged by.
HOME = SystemConditions(on_battery=False, online=True, metered=False, idle_for=timedelta(0))


def settle(ms: int = 300) -> None:
    """Let the event loop run (layouts, paints, timers) for ``ms`` milliseconds."""
    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def save(widget: QWidget, out: Path, name: str) -> None:
    settle(200)
    pixmap = widget.grab()
    if pixmap.isNull() or not pixmap.save(str(out / name), "PNG"):
        raise RuntimeError(f"could not save {name}")


def dark_palette() -> QPalette:
    """A dark Fusion palette, as a dark desktop theme would give."""
    palette = QPalette()
    colors = {
        QPalette.ColorRole.Window: "#2b2b2b",
        QPalette.ColorRole.WindowText: "#e8e8e8",
        QPalette.ColorRole.Base: "#1f1f1f",
        QPalette.ColorRole.AlternateBase: "#262626",
        QPalette.ColorRole.Text: "#e8e8e8",
        QPalette.ColorRole.Button: "#353535",
        QPalette.ColorRole.ButtonText: "#e8e8e8",
        QPalette.ColorRole.Highlight: "#2f65ca",
        QPalette.ColorRole.HighlightedText: "#ffffff",
        QPalette.ColorRole.ToolTipBase: "#353535",
        QPalette.ColorRole.ToolTipText: "#e8e8e8",
        QPalette.ColorRole.PlaceholderText: "#8a8a8a",
        QPalette.ColorRole.Link: "#6ea8fe",
    }
    for role, color in colors.items():
        palette.setColor(role, QColor(color))
    for role in (
        QPalette.ColorRole.Text,
        QPalette.ColorRole.ButtonText,
        QPalette.ColorRole.WindowText,
    ):
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor("#7a7a7a"))
    return palette


def drive(out: Path) -> int:
    app = QApplication(sys.argv[:1])
    app.setApplicationName("taskgui")
    app.setDesktopFileName(DESKTOP_ID)
    app.setWindowIcon(app_icon())
    app.setQuitOnLastWindowClosed(False)
    clock = SystemClock()
    path = resolve_database_path()
    repository, _moved = open_sqlite(path, clock.now())
    service = SchedulerService(repository, clock, workers=4, kill_grace=0.5)
    service.start()
    try:
        return _shoot(app, service, clock, path, out)
    finally:
        loop = QEventLoop()
        service.stopped.connect(loop.quit)
        QTimer.singleShot(15_000, loop.quit)
        service.shutdown(0.5)  # stops the demo's long-running command
        if service.busy_workers:
            loop.exec()
        repository.close()


def _shoot(
    app: QApplication, service: SchedulerService, clock: SystemClock, path: Path, out: Path
) -> int:
    by_name = {snapshot.spec.name: snapshot for snapshot in service.snapshot()}
    if by_name["Long import"].state is not TaskState.RUNNING:
        service.run_now(by_name["Long import"].id)  # a running row, with its stopwatch

    window = MainWindow(service, clock, location=str(path), schedule_owner=LOCAL_OWNER)
    tray_available = QSystemTrayIcon.isSystemTrayAvailable()
    shell = DesktopShell(
        window,
        Settings.for_user(),
        Autostart.for_user(launch_command(path)),
        tray_available=tray_available,
        quit_app=app.quit,
    )
    shell.start()
    window.resize(*WINDOW_SIZE)
    settle(2_500)  # the running task gets a few seconds on its stopwatch
    window.select_task(by_name["Upload report"].id)
    save(window, out, "main-window.png")

    # The Timeline tab: runs coloured by outcome, the running one growing, what comes.
    window.timeline.show()
    window.timeline.view.show_span("hours")
    settle(500)
    save(window, out, "timeline.png")
    window.timeline.view.show_span("week")
    settle(300)
    save(window, out, "timeline-week.png")
    window.timeline.tabs.setCurrentIndex(0)

    # What the person sees when a task gives up: the banner (no tray, no bus here).
    fetch = by_name["Fetch mail"]
    exhausted = TaskExhausted(
        task_id=fetch.id, name=fetch.spec.name, attempts=3, outcome=RunOutcome.FAILED
    )
    shell.notifier.notify(notice_for_exhausted(exhausted, "exit status 1"))
    window.table.clearSelection()
    save(window, out, "notification.png")
    window.banner.dismiss()

    _shoot_dialogs(clock, window, by_name["Nightly backup"].spec, out)

    window.show_history(fetch.id)
    histories = [w for w in app.topLevelWidgets() if isinstance(w, HistoryDialog)]
    history = histories[0]
    history.resize(980, 560)
    history.table.selectRow(0)
    save(history, out, "history.png")
    history.close()

    tray = shell.tray or Tray()  # without a tray: the same menu, built for the picture
    tray.set_window_visible(True)
    tray.menu.popup(window.mapToGlobal(QPoint(40, 40)))
    save(tray.menu, out, "tray-menu.png")
    tray.menu.hide()

    settings = shell.open_settings()
    save(settings, out, "settings.png")
    settings.reject()

    app.setPalette(dark_palette())
    window.select_task(by_name["Upload report"].id)
    window.table.setFocus(Qt.FocusReason.OtherFocusReason)
    save(window, out, "main-window-dark.png")

    window.close_for_quit()
    shell.close()
    return 0


def _shoot_dialogs(clock: SystemClock, window: MainWindow, spec: TaskSpec, out: Path) -> None:
    """The task dialog editing a task, and its Conditions & spread section."""
    dialog = TaskDialog(clock, window, spec=spec, mode=DialogMode.EDIT)
    dialog.show()
    save(dialog, out, "task-dialog.png")
    dialog.close()

    # The Conditions & spread section, for a task that waits for the machine.
    careful = replace(
        spec,
        conditions=RunConditions(
            ac_power=True, unmetered=True, stop_when_unmet=True, give_up_after=timedelta(hours=2)
        ),
        spread=Spread(timedelta(minutes=10)),
    )
    dialog = TaskDialog(clock, window, spec=careful, mode=DialogMode.EDIT, system=HOME)
    dialog.show()
    save(dialog, out, "task-dialog-conditions.png")
    dialog.close()
