"""``taskgui daemon``: the scheduler service without a window.

Runs until SIGINT or SIGTERM. On either it stops dispatching, gives running commands a
grace period, then records any still going as interrupted (retried at the next start),
and exits 0. If its database file is deleted or replaced under it, it stops the same
way and exits 1, saying what happened and what it kept. Logs go to
``platformdirs.user_log_dir("taskgui")/taskgui.log`` and stderr, with a line for each
failed attempt and each task that gives up (``RunLog``).
"""

from __future__ import annotations

import logging
import logging.handlers
import os
import sys
import time
from pathlib import Path

from PySide6.QtCore import QCoreApplication
from PySide6.QtDBus import QDBusConnection

from taskgui.app.logs import configure_logging
from taskgui.app.notifications import OutsideNotifications
from taskgui.app.posix_signals import SignalBridge
from taskgui.core.clock import SystemClock
from taskgui.core.defaults import DEFAULT_WORKERS, LOCK_WAIT, QUEUE_PER_WORKER, SHUTDOWN_GRACE
from taskgui.core.duration import format_duration
from taskgui.core.errors import TaskguiError
from taskgui.core.wake import WakeKind, WakePolicy
from taskgui.runtime.conditions.monitor import ConditionMonitor
from taskgui.runtime.conditions.sleep_watch import SleepWatch
from taskgui.runtime.main_thread_collector import MainThreadCollector
from taskgui.runtime.notify_settings import NotifySettings
from taskgui.runtime.run_log import RunLog
from taskgui.runtime.service import SchedulerService
from taskgui.runtime.wake_settings import read_wake_policy
from taskgui.store.errors import ForeignDatabaseError
from taskgui.store.private_folders import make_database_folder
from taskgui.store.sqlite.lock import SchedulerLock
from taskgui.store.sqlite.opening import open_sqlite
from taskgui.system.collector import freeze_loaded

log = logging.getLogger("taskgui.daemon")


def _start_failed(error: TaskguiError) -> int:
    """The one line a person sees on stderr, and the same in the log file."""
    print(f"taskgui: error: {error}", file=sys.stderr)
    # The stderr handler is skipped: the line above is the CLI's error format.
    log.error("the daemon could not start: %s", error, extra={"file_only": True})
    return 1


def _headless(policy: WakePolicy) -> str:
    """What a wake-up does here: "ask" spreads, nobody being there to answer."""
    if policy.kind is WakeKind.ASK:
        return f"spread the catch-ups over {format_duration(policy.spread)} (nobody to ask)"
    return policy.describe()


def run_daemon(
    db_path: Path,
    workers: int = DEFAULT_WORKERS,
    reset_corrupt: bool = False,
    *,
    on_wake: WakePolicy | None = None,
) -> int:
    """Run the schedule of ``db_path`` headless until SIGINT/SIGTERM; return the exit code.

    ``on_wake``: the global wake-up policy (None: the one in the settings); nobody
    can answer "ask" here, so it spreads."""
    log_file = configure_logging()
    clock = SystemClock()
    app = QCoreApplication.instance() or QCoreApplication(sys.argv[:1])
    lock = SchedulerLock(db_path)
    try:
        # In this order: the lock file lives in the folder, which a new account lacks.
        make_database_folder(db_path)
        lock.acquire_waiting(LOCK_WAIT, time.sleep)
        repository, moved = open_sqlite(db_path, clock.now(), reset_corrupt=reset_corrupt)
    except ForeignDatabaseError as error:  # someone else's file: leave nothing beside it
        lock.release_and_remove()
        return _start_failed(error)
    except TaskguiError as error:
        lock.release()
        return _start_failed(error)
    if moved is not None:
        log.warning("the damaged database was moved to %s; started a fresh one", moved)
    # A CLI started while we run on a file deleted under us must be able to tell.
    lock.record_files(repository.files)
    # Before the service's threads start (system.collector); not before the lock and the
    # file: its timer is Qt's first use of logging, and a start that fails there must
    # print only its one line (Qt would add a warning where it cannot read its config).
    MainThreadCollector(app).start()
    service = SchedulerService(
        repository, clock, workers=workers, queue_per_worker=QUEUE_PER_WORKER
    )
    service.watch_conditions(ConditionMonitor.of_this_machine())
    notify_settings = NotifySettings.for_user()
    # The flag's policy, else the Settings' read at each wake-up (the window may change it).
    service.set_wake_policy(
        on_wake or (lambda: read_wake_policy(notify_settings.store)), can_ask=False
    )
    service.watch_sleep(SleepWatch(QDBusConnection.systemBus()))
    # The service logs every error it reports (error_occurred is for a window to show
    # them): logging them here too wrote each one twice.
    # No window: failures go to the log. Kept in a name for the whole run, because Qt
    # holds the slots of a plain object only as long as the object lives.
    run_log = RunLog(service, service.task, log)
    outside = OutsideNotifications(service, service.task, clock, notify_settings)
    service.stopped.connect(app.quit)
    lost: list[str] = []  # the database file went away: stop, and exit 1 with why
    service.store_lost.connect(lost.append)
    service.store_lost.connect(
        lambda _message: service.shutdown(SHUTDOWN_GRACE, "its database file went away")
    )
    bridge = SignalBridge(lambda: service.shutdown(SHUTDOWN_GRACE, "taskgui daemon was stopped"))
    # Once it is all in memory, out of the cyclic collector's reach (system.collector).
    service.loaded.connect(freeze_loaded)
    try:
        recovery = service.start()
        log.info(
            "taskgui daemon (pid %d) runs %s: %d tasks, %d workers, after a sleep: %s%s",
            os.getpid(),
            db_path,
            recovery.task_count,
            workers,
            _headless(service.wake_policy),
            f", log {log_file}" if log_file else "",
        )
        for quarantined in recovery.quarantined:  # more are reported as they are read
            log.error("task %s could not be read: %s", quarantined.task_id, quarantined.error)
        run_log.recovered(recovery.events)
        app.exec()
    except TaskguiError as error:
        return _start_failed(error)
    finally:
        outside.close()
        bridge.close()
        repository.close()
        lock.release()
    log.info("taskgui daemon stopped")
    if lost:
        print(f"taskgui: error: {lost[0]}", file=sys.stderr)
        return 1
    return 0
