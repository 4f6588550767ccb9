"""SQLite's answer to "who runs this schedule": the scheduler lock and the pid in it."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from taskgui.store.protocols import ScheduleHolder
from taskgui.store.sqlite.lock import SchedulerLock, holder_pid, lock_path_for
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


def test_the_holder_is_never_read_as_nobody_while_it_records_its_files(tmp_path: Path) -> None:
    """A window hands its schedule to a daemon, sees the daemon's pid, and asks again:
    the daemon recording its open files meanwhile must not make the answer "nobody"."""
    database = tmp_path / "tasks.sqlite3"
    repository = SqliteRepository(database)
    lock = SchedulerLock(database)
    lock.acquire()
    answers: list[int | None] = []
    stop = threading.Event()

    def keep_asking() -> None:
        while not stop.is_set():
            answers.append(holder_pid(lock_path_for(database)))

    reader = threading.Thread(target=keep_asking)
    reader.start()
    try:
        for _ in range(3000):
            lock.record_files(repository.files)
    finally:
        stop.set()
        reader.join(timeout=10)
        lock.release()
        repository.close()
    assert len(answers) > 100  # the reader really read while the files were recorded
    assert set(answers) == {os.getpid()}
