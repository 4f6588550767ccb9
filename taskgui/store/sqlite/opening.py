"""Opening a SQLite database for scheduling, moving a damaged one aside only if asked."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from taskgui.store.errors import DatabaseCorruptError
from taskgui.store.sqlite.connection import move_aside
from taskgui.store.sqlite.repository import SqliteRepository


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
