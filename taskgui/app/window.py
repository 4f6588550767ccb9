"""The composition root: builds the clock, the store, the service and the window.

The only module that sees every layer. It also owns the conversations that happen
before there is a window: a damaged database (move it aside and start afresh only if
the person agrees), a file that cannot be opened. Each ends in a dialog that says what
happened and what to do, never a traceback.

Who runs the schedule is settled in this order:

1. Another window already shows this database: it is asked to come to the front
   (over a local socket, ``ui.single_instance``) and this start exits 0.
2. Nobody holds the scheduler lock: this window takes it and runs the schedule.
3. Someone else holds it (``taskgui daemon``): the window shows the same live view from
   the database and sends its changes to that process, as the CLI does
   (``runtime.remote``); it never starts a second scheduler. If that process stops,
   the window offers to run the schedule itself (``Takeover``): it then takes the
   lock and starts a scheduler here, and the window follows that one instead.

A shared (PostgreSQL) schedule has no lock: its nodes run it, the window follows it
(``app.shared_window``).
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QSystemTrayIcon

from taskgui import __version__
from taskgui.app.handover import hand_over
from taskgui.app.logs import configure_logging
from taskgui.app.notifications import outside_dispatcher
from taskgui.app.opening import open_store as _open_store
from taskgui.app.opening import show_error as _show_error
from taskgui.app.opening import start_failed as _start_failed
from taskgui.app.posix_signals import SignalBridge
from taskgui.app.quitting import HANDOVER_REASON, QUIT_REASON, shut_down
from taskgui.app.wake import ask_on_wake, follow_wake_ups
from taskgui.core.clock import Clock, SystemClock
from taskgui.core.defaults import LOCK_WAIT, QUEUE_PER_WORKER
from taskgui.core.errors import TaskguiError
from taskgui.runtime.conditions.monitor import ConditionMonitor
from taskgui.runtime.main_thread_collector import MainThreadCollector
from taskgui.runtime.remote import RemoteScheduler, describe_owner
from taskgui.runtime.schedule_client import LiveScheduleClient
from taskgui.runtime.service import SchedulerService
from taskgui.store.errors import (
    ForeignDatabaseError,
    SchedulerAlreadyRunningError,
)
from taskgui.store.paths import (
    default_database_path,
    refuse_missing_folder,
    resolve_database_path,
    shared_dsn,
)
from taskgui.store.private_folders import make_config_folder, make_database_folder
from taskgui.store.sqlite.lock import SchedulerLock, refuse_if_holder_lost_its_file
from taskgui.store.sqlite.repository import SqliteRepository
from taskgui.system.collector import freeze_loaded
from taskgui.ui.desktop.autostart import Autostart, launch_command
from taskgui.ui.desktop.settings import Settings
from taskgui.ui.desktop.shell import DesktopShell
from taskgui.ui.desktop.single_instance import SHOW, SingleInstance, server_name
from taskgui.ui.icons import app_icon, app_icon_file
from taskgui.ui.notify.dbus_notifier import desktop_notifier
from taskgui.ui.plain_text import warn
from taskgui.ui.window.main_window import LOCAL_OWNER, MainWindow

if TYPE_CHECKING:  # imported where used: it brings psycopg (see main)
    from taskgui.app.shared_window import SharedSession

log = logging.getLogger("taskgui.app.window")

# The installed desktop entry (packaging/linux): Wayland compositors and notification
# servers find the app's name and icon through it.
DESKTOP_ID = "io.github.taskgui.TaskGui"


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="taskgui", add_help=False)
    parser.add_argument("--db")
    parser.add_argument("--reset-corrupt", action="store_true")
    args, _unknown = parser.parse_known_args(argv)
    return args


def _acquire(lock: SchedulerLock) -> None:
    """Take the scheduler lock, waiting a moment for a CLI command (not for a daemon)."""
    try:
        lock.acquire()
    except SchedulerAlreadyRunningError as error:
        if describe_owner(error.pid).startswith("taskgui daemon"):
            raise  # it will not let go: follow it at once
        lock.acquire_waiting(LOCK_WAIT, time.sleep)


def _session(
    app: QApplication,
    *,
    service: LiveScheduleClient,
    clock: Clock,
    path: Path,
    owner: str,
    instance: SingleInstance,
    settings: Settings,
    run_here: Callable[[DesktopShell], None] | None = None,
    shared: SharedSession | None = None,
) -> tuple[int, DesktopShell]:
    """The window, the tray and notifications around ``service``, until the app quits
    (``shared``: on a shared schedule, where ``path`` is unused)."""
    database = path if path != default_database_path() else None
    autostart = Autostart.for_user(
        launch_command(database) if shared is None else shared.launch_command
    )
    log_file = configure_logging()  # already set up: this only says where the log is
    window = MainWindow(
        service,
        clock,
        location=(location := str(path) if shared is None else shared.location),
        log_file=str(log_file) if log_file else "",
        schedule_owner=owner,
    )
    if shared is not None:
        shared.attach(window)
    ask_on_wake(service, window)  # "14 runs were missed while the computer slept"
    tray_available = QSystemTrayIcon.isSystemTrayAvailable()
    notifier = None
    if not tray_available:
        notifier = desktop_notifier(DESKTOP_ID, app_icon_file())
    outside = outside_dispatcher(settings.notify)  # webhook and mail, off this thread
    shell = DesktopShell(
        window,
        settings,
        autostart,
        tray_available=tray_available,
        notifier=notifier,
        outside=outside,
        clock=clock,
    )
    instance.message_received.connect(shell.handle_message)
    if run_here is not None:
        window.run_here_requested.connect(lambda: run_here(shell))
    # Ctrl+C in the terminal or a SIGTERM from the session quits the same way as Quit,
    # so running commands are recorded, not orphaned (without asking: nobody could answer;
    # app.quit would close the window, and closing without a tray asks what to do).
    bridge = SignalBridge(lambda: shell.request_quit(asked=True))
    shell.start()
    log.info("the window shows %s; %s runs its schedule", location, owner or "nobody")
    code = app.exec()
    bridge.close()
    shell.close()
    outside.close()
    return int(code), shell


def _on_schedule_loaded(repository: SqliteRepository) -> None:
    """Once every stored task is in memory (the window's first snapshot sees to it)."""
    freeze_loaded()  # out of the cyclic collector's reach (system.collector)
    quarantined = repository.quarantined()
    if quarantined:
        listed = "\n".join(f"task {q.task_id}: {q.error}" for q in quarantined)
        QTimer.singleShot(
            0,
            lambda: warn(
                None,
                "taskgui — tasks set aside",
                "Some stored tasks could not be read and were set aside (kept in the "
                f"database, not scheduled):\n\n{listed}",
            ),
        )


def _start_service(
    repository: SqliteRepository, clock: Clock, settings: Settings
) -> SchedulerService:
    """The scheduler over ``repository``, started (its recovery done)."""
    service = SchedulerService(
        repository, clock, workers=settings.workers, queue_per_worker=QUEUE_PER_WORKER
    )
    service.watch_conditions(ConditionMonitor.of_this_machine())
    follow_wake_ups(service, settings)
    service.loaded.connect(
        partial(_on_schedule_loaded, repository), Qt.ConnectionType.SingleShotConnection
    )
    service.start()
    return service


class _LocalSchedule:
    """The schedule run in this process: its lock, its open store and its scheduler."""

    def __init__(
        self, lock: SchedulerLock, repository: SqliteRepository, service: SchedulerService
    ) -> None:
        self.lock = lock
        self.repository = repository
        self.service = service

    def close(self) -> None:
        """Stop the scheduler (every run recorded), then let go of the file."""
        try:
            shut_down(self.service)
        finally:
            self.repository.close()
            self.lock.release()


class Takeover:
    """Runs the schedule in this window once the process it followed has stopped.

    ``run_here`` is what "Run the Schedule in This Window" does: take the lock (as a
    start would: a CLI command holding it briefly is waited for), open the file with
    crash recovery (runs the stopped process left open are recorded as interrupted
    and retried) and hand the new scheduler to the shell, which hands it to the
    window. ``close`` ends whichever of the two this window ends up following.
    """

    def __init__(self, path: Path, settings: Settings, remote: RemoteScheduler) -> None:
        self._path = path
        self._settings = settings
        self._remote = remote
        self.local: _LocalSchedule | None = None

    def run_here(self, shell: DesktopShell) -> None:
        if self.local is not None:
            return
        window = shell.window
        try:
            local = self._take()
        except SchedulerAlreadyRunningError as error:  # another start was quicker
            window.statusBar().showMessage(
                f"{describe_owner(error.pid)} runs this schedule now", 15_000
            )
            return
        except TaskguiError as error:
            _show_error(window, str(error))
            return
        except Exception as error:  # a slot must never raise into Qt
            log.exception("running the schedule in this window failed")
            _show_error(window, f"Could not run the schedule here: {error}")
            return
        if local is None:  # the file is damaged and the person chose to leave it
            return
        self.local = local
        self._remote.shutdown()
        shell.adopt(local.service)
        ask_on_wake(local.service, window)
        log.info("this window now runs %s", self._path)

    def _take(self) -> _LocalSchedule | None:
        lock = SchedulerLock(self._path)
        _acquire(lock)
        try:
            repository = _open_store(self._path, reset_corrupt=False)
            if repository is None:
                lock.release()
                return None
            lock.record_files(repository.files)  # see store.lock: for a CLI to check
            try:
                service = _start_service(repository, SystemClock(), self._settings)
            except BaseException:
                repository.close()
                raise
        except BaseException:
            lock.release()
            raise
        return _LocalSchedule(lock, repository, service)

    def close(self) -> None:
        if self.local is not None:
            self.local.close()
        else:
            self._remote.shutdown()


def _run_here(
    app: QApplication,
    path: Path,
    reset_corrupt: bool,
    instance: SingleInstance,
    settings: Settings,
    *,
    lock: SchedulerLock,
) -> tuple[int, bool]:
    """This window runs the schedule (the caller holds ``lock``). Returns the exit code
    and whether the person asked to keep the schedule running without the window."""
    repository: SqliteRepository | None = None
    try:
        repository = _open_store(path, reset_corrupt)
        if repository is None:
            return 1, False
        lock.record_files(repository.files)  # see store.lock: for a CLI to check
        clock = SystemClock()
        service = _start_service(repository, clock, settings)
        code, shell = _session(
            app,
            service=service,
            clock=clock,
            path=path,
            owner=LOCAL_OWNER,
            instance=instance,
            settings=settings,
        )
        handover = shell.handover_requested
        shut_down(service, HANDOVER_REASON if handover else QUIT_REASON)
        return code, handover
    except ForeignDatabaseError as error:  # someone else's file: leave nothing beside it
        lock.release_and_remove()
        _start_failed(error)
        return 1, False
    except TaskguiError as error:
        _start_failed(error)
        return 1, False
    finally:
        if repository is not None:
            repository.close()


def _hand_over(path: Path, workers: int, log_file: Path | None) -> int:
    """Start taskgui daemon for the schedule this window ran (the lock is free now)."""
    result = hand_over(launch_command(), path, workers)
    if result.done:
        return 0
    where = f"\n\nThe log: {log_file}" if log_file else ""
    _show_error(
        None,
        f"The schedule could not be handed to taskgui daemon ({result.problem}), so it "
        f"is not running now. Start taskgui, or taskgui daemon, again.{where}",
    )
    return 1


def _run_remote(
    app: QApplication,
    path: Path,
    pid: int | None,
    instance: SingleInstance,
    settings: Settings,
) -> int:
    """Another process runs the schedule: show it, and send it our changes."""
    clock = SystemClock()
    try:
        refuse_if_holder_lost_its_file(path)  # it stops soon; never open a fresh file
        # Never move a damaged file aside here: the process running it still uses it.
        repository = SqliteRepository(path)
    except TaskguiError as error:
        _start_failed(error)
        return 1
    try:
        service = RemoteScheduler(repository, clock)
        service.start()
        owner = service.owner or describe_owner(pid)
        log.info("%s runs %s; this window follows it", owner, path)
        takeover = Takeover(path, settings, service)
        code, _shell = _session(
            app,
            service=service,
            clock=clock,
            path=path,
            owner=owner,
            instance=instance,
            settings=settings,
            run_here=takeover.run_here,
        )
        takeover.close()
        return code
    except TaskguiError as error:
        _start_failed(error)
        return 1
    finally:
        repository.close()


def main(argv: list[str] | None = None) -> int:
    """Open the window on the schedule in ``--db`` (or the default database)."""
    args = _parse(list(sys.argv[1:] if argv is None else argv))
    log_file = configure_logging()
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    MainThreadCollector(app).start()  # before any thread starts (system.collector)
    app.setApplicationName("taskgui")
    app.setApplicationDisplayName("taskgui")
    app.setApplicationVersion(__version__)
    app.setDesktopFileName(DESKTOP_ID)
    app.setWindowIcon(app_icon())
    # The shell decides when closing the window quits (not when it hides to the tray,
    # nor when a dialog opened from the tray closes).
    app.setQuitOnLastWindowClosed(False)
    dsn = shared_dsn(args.db)
    if dsn is not None:  # a shared (PostgreSQL) schedule: nodes run it
        # Only here: it imports psycopg, 0.34 s of every start when it sat at the top.
        from taskgui.app.shared_window import run_shared  # noqa: PLC0415

        return run_shared(app, dsn, _session)
    path = resolve_database_path(args.db)
    instance = SingleInstance(server_name(path))
    if instance.send(SHOW):
        log.info("taskgui already shows %s; brought its window to the front", path)
        return 0
    if not instance.listen() and instance.send(SHOW):  # another start won a race
        return 0
    try:
        if path != default_database_path():  # --db or TASKGUI_DB: a typo's is not made
            refuse_missing_folder(path, "--db" if args.db else "$TASKGUI_DB")
        make_config_folder()
        # In this order: the lock file lives in the folder, which a new account lacks.
        make_database_folder(path)
    except TaskguiError as error:
        instance.close()
        _start_failed(error)
        return 1
    settings = Settings.for_user()
    try:
        lock = SchedulerLock(path)
        try:
            _acquire(lock)
        except SchedulerAlreadyRunningError as error:
            return _run_remote(app, path, error.pid, instance, settings)
        except TaskguiError as error:
            _start_failed(error)
            return 1
        try:
            code, handover = _run_here(app, path, args.reset_corrupt, instance, settings, lock=lock)
        finally:
            lock.release()
        return _hand_over(path, settings.workers, log_file) if handover else code
    finally:
        instance.close()
