"""Opening the database for a command, and reaching whoever runs its schedule."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from taskgui.cli.context import Context, note
from taskgui.control.store_client import StoreClient
from taskgui.store.memory import MemoryRepository
from taskgui.store.protocols import ScheduleStore, TaskRepository
from taskgui.store.sqlite.lock import (
    SchedulerLock,
    holder_pid,
    is_locked,
    lock_path_for,
    refuse_if_holder_lost_its_file,
)
from taskgui.store.sqlite.repository import SqliteRepository


@contextmanager
def open_database(ctx: Context) -> Iterator[SqliteRepository]:
    """Open the database (moving a damaged one aside only if asked), close it after."""
    refuse_if_holder_lost_its_file(ctx.database)  # before anything creates a file
    repository, moved = ctx.open_store(ctx.database, ctx.clock.now(), ctx.reset_corrupt)
    if moved is not None:
        note(f"{ctx.database} was damaged; moved it to {moved} and started a fresh database")
    try:
        yield repository
    finally:
        repository.close()


@contextmanager
def reader(ctx: Context) -> Iterator[TaskRepository]:
    """For commands that only read: a database that does not exist reads as empty.

    Nothing is created for them, not the file and not its folders: 'taskgui show 5'
    on a fresh account (or a mistyped --db file name) says there is no task 5 and
    leaves no empty database behind; a --db folder that does not exist is refused
    before this (``refuse_missing_folder``).
    """
    if not exists(ctx.database):
        yield MemoryRepository()
        return
    with open_database(ctx) as repository:
        yield repository


def exists(database: Path) -> bool:
    """Whether the path names something (a broken symlink too: opening it then says so).

    A database that is missing because it was deleted under the process that runs its
    schedule is not "empty": that is refused first, with what happened.
    """
    refuse_if_holder_lost_its_file(database)
    return database.exists() or database.is_symlink()


def scheduled(ctx: Context) -> bool:
    """Whether a process runs the schedule of the database now (holds its lock)."""
    return is_locked(ctx.database)


def client(ctx: Context, store: ScheduleStore) -> StoreClient:
    """Changes performed here under the lock, or requested of whoever holds it."""

    def holder() -> str:
        pid = holder_pid(lock_path_for(ctx.database))
        return f"process {pid}" if pid else "another process"

    return StoreClient(
        store=store,
        lock=SchedulerLock(ctx.database),
        clock=ctx.clock,
        running=lambda: is_locked(ctx.database),
        holder=holder,
        place=str(ctx.database),
        sleep=time.sleep,
        timeout=ctx.request_timeout,
    )
