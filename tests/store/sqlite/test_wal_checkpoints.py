"""WalCheckpointer: a second connection that folds the WAL back while another commits.

Real SQLite files in tmp_path; the writer is the repository the scheduler uses, with
its automatic checkpoints turned off as the scheduler turns them off.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from taskgui.core.task import Command, TaskSpec
from taskgui.store.errors import StoreError
from taskgui.store.sqlite.repository import SqliteRepository
from taskgui.store.sqlite.wal_checkpoints import WalCheckpointer

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def specs(count: int, prefix: str = "t") -> list[TaskSpec]:
    return [
        TaskSpec(name=f"{prefix}{index}", command=Command(line="true"), first_run_at=NOW)
        for index in range(count)
    ]


def test_a_checkpoint_copies_what_the_writer_committed(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"
    repository = SqliteRepository(path)
    repository.take_over_checkpoints()
    checkpointer = WalCheckpointer(path)
    try:
        size = path.stat().st_size
        repository.add_tasks(specs(500), NOW)
        in_wal, copied = checkpointer.checkpoint()
        assert in_wal > 0 and copied == in_wal  # caught up: the writer was idle
        assert path.stat().st_size > size  # the tasks are in the database file now
    finally:
        checkpointer.close()
        repository.close()


def test_checkpoints_and_commits_go_on_side_by_side(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"
    repository = SqliteRepository(path)
    repository.take_over_checkpoints()
    checkpointer = WalCheckpointer(path)
    stop = threading.Event()
    failures: list[BaseException] = []
    checkpoints = 0

    def checkpoint_until_stopped() -> None:
        nonlocal checkpoints
        try:
            while not stop.is_set():
                checkpointer.checkpoint()
                checkpoints += 1
        except BaseException as error:  # reported by the test below
            failures.append(error)

    thread = threading.Thread(target=checkpoint_until_stopped)
    thread.start()
    try:
        for batch in range(100):
            repository.add_tasks(specs(20, f"b{batch}-"), NOW)  # never busy, never fails
    finally:
        stop.set()
        thread.join(10)
        checkpointer.close()
    assert failures == [] and checkpoints > 0
    with contextlib.closing(sqlite3.connect(path)) as reader:
        assert reader.execute("SELECT count(*) FROM tasks").fetchone() == (2_000,)
    repository.close()


def test_a_missing_database_is_refused_and_not_created(tmp_path: Path) -> None:
    missing = tmp_path / "gone.sqlite3"
    with pytest.raises(StoreError):
        WalCheckpointer(missing).checkpoint()
    assert not missing.exists()
