"""The SQLite repository: the file a person trusts with their schedule.

Every write is one short ``BEGIN IMMEDIATE`` transaction, so a crash at any moment
leaves either all of an operation on disk or none of it. Statements are prepared once
(sqlite3 caches them by text) and rows are plain tuples, because the scheduler writes
on every dispatch and finish.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from contextlib import suppress
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any, NoReturn

from taskgui.core.engine.deferred import DeferredTasks
from taskgui.core.errors import TaskNotFoundError
from taskgui.core.events import (
    Event,
    OccurrencesSkipped,
    RunDispatched,
    RunFinished,
    RunWithdrawn,
    TaskChanged,
    TaskDropped,
    TaskRemoved,
)
from taskgui.core.states import RunOutcome, SlotKind, TaskState, WaitReason
from taskgui.core.status import RunId, RunResult, TaskSnapshot
from taskgui.core.task import TaskId, TaskSpec
from taskgui.store import codec
from taskgui.store.errors import CodecError, DatabaseCorruptError
from taskgui.store.protocols import (
    DEFAULT_HISTORY_LIMIT,
    INTERRUPTED_ERROR,
    LoadResult,
    QuarantinedTask,
    RunRecord,
    StartLoad,
    TaskChanges,
    cap_output,
    storable_text,
    unstorable_text_error,
)
from taskgui.store.requests import RequestRow
from taskgui.store.sqlite import follow
from taskgui.store.sqlite.connection import connect, translate_errors
from taskgui.store.sqlite.deferred_source import (
    SELECT_DEFERRED,
    SELECT_LOADED_WHOLE,
    SqliteTaskSource,
)
from taskgui.store.sqlite.file_identity import OpenFiles, save_open_database
from taskgui.store.sqlite.insert import insert_new_tasks
from taskgui.store.sqlite.schema import migrate
from taskgui.store.sqlite.wal_checkpoints import WalCheckpointer
from taskgui.system.collector import collector_paused

_SELECT_TASKS = f"SELECT {', '.join(codec.TASK_COLUMNS)} FROM tasks"
# ``waiting`` is written with every change but never read back into a snapshot: it is
# the running process's live view, for other processes (see ``wait_reasons``).
_UPDATE_TASK = (
    "UPDATE tasks SET "
    + ", ".join(f"{column} = ?" for column in codec.TASK_COLUMNS[1:])
    + ", updated_at = ?, waiting = ? WHERE id = ?"
)
# A row set aside once keeps its first reason; a row already deleted has nothing to keep.
_SET_ASIDE = (
    "INSERT OR IGNORE INTO quarantine (task_id, error, at) "
    "SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM tasks WHERE id = ?)"
)
_RUN_COLUMNS = (
    "id, task_id, attempt, kind, scheduled_at, started_at, finished_at, outcome, "
    "exit_code, error, output, pid, missed"
)


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
            _reraise_translated(error, self._path)
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
        _reraise_translated(exc, self._path)


def _reraise_translated(error: BaseException, path: Path) -> NoReturn:
    with translate_errors(path):
        raise error


def _refuse_unstorable(specs: Iterable[TaskSpec]) -> None:
    """Raise InvalidTaskError for the first spec whose text sqlite3 cannot bind.

    Called only after a UnicodeEncodeError (the transaction already rolled back), so
    the usual write pays nothing for the check.
    """
    for spec in specs:
        error = unstorable_text_error(spec)
        if error is not None:
            raise error from None


def _run_record(row: tuple[Any, ...]) -> RunRecord:
    return RunRecord(
        id=row[0],
        task_id=row[1],
        attempt=row[2],
        kind=SlotKind(row[3]),
        scheduled_at=codec.from_us(row[4]),
        started_at=codec.opt_from_us(row[5]),
        finished_at=codec.opt_from_us(row[6]),
        outcome=RunOutcome(row[7]) if row[7] else None,
        exit_code=row[8],
        error=row[9],
        output=row[10],
        pid=row[11],
        missed=row[12] or 0,
    )


class SqliteRepository:
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
        return None  # SQLite cannot wake anybody: asked on a timer

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

    # -------------------------------------------------------------- writes

    def add_tasks(self, specs: Sequence[TaskSpec], now: datetime) -> list[TaskSpec]:
        now_us = codec.to_us(now)
        values = codec.new_task_values
        try:
            with self._transaction() as connection:
                if len(specs) == 1:
                    # One task (a person pressed Add): SQLite picks the id.
                    last_id = insert_new_tasks(connection, [(None, *values(specs[0])[1:])], now_us)
                    assert last_id is not None
                    stored = [specs[0].with_id(last_id)]
                else:
                    # Inside BEGIN IMMEDIATE nobody else can insert, so ids can be handed
                    # out up front and the whole batch written in a few statements.
                    row = connection.execute(
                        "SELECT seq FROM sqlite_sequence WHERE name = 'tasks'"
                    ).fetchone()
                    next_id = (row[0] if row else 0) + 1
                    stored = [spec.with_id(next_id + offset) for offset, spec in enumerate(specs)]
                    insert_new_tasks(connection, [values(spec) for spec in stored], now_us)
        except UnicodeEncodeError:
            _refuse_unstorable(specs)
            raise
        for spec in stored:  # new: no history yet
            self._finished[spec.id, False] = self._finished[spec.id, True] = 0
        return stored

    def apply(
        self,
        events: Sequence[Event],
        now: datetime,
        results: Mapping[RunId, RunResult] | None = None,
    ) -> None:
        if not events:
            return
        now_us = codec.to_us(now)
        results = results or {}
        try:
            self._apply(events, now_us, results)
        except UnicodeEncodeError:
            _refuse_unstorable(
                event.task.spec for event in events if isinstance(event, TaskChanged)
            )
            raise

    def _apply(
        self, events: Sequence[Event], now_us: int, results: Mapping[RunId, RunResult]
    ) -> None:
        with self._transaction() as connection:
            execute = connection.execute
            for event in events:
                if isinstance(event, TaskChanged):
                    snapshot = event.task
                    execute(
                        _UPDATE_TASK,
                        (
                            *codec.spec_values(snapshot.spec),
                            *codec.status_values(snapshot.status),
                            now_us,
                            _waiting_value(snapshot.status.waiting),
                            snapshot.spec.id,
                        ),
                    )
                elif isinstance(event, RunDispatched):
                    ticket = event.run
                    cursor = execute(
                        "INSERT INTO runs (task_id, attempt, kind, scheduled_at, started_at) "
                        "VALUES (?, ?, ?, ?, ?)",
                        (
                            ticket.task_id,
                            ticket.attempt,
                            ticket.kind.value,
                            codec.to_us(ticket.scheduled_at),
                            codec.to_us(ticket.dispatched_at),
                        ),
                    )
                    assert cursor.lastrowid is not None
                    self._run_rows[ticket.run_id] = cursor.lastrowid
                elif isinstance(event, RunWithdrawn):  # it never happened
                    row_id = self._run_rows.pop(event.run.run_id, None)
                    if row_id is not None:
                        execute("DELETE FROM runs WHERE id = ?", (row_id,))
                elif isinstance(event, RunFinished):
                    self._finish_run(connection, event, results.get(event.run.run_id))
                elif isinstance(event, OccurrencesSkipped):
                    count = f"{event.count}" if event.exact else f"at least {event.count}"
                    plural = "s" if event.count != 1 else ""
                    execute(
                        "INSERT INTO runs (task_id, attempt, kind, scheduled_at, finished_at, "
                        "outcome, error, missed) VALUES (?, 0, ?, ?, ?, ?, ?, ?)",
                        (
                            event.task_id,
                            SlotKind.OCCURRENCE.value,
                            codec.to_us(event.first_at),
                            now_us,
                            RunOutcome.MISSED.value,
                            f"skipped {count} occurrence{plural} ({_SKIP_WHY[event.reason]})",
                            event.count,
                        ),
                    )
                    self._kept_one_more(connection, event.task_id, missed=True)
                elif isinstance(event, TaskRemoved):
                    execute("DELETE FROM tasks WHERE id = ?", (event.task_id,))
                    self._finished.pop((event.task_id, False), None)
                    self._finished.pop((event.task_id, True), None)
                elif isinstance(event, TaskDropped):  # kept, and left out from now on
                    execute(_SET_ASIDE, (event.task_id, event.reason, now_us, event.task_id))

    def _finish_run(
        self, connection: sqlite3.Connection, event: RunFinished, result: RunResult | None
    ) -> None:
        row_id = self._run_rows.pop(event.run.run_id, None)
        if row_id is None:
            return  # its task was deleted, and the row with it
        result = result or RunResult()
        connection.execute(
            "UPDATE runs SET finished_at = ?, outcome = ?, exit_code = ?, error = ?, "
            "output = ? WHERE id = ?",
            (
                codec.to_us(event.finished_at),
                event.outcome.value,
                result.exit_code,
                None if result.error is None else storable_text(result.error),
                cap_output(result.output),
                row_id,
            ),
        )
        # Counted with what its outcome makes it (no runner reports "missed", but the
        # row would be one).
        missed = event.outcome is RunOutcome.MISSED
        self._kept_one_more(connection, event.run.task_id, missed=missed)

    def _kept_one_more(
        self, connection: sqlite3.Connection, task_id: TaskId, *, missed: bool
    ) -> None:
        """A finished run (or a missed record) of the task was written: prune if it
        is over its limit.

        Missed records and runs are kept ``history_limit`` each: a catch-up that runs
        a hundred late occurrences must not push the record of the ones it could not
        run out of the history the moment it ends.

        Counted here after a first look per task and process, because a DELETE after
        every run would cost each run a statement. Counting too high (a transaction
        that failed) only means a prune that finds nothing to delete.
        """
        kept = self._finished.get((task_id, missed))
        if kept is None:
            kept = connection.execute(
                f"SELECT count(*) FROM runs WHERE task_id = ? AND {_KIND_OF_HISTORY[missed]}",
                (task_id,),
            ).fetchone()[0]
        else:
            kept += 1
        if kept > self.history_limit:
            self._prune(connection, task_id, missed)
            kept = self.history_limit
        self._finished[task_id, missed] = kept

    def _prune(self, connection: sqlite3.Connection, task_id: TaskId, missed: bool) -> None:
        """Keep the newest ``history_limit`` finished runs (or missed records) of a task,
        open runs aside."""
        kind = _KIND_OF_HISTORY[missed]
        connection.execute(
            f"DELETE FROM runs WHERE task_id = ? AND {kind} AND id < ("
            f"SELECT id FROM runs WHERE task_id = ? AND {kind} "
            "ORDER BY id DESC LIMIT 1 OFFSET ?)",
            (task_id, task_id, self.history_limit - 1),
        )

    def record_run_pid(self, run_id: RunId, pid: int) -> None:
        row_id = self._run_rows.get(run_id)
        if row_id is None:
            return
        # One statement, so SQLite's own transaction around it is enough: one call,
        # where BEGIN and COMMIT of our own would be three.
        self._query("UPDATE runs SET pid = ? WHERE id = ?", (pid, row_id))

    def record_run_output(self, run_id: RunId, output: str) -> None:
        row_id = self._run_rows.get(run_id)
        if row_id is None:
            return
        self._query(
            "UPDATE runs SET output = ? WHERE id = ? AND outcome IS NULL",
            (cap_output(output), row_id),
        )

    def open_runs(self) -> list[RunRecord]:
        """The runs in progress (as the process running the schedule last wrote them)."""
        return [
            _run_record(row)
            for row in self._query(
                f"SELECT {_RUN_COLUMNS} FROM runs WHERE outcome IS NULL ORDER BY id"
            )
        ]

    def interrupt_open_runs(self, now: datetime) -> list[RunRecord]:
        with self._transaction() as connection:
            rows = connection.execute(
                f"SELECT {_RUN_COLUMNS} FROM runs WHERE outcome IS NULL ORDER BY id"
            ).fetchall()
            connection.execute(
                "UPDATE runs SET outcome = ?, finished_at = ?, error = ? WHERE outcome IS NULL",
                (RunOutcome.INTERRUPTED.value, codec.to_us(now), INTERRUPTED_ERROR),
            )
            # What the previous process's tasks waited for is over with it, too.
            connection.execute("UPDATE tasks SET waiting = NULL WHERE waiting IS NOT NULL")
        self._run_rows.clear()
        interrupted = [_run_record(row) for row in rows]
        for run in interrupted:  # one more finished run each: count them afresh
            self._finished.pop((run.task_id, False), None)
        return interrupted

    # ------------------------------------------------------------ requests

    def submit_request(
        self, op: str, task_id: TaskId | None, payload: str | None, now: datetime
    ) -> int:
        """Queue a request for the process running the schedule; return its id."""
        with self._transaction() as connection:
            cursor = connection.execute(
                "INSERT INTO requests (op, task_id, payload, created_at) VALUES (?, ?, ?, ?)",
                (op, task_id, payload, codec.to_us(now)),
            )
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    def open_requests(self) -> list[RequestRow]:
        """Requests not yet performed, oldest first, as stored: judge each with
        ``read_request`` (another program may have written anything into a column)."""
        return [
            RequestRow(*row)
            for row in self._query(
                "SELECT id, op, task_id, payload, created_at FROM requests "
                "WHERE done_at IS NULL ORDER BY id"
            )
        ]

    def complete_request(self, request_id: int, error: str | None, now: datetime) -> None:
        with self._transaction() as connection:
            connection.execute(
                "UPDATE requests SET done_at = ?, error = ? WHERE id = ?",
                (codec.to_us(now), None if error is None else storable_text(error), request_id),
            )
            # Answers are read within seconds; a day later they are just clutter.
            connection.execute(
                "DELETE FROM requests WHERE done_at < ?",
                (codec.to_us(now) - 86_400_000_000,),
            )

    def request_outcome(self, request_id: int) -> tuple[bool, str | None]:
        """(done, error) of a submitted request."""
        rows = self._query("SELECT done_at, error FROM requests WHERE id = ?", (request_id,))
        if not rows:
            return True, f"request {request_id} was lost"
        return rows[0][0] is not None, rows[0][1]

    # --------------------------------------------------------------- reads

    def load(self, now: datetime) -> LoadResult:
        decoder = codec.RowDecoder()
        tasks: list[TaskSnapshot] = []
        bad: list[tuple[tuple[Any, ...], CodecError]] = []
        snapshot = decoder.snapshot
        append = tasks.append
        # Row by row from the cursor rather than fetchall: each row is freed as soon as
        # it is decoded, which keeps the working set small and the load faster.
        with collector_paused(), translate_errors(self.path):
            for row in self._connection.execute(
                _SELECT_TASKS + " WHERE id NOT IN (SELECT task_id FROM quarantine) ORDER BY id"
            ):
                try:
                    append(snapshot(row))
                except CodecError as error:
                    bad.append((row, error))
        if bad:
            self._quarantine(bad, now)
        return LoadResult(tasks, self.quarantined())

    def load_for_start(self, now: datetime) -> StartLoad:
        """Running tasks whole; every other task by id and next run time only.

        The rest of a row is read and decoded when the engine first needs it, through
        a ``SqliteTaskSource`` on this connection (so, from this thread). That keeps a
        cold start to one narrow scan: at 100,000 tasks, building Python objects for
        every column was two thirds of it.
        """
        decoder = codec.RowDecoder()
        whole: list[TaskSnapshot] = []
        bad: list[tuple[tuple[Any, ...], CodecError]] = []
        for row in self._query(SELECT_LOADED_WHOLE):
            try:
                whole.append(decoder.snapshot(row))
            except CodecError as error:
                bad.append((row, error))
        if bad:
            self._quarantine(bad, now)
        with collector_paused():
            queued = self._query(SELECT_DEFERRED)
        source = SqliteTaskSource(self._query, lambda rows: self._quarantine(rows, now))
        return StartLoad(whole, DeferredTasks(queued, source), self.quarantined())

    def _quarantine(self, bad: list[tuple[tuple[Any, ...], CodecError]], now: datetime) -> None:
        now_us = codec.to_us(now)
        with self._transaction() as connection:
            connection.executemany(
                "INSERT OR REPLACE INTO quarantine (task_id, error, at) VALUES (?, ?, ?)",
                ((row[0], str(error), now_us) for row, error in bad),
            )

    def quarantined(self) -> list[QuarantinedTask]:
        rows = self._query("SELECT task_id, error FROM quarantine ORDER BY task_id")
        return [QuarantinedTask(task_id, error) for task_id, error in rows]

    def quarantined_row(self, task_id: TaskId) -> dict[str, Any]:
        """The raw stored row of a quarantined task, for a person to inspect or repair."""
        rows = self._query(_SELECT_TASKS + " WHERE id = ?", (task_id,))
        if not rows:
            raise TaskNotFoundError(task_id)
        return dict(zip(codec.TASK_COLUMNS, rows[0], strict=True))

    def get(self, task_id: TaskId) -> TaskSnapshot:
        """One task; CodecError, naming it and what to do, when its row cannot be read."""
        rows = self._query(_SELECT_TASKS + " WHERE id = ?", (task_id,))
        if not rows:
            raise TaskNotFoundError(task_id)
        try:
            return codec.RowDecoder().snapshot(rows[0])
        except CodecError as error:
            problem = str(error)
            if not problem.startswith(f"task {task_id}: "):
                problem = f"task {task_id}: {problem}"
            raise CodecError(
                f"{problem}; it is kept on disk but left out of the schedule: repair its "
                f"row in {self.path} with an SQLite tool, or restore the file from a backup",
                self.path,
            ) from None

    def list_tasks(self, state: TaskState | None = None) -> list[TaskSnapshot]:
        """Tasks in id order, without rows that cannot be decoded.

        Those are the rows ``load`` quarantines; a read does not write, so one that
        has not been through a load yet is left out here without being recorded.
        """
        quarantine = "id NOT IN (SELECT task_id FROM quarantine)"
        if state is None:
            rows = self._query(f"{_SELECT_TASKS} WHERE {quarantine} ORDER BY id")
        else:
            rows = self._query(
                f"{_SELECT_TASKS} WHERE state = ? AND {quarantine} ORDER BY id", (state.value,)
            )
        snapshot = codec.RowDecoder().snapshot
        tasks: list[TaskSnapshot] = []
        for row in rows:
            try:
                tasks.append(snapshot(row))
            except CodecError:
                continue
        return tasks

    def wait_reasons(self) -> dict[TaskId, WaitReason]:
        """Why each due task waits, as the process running the schedule last wrote it.

        Snapshots read from the file never carry a wait reason (it is that process's
        live state); a view in another process lays these over them. Values from a
        newer taskgui that this one does not know are left out.
        """
        reasons: dict[TaskId, WaitReason] = {}
        for task_id, value in self._query(
            "SELECT id, waiting FROM tasks WHERE waiting IS NOT NULL"
        ):
            with suppress(ValueError):
                reasons[task_id] = WaitReason(value)
        return reasons

    def last_runs(self) -> dict[TaskId, RunRecord]:
        rows = self._query(
            f"SELECT {_RUN_COLUMNS} FROM runs WHERE id IN ("
            "SELECT MAX(id) FROM runs WHERE outcome IS NOT NULL GROUP BY task_id)"
        )
        return {row[1]: _run_record(row) for row in rows}

    # ------------------------------------------------ following (see follow.py)

    def task_changes(self, marks: Mapping[TaskId, object]) -> TaskChanges:
        return follow.task_changes(self._query, marks)

    def last_run_ids(self) -> dict[TaskId, int]:
        return follow.last_run_ids(self._query)

    def runs_by_id(self, run_ids: Collection[int]) -> list[RunRecord]:
        return [_run_record(row) for row in follow.runs_by_id(self._query, _RUN_COLUMNS, run_ids)]

    def runs(self, task_id: TaskId, limit: int = DEFAULT_HISTORY_LIMIT) -> list[RunRecord]:
        rows = self._query(
            f"SELECT {_RUN_COLUMNS} FROM runs WHERE task_id = ? ORDER BY id DESC LIMIT ?",
            (task_id, limit),
        )
        return [_run_record(row) for row in rows]


# The two kinds of history, each kept to the limit: records of missed occurrences, and
# finished runs (open ones never count).
_KIND_OF_HISTORY = {
    True: f"outcome = '{RunOutcome.MISSED.value}'",
    False: f"outcome IS NOT NULL AND outcome != '{RunOutcome.MISSED.value}'",
}


def _waiting_value(reason: WaitReason | None) -> str | None:
    return None if reason is None else reason.value


_SKIP_WHY = {
    "misfire": "taskgui was not running, the machine slept, or the clock jumped",
    "overlap": "the previous run was still going",
}
