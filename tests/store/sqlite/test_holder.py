"""SQLite's answer to "who runs this schedule": the scheduler lock and the pid in it."""

from __future__ import annotations

import os
from pathlib import Path

from taskgui.store.protocols import ScheduleHolder
from taskgui.store.sqlite.lock import SchedulerLock, lock_path_for
from taskgui.store.sqlite.repository import SqliteRepository


def test_the_holder_is_the_process_holding_the_scheduler_lock(tmp_path: Path) -> None:
    database = tmp_path / "tasks.sqlite3"
    repository = SqliteRepository(database)
    lock = SchedulerLock(database)
    try:
        assert repository.schedule_holder() is None
        lock.acquire()
        assert repository.schedule_holder() == ScheduleHolder(os.getpid())
        lock.release()
        assert repository.schedule_holder() is None  # a stale lock file is nobody
    finally:
        lock.release()
        repository.close()


def test_a_holder_that_wrote_no_pid_is_still_a_holder(tmp_path: Path) -> None:
    database = tmp_path / "tasks.sqlite3"
    repository = SqliteRepository(database)
    lock = SchedulerLock(database)
    try:
        lock.acquire()
        lock_path_for(database).write_text("not a pid\n", encoding="utf-8")
        assert repository.schedule_holder() == ScheduleHolder(None)
    finally:
        lock.release()
        repository.close()
