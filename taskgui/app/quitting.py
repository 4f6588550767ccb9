"""Quitting the window that runs the schedule: stop the service, wait for the runs.

While runs are still going, a small window says which, that they are stopped after the
grace period (and retried), and offers to stop them now; the event loop keeps running
meanwhile, so the window stays responsive and nothing is lost.
"""

from __future__ import annotations

from PySide6.QtCore import QEventLoop, Qt, QTimer
from PySide6.QtWidgets import QMessageBox

from taskgui.core.defaults import SHUTDOWN_GRACE
from taskgui.runtime.service import SchedulerService
from taskgui.ui.plain_text import isolated

QUIT_REASON = "taskgui quit"
HANDOVER_REASON = "taskgui handed its schedule to taskgui daemon"


def shut_down(service: SchedulerService, reason: str = QUIT_REASON) -> None:
    """Stop the service and wait (running the event loop) until every run is recorded.

    While runs are still going, a small window says which, that they are stopped
    after the grace period (and retried), and offers to stop them now.
    """
    loop = QEventLoop()
    service.stopped.connect(loop.quit)
    QTimer.singleShot(int((SHUTDOWN_GRACE + 10) * 1000), loop.quit)  # never hang on quit
    service.shutdown(SHUTDOWN_GRACE, reason)
    if service.busy_workers:
        notice = stopping_notice(service.running_task_names(), SHUTDOWN_GRACE)
        stop_now = notice.addButton("Stop Now", QMessageBox.ButtonRole.DestructiveRole)
        stop_now.clicked.connect(service.stop_runs_now)
        notice.show()
        loop.exec()
        notice.close()


def stopping_notice(names: list[str], grace: float) -> QMessageBox:
    """What quitting waits for: the tasks still running, by name (plain text)."""
    listed = ", ".join(f"“{isolated(name)}”" for name in names[:3])
    if len(names) > 3:
        listed += f" and {len(names) - 3} more"
    one = len(names) == 1
    notice = QMessageBox(
        QMessageBox.Icon.Information,
        "taskgui is stopping",
        f"Waiting for {listed} to finish. {'It is' if one else 'They are'} stopped in "
        f"{grace:g} s if still running, and run again at the next start.",
    )
    notice.setTextFormat(Qt.TextFormat.PlainText)
    notice.setWindowModality(Qt.WindowModality.NonModal)
    return notice
