"""Opening a database for scheduling, and picking up after whatever happened last time.

The order matters. First, runs that a previous process left in progress (it crashed,
was killed, the machine lost power) are closed as ``interrupted``; then the tasks are
loaded into the engine, which sends each interrupted task to its retry policy; then
those decisions are committed. Past-due tasks meet their misfire policy at the
scheduler's first ``due``. A crash therefore loses at most the runs in flight, and those
are recorded and retried: at-least-once delivery.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from taskgui.core.engine import Engine
from taskgui.core.events import Event
from taskgui.store.connection import move_aside
from taskgui.store.errors import DatabaseCorruptError
from taskgui.store.repository import QuarantinedTask, RunRecord, TaskRepository
from taskgui.store.sqlite import SqliteRepository


@dataclass(frozen=True, slots=True)
class Recovery:
    """What opening the schedule found and did, for the log and the user."""

    interrupted: list[RunRecord]
    quarantined: list[QuarantinedTask]
    events: list[Event]
    task_count: int


def open_sqlite(
    path: Path, now: datetime, *, reset_corrupt: bool = False, history_limit: int | None = None
) -> tuple[SqliteRepository, Path | None]:
    """Open the database; with ``reset_corrupt``, move a damaged file aside first.

    Returns the repository and where a damaged file was moved (None if it was fine).
    Without ``reset_corrupt`` a damaged file raises DatabaseCorruptError and is left
    exactly as it was: only the person decides to start afresh.
    """
    kwargs = {} if history_limit is None else {"history_limit": history_limit}
    try:
        repository = SqliteRepository(path, **kwargs)
    except DatabaseCorruptError:
        if not reset_corrupt:
            raise
    else:
        try:
            repository.check_integrity()
        except BaseException as error:
            # Closed before the file moves (its -wal and -shm with it), and before
            # the error leaves: the traceback would keep the connection open.
            repository.close()
            if not (reset_corrupt and isinstance(error, DatabaseCorruptError)):
                raise
        else:
            return repository, None
    moved = move_aside(path, now)
    return SqliteRepository(path, **kwargs), moved


def recover(repository: TaskRepository, engine: Engine, now: datetime) -> Recovery:
    """Close runs left open, load every task into ``engine``, commit its decisions."""
    interrupted = repository.interrupt_open_runs(now)
    # Loading allocates a few objects per task and frees almost none; the cyclic
    # collector would walk every one of them again and again while the heap grows
    # (a third of a 100,000-task cold start). Nothing here makes cycles to collect.
    collecting = gc.isenabled()
    gc.disable()
    try:
        loaded = repository.load_for_start(now)
        events = engine.load(loaded.tasks, now, loaded.deferred)
    finally:
        if collecting:
            gc.enable()
    repository.apply(events, now)
    return Recovery(interrupted, loaded.quarantined, events, len(engine))
