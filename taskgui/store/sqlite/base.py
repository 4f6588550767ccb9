"""The SQLite repository's plumbing: the connection, its transactions, the file's checks
and the change feed, shared by its reads (``reads``) and its writes (``repository``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import suppress
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any, NoReturn

from taskgui.core.states import RunOutcome
from taskgui.core.status import RunId
from taskgui.core.task import TaskId, TaskSpec
from taskgui.store import codec
from taskgui.store.errors import DatabaseCorruptError
from taskgui.store.protocols import (
    DEFAULT_HISTORY_LIMIT,
    TaskBatch,
    unstorable_text_error,
)
from taskgui.store.sqlite.connection import connect, translate_errors
from taskgui.store.sqlite.file_identity import OpenFiles, save_open_database
from taskgui.store.sqlite.schema import migrate
from taskgui.store.sqlite.task_stream import stream_tasks
from taskgui.store.sqlite.wal_checkpoints import WalCheckpointer

SELECT_TASKS = f"SELECT {', '.join(codec.TASK_COLUMNS)} FROM tasks"


# The two kinds of history, each kept to the limit: records of missed occurrences, and
# finished runs (open ones never count).
KIND_OF_HISTORY = {
    True: f"outcome = '{RunOutcome.MISSED.value}'",
    False: f"outcome IS NOT NULL AND outcome != '{RunOutcome.MISSED.value}'",
}


class _Transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``, or ``ROLLBACK`` if the body raises.

    A class rather than ``@contextmanager`` wrapped in ``translate_errors``: every
    durable add, cancel and dispatch pays for this, and those generator-based context
    managers cost more than the statements' own Python overhead. Errors are translated
    into StoreErrors exactly as ``translate_errors`` does, only on the way out.
    """

    __slots__ = ("_connection", "_path")

    def __init__(self, connection: sqlite3.Connection, path: Path) -> None:
        self._connection = connection
        self._path = path

    def __enter__(self) -> sqlite3.Connection:
        try:
            self._connection.execute("BEGIN IMMEDIATE")
        except BaseException as error:
            reraise_translated(error, self._path)
        return self._connection

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        connection = self._connection
        if exc is None:
            try:
                connection.execute("COMMIT")
                return
            except BaseException as error:
                exc = error  # e.g. a deferred constraint: the transaction is still open
        # After some errors (a full disk, an I/O error) SQLite has rolled back already;
        # a ROLLBACK then fails with "no transaction is active", which would replace
        # the error a person can act on.
        if connection.in_transaction:
            with suppress(sqlite3.Error):  # the error that made us roll back is the one
                connection.execute("ROLLBACK")
        reraise_translated(exc, self._path)


def reraise_translated(error: BaseException, path: Path) -> NoReturn:
    with translate_errors(path):
        raise error


def refuse_unstorable(specs: Iterable[TaskSpec]) -> None:
    """Raise InvalidTaskError for the first spec whose text sqlite3 cannot bind.

    Called only after a UnicodeEncodeError (the transaction already rolled back), so
    the usual write pays nothing for the check.
    """
    for spec in specs:
        error = unstorable_text_error(spec)
        if error is not None:
            raise error from None


class SqliteBase:
    """The connection to one SQLite file and what every use of it needs."""

    """ScheduleStore over one SQLite file. Use from one thread at a time."""

    def __init__(self, path: Path, *, history_limit: int = DEFAULT_HISTORY_LIMIT) -> None:
        if history_limit < 1:
            raise ValueError("history_limit must be at least 1")
        self.path = path
        self.history_limit = history_limit
        # Named to a command in TASKGUI_DB: absolute, so it holds in any working folder.
        self.location: str | None = str(path.resolve())
        self._connection = connect(path)
        try:
            with translate_errors(path):
                migrate(self._connection, path)
            # What the path names now, while we hold it open: see file_identity.py.
            self.files = OpenFiles.of(path)
            # The change feed's last look: commits by others from here on are news.
            self._seen_version = self.data_version()
        except BaseException:
            self._connection.close()
            raise
        # Engine run ids live for one process; the rows they map to are ours.
        self._run_rows: dict[RunId, int] = {}
        # Finished runs kept per task and kind (missed records or runs), where known:
        # history is pruned only when a task goes over its limit, not with a DELETE
        # after every run.
        self._finished: dict[tuple[TaskId, bool], int] = {}
        # The definition last written whole for each task lately, by identity: a change
        # of status alone then writes the status columns only (see repository.py).
        self._written_specs: dict[TaskId, TaskSpec] = {}

    # ------------------------------------------------------------ plumbing

    def _transaction(self) -> _Transaction:
        return _Transaction(self._connection, self.path)

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with translate_errors(self.path):
            return self._connection.execute(sql, params).fetchall()

    def close(self) -> None:
        if self.files.problem(companions=False) is not None:
            # Our -wal stays at the path on close: emptied, so that whatever file is
            # there now does not take our log for its own (see file_identity).
            with suppress(sqlite3.Error):
                self._connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self._connection.close()

    def check_integrity(self) -> None:
        """Raise DatabaseCorruptError if SQLite finds the file damaged.

        ``quick_check`` reads every page but skips the index cross-checks, which keeps
        it to a few milliseconds per 10,000 tasks: cheap enough for every start.
        """
        rows = self._query("PRAGMA quick_check")
        problems = [str(row[0]) for row in rows if row[0] != "ok"]
        if problems:
            raise DatabaseCorruptError(
                f"{self.path} is damaged ({'; '.join(problems[:3])}); move it aside and "
                "start a fresh one (taskgui --reset-corrupt), or restore it from a backup",
                self.path,
            )

    def verify_file(self, *, companions: bool = True) -> None:
        """Raise DatabaseReplacedError if the path no longer names the open file (or,
        with ``companions``, its -wal and -shm): one ``stat`` each."""
        self.files.verify(companions=companions)

    def save_what_is_open(self, now: datetime) -> str:
        """After ``verify_file`` failed: keep what this connection still reads, and
        say what was done (see ``file_identity.save_open_database``)."""
        return save_open_database(self._connection, self.files, now)

    def data_version(self) -> int:
        """Changes when *another* connection commits: the cheap way to notice the CLI."""
        return int(self._query("PRAGMA data_version")[0][0])

    # The change feed: ``PRAGMA data_version`` changes only when another connection
    # commits, so this process's own writes never wake it.

    def changed(self) -> bool:
        version = self.data_version()
        if version == self._seen_version:
            return False
        self._seen_version = version
        return True

    def fileno(self) -> int | None:
        return None  # SQLite has no channel to be told on: see watch_paths

    def watch_paths(self) -> tuple[str, ...]:
        # A commit appends to the -wal (and a checkpoint or a rollback-journal commit
        # writes the file itself), so a file watcher on both wakes for every commit.
        return (str(self.path), f"{self.path}-wal")

    def task_stream(self) -> Callable[[], Iterator[TaskBatch]]:
        """Every task read on a read-only connection of its own (see task_stream)."""
        path = self.path
        return lambda: stream_tasks(path)

    def take_over_checkpoints(self) -> Callable[[], WalCheckpointer]:
        """Stop SQLite checkpointing inside commits; the owner checkpoints instead.

        An automatic checkpoint lands in whichever commit crosses 1,000 WAL pages and
        stalls it for milliseconds; the scheduler checkpoints from a connection of its
        own, on a thread of its own (``taskgui.store.sqlite.wal_checkpoints``), which
        the returned callable opens.
        """
        self._query("PRAGMA wal_autocheckpoint = 0")
        path = self.path
        return lambda: WalCheckpointer(path)
