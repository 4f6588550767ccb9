"""The composition root: builds the clock, the store, the service and the window.

The only module that sees every layer. It also owns the conversations that happen
before there is a window: a damaged database (move it aside and start afresh only if
the person agrees), a schedule already run by another process, a file that cannot be
opened. Each ends in a dialog that says what happened and what to do, never a
traceback.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

from PySide6.QtCore import QEventLoop, QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

from taskgui import __version__
from taskgui.core.clock import SystemClock
from taskgui.core.errors import TaskguiError
from taskgui.runtime.daemon import SignalBridge, configure_logging
from taskgui.runtime.service import SchedulerService
from taskgui.store.errors import DatabaseCorruptError, SchedulerAlreadyRunningError
from taskgui.store.lock import SchedulerLock
from taskgui.store.paths import resolve_database_path
from taskgui.store.recovery import open_sqlite
from taskgui.store.sqlite import SqliteRepository
from taskgui.ui.main_window import MainWindow

log = logging.getLogger("taskgui.app")

SHUTDOWN_GRACE = 5.0
LOCK_WAIT = 2.0


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="taskgui", add_help=False)
    parser.add_argument("--db")
    parser.add_argument("--reset-corrupt", action="store_true")
    args, _unknown = parser.parse_known_args(argv)
    return args


def _open_store(path: Path, reset_corrupt: bool) -> SqliteRepository | None:
    """Open the database, asking before a damaged one is moved aside."""
    clock = SystemClock()
    try:
        repository, moved = open_sqlite(path, clock.now(), reset_corrupt=reset_corrupt)
    except DatabaseCorruptError as error:
        answer = QMessageBox.question(
            None,
            "taskgui — damaged database",
            f"{error}\n\nMove the damaged file aside (it is kept, renamed, next to the "
            "original) and start with an empty schedule?",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No,
        )
        if answer != QMessageBox.StandardButton.Yes:
            return None
        repository, moved = open_sqlite(path, clock.now(), reset_corrupt=True)
    if moved is not None:
        QMessageBox.information(
            None, "taskgui", f"The damaged database was kept as:\n{moved}\n\nA new one was started."
        )
    return repository


def _shut_down(service: SchedulerService) -> None:
    """Stop the service and wait (running the event loop) until every run is recorded."""
    loop = QEventLoop()
    service.stopped.connect(loop.quit)
    QTimer.singleShot(int((SHUTDOWN_GRACE + 10) * 1000), loop.quit)  # never hang on quit
    service.shutdown(SHUTDOWN_GRACE)
    if service.busy_workers:
        loop.exec()


def main(argv: list[str] | None = None) -> int:
    """Open the window on the schedule in ``--db`` (or the default database)."""
    args = _parse(list(sys.argv[1:] if argv is None else argv))
    configure_logging()
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setApplicationName("taskgui")
    app.setApplicationDisplayName("taskgui")
    app.setApplicationVersion(__version__)
    app.setDesktopFileName("taskgui")
    path = resolve_database_path(args.db)
    lock = SchedulerLock(path)
    try:
        lock.acquire_waiting(LOCK_WAIT, time.sleep)
    except SchedulerAlreadyRunningError as error:
        QMessageBox.information(None, "taskgui", str(error))
        return 1
    except TaskguiError as error:
        QMessageBox.critical(None, "taskgui", str(error))
        return 1
    repository: SqliteRepository | None = None
    try:
        repository = _open_store(path, args.reset_corrupt)
        if repository is None:
            return 1
        clock = SystemClock()
        service = SchedulerService(repository, clock)
        recovery = service.start()
        window = MainWindow(service, clock, location=str(path))
        window.show()
        # Ctrl+C in the terminal or a SIGTERM from the session closes the window the
        # same way as Quit, so running commands are recorded, not orphaned.
        bridge = SignalBridge(app.quit)
        if recovery.quarantined:
            listed = "\n".join(f"task {q.task_id}: {q.error}" for q in recovery.quarantined)
            QMessageBox.warning(
                window,
                "taskgui — tasks set aside",
                "Some stored tasks could not be read and were set aside (kept in the "
                f"database, not scheduled):\n\n{listed}",
            )
        code = app.exec()
        bridge.close()
        _shut_down(service)
        return int(code)
    except TaskguiError as error:
        QMessageBox.critical(None, "taskgui", str(error))
        return 1
    finally:
        if repository is not None:
            repository.close()
        lock.release()
