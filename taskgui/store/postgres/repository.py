"""The PostgreSQL repository: the store protocols over a shared database.

Rows are the SQLite file's rows (``store/codec.py`` encodes and decodes both), so a
task reads back exactly as it does from a file. Differences that follow from sharing:

* ids come from a counter row updated in the adding transaction, not a sequence, so
  a failed batch uses none up and several nodes never hand out the same one;
* a single add is one statement (a data-modifying CTE): one round trip, committed;
* history is pruned with one indexed DELETE per finished run instead of a count kept
  in this process, because other nodes finish runs of the same task;
* text PostgreSQL cannot hold (NUL) is replaced in output and errors, as lone
  surrogates are for SQLite.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from contextlib import suppress
from datetime import datetime
from typing import Any

from psycopg import Connection

from taskgui.core.errors import InvalidTaskError, TaskNotFoundError
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
from taskgui.core.status import RunId, RunRecord, RunResult, TaskSnapshot
from taskgui.core.task import TaskId, TaskSpec
from taskgui.store import codec
from taskgui.store.errors import CodecError
from taskgui.store.postgres.feed import NotifyFeed
from taskgui.store.postgres.schema import DEFAULT_SCHEMA
from taskgui.store.postgres.session import Session
from taskgui.store.protocols import (
    DEFAULT_HISTORY_LIMIT,
    INTERRUPTED_ERROR,
    LoadResult,
    QuarantinedTask,
    StartLoad,
    cap_output,
    storable_text,
    unstorable_text_error,
)
from taskgui.store.requests import RequestRow

_TASK_COLUMNS = ", ".join(codec.TASK_COLUMNS)
_SELECT_TASKS = f"SELECT {_TASK_COLUMNS} FROM tasks"
_NOT_QUARANTINED = "id NOT IN (SELECT task_id FROM quarantine)"
_UPDATE_TASK = (
    "UPDATE tasks SET "
    + ", ".join(f"{column} = %s" for column in codec.TASK_COLUMNS[1:])
    + ", updated_at = %s, waiting = %s WHERE id = %s"
)
_ROW_COLUMNS = f"{_TASK_COLUMNS}, created_at, updated_at"
_ROW_VALUES = ", ".join(["%s"] * (len(codec.TASK_COLUMNS) + 1))  # the id comes apart
_INSERT_ONE = (
    "WITH next AS (UPDATE counters SET value = value + 1 WHERE name = 'task_id' "
    f"RETURNING value) INSERT INTO tasks ({_ROW_COLUMNS}) "
    f"SELECT next.value, {_ROW_VALUES} FROM next RETURNING id"
)
_INSERT_MANY = f"INSERT INTO tasks ({_ROW_COLUMNS}) VALUES (%s, {_ROW_VALUES})"
_RUN_COLUMNS = (
    "id, task_id, attempt, kind, scheduled_at, started_at, finished_at, outcome, "
    "exit_code, error, output, pid, missed"
)
_KIND_OF_HISTORY = {
    True: f"outcome = '{RunOutcome.MISSED.value}'",
    False: f"outcome IS NOT NULL AND outcome <> '{RunOutcome.MISSED.value}'",
}
_PRUNE = {
    missed: (
        f"DELETE FROM runs WHERE task_id = %s AND {kind} AND id < ("
        f"SELECT id FROM runs WHERE task_id = %s AND {kind} "
        "ORDER BY id DESC LIMIT 1 OFFSET %s)"
    )
    for missed, kind in _KIND_OF_HISTORY.items()
}
_SKIP_WHY = {
    "misfire": "taskgui was not running, the machine slept, or the clock jumped",
    "overlap": "the previous run was still going",
}
_DAY_US = 86_400_000_000


def pg_text(text: str) -> str:
    """``text`` as PostgreSQL can store it: no NUL, no lone surrogate."""
    text = storable_text(text)
    return text.replace("\x00", "\ufffd") if "\x00" in text else text


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


def _refusal(specs: Iterable[TaskSpec]) -> InvalidTaskError | None:
    for spec in specs:
        error = unstorable_text_error(spec)
        texts = (spec.name, spec.concurrency_key or "")
        if error is None and any("\x00" in text for text in texts):
            error = InvalidTaskError("the task's name or concurrency key holds a NUL character")
        if error is not None:
            return error
    return None


class PostgresRepository:
    """TaskRepository, RequestQueue and ChangeFeed over one PostgreSQL schema.

    Use from one thread at a time; the change feed has a connection of its own,
    opened with the repository unless ``listen`` is False (then on first use).
    """

    def __init__(
        self,
        dsn: str,
        *,
        schema: str = DEFAULT_SCHEMA,
        history_limit: int = DEFAULT_HISTORY_LIMIT,
        application_name: str = "taskgui",
        listen: bool = True,
    ) -> None:
        if history_limit < 1:
            raise ValueError("history_limit must be at least 1")
        self.dsn = dsn
        self.schema = schema
        self.history_limit = history_limit
        self._session = Session(dsn, schema, application_name=application_name)
        self._feed: NotifyFeed | None = None
        self._run_rows: dict[RunId, int] = {}
        if listen:
            # Listening from the start: ``changed`` counts from opening, not from its
            # first call. A one-shot CLI command passes listen=False (one connection).
            try:
                self._change_feed()
            except BaseException:
                self._session.close()
                raise

    @property
    def session(self) -> Session:
        return self._session

    def close(self) -> None:
        if self._feed is not None:
            self._feed.close()
        self._session.close()

    # -------------------------------------------------------------- writes

    def add_tasks(self, specs: Sequence[TaskSpec], now: datetime) -> list[TaskSpec]:
        refusal = _refusal(specs)
        if refusal is not None:
            raise refusal
        now_us = codec.to_us(now)
        try:
            if len(specs) == 1:
                _, *values, slot = codec.new_task_values(specs[0])
                row = self._session.query(_INSERT_ONE, (*_initial(values, slot), now_us, now_us))
                return [specs[0].with_id(row[0][0])]
            if not specs:
                return []
            with self._session.transaction() as connection:
                last = connection.execute(
                    "UPDATE counters SET value = value + %s WHERE name = 'task_id' RETURNING value",
                    (len(specs),),
                ).fetchone()
                assert last is not None
                first = int(last[0]) - len(specs) + 1
                stored = [spec.with_id(first + offset) for offset, spec in enumerate(specs)]
                rows = []
                for spec in stored:
                    values_id, *values, slot = codec.new_task_values(spec)
                    rows.append((values_id, *_initial(values, slot), now_us, now_us))
                with connection.cursor() as cursor:
                    cursor.executemany(_INSERT_MANY, rows)
        except UnicodeEncodeError:
            refusal = _refusal(specs) or InvalidTaskError("the task holds unsavable text")
            raise refusal from None
        return stored

    def apply(
        self,
        events: Sequence[Event],
        now: datetime,
        results: Mapping[RunId, RunResult] | None = None,
    ) -> None:
        if not events:
            return
        changed = [event.task.spec for event in events if isinstance(event, TaskChanged)]
        refusal = _refusal(changed)
        if refusal is not None:
            raise refusal
        now_us = codec.to_us(now)
        results = results or {}
        dispatched: list[tuple[RunId, int]] = []
        with self._session.transaction() as connection:
            for event in events:
                self._apply_one(connection, event, now_us, results, dispatched)
        # Known only once committed: a rolled-back dispatch has no row.
        for run_id, row_id in dispatched:
            self._run_rows[run_id] = row_id
        for event in events:
            if isinstance(event, RunFinished | RunWithdrawn):
                self._run_rows.pop(event.run.run_id, None)

    def _apply_one(
        self,
        connection: Connection[Any],
        event: Event,
        now_us: int,
        results: Mapping[RunId, RunResult],
        dispatched: list[tuple[RunId, int]],
    ) -> None:
        execute = connection.execute
        if isinstance(event, TaskChanged):
            snapshot = event.task
            waiting = snapshot.status.waiting
            execute(
                _UPDATE_TASK,
                (
                    *codec.spec_values(snapshot.spec),
                    *codec.status_values(snapshot.status),
                    now_us,
                    None if waiting is None else waiting.value,
                    snapshot.spec.id,
                ),
            )
        elif isinstance(event, RunDispatched):
            ticket = event.run
            row = execute(
                "INSERT INTO runs (task_id, attempt, kind, scheduled_at, started_at) "
                "SELECT %s, %s, %s, %s, %s WHERE EXISTS (SELECT 1 FROM tasks WHERE id = %s) "
                "RETURNING id",
                (
                    ticket.task_id,
                    ticket.attempt,
                    ticket.kind.value,
                    codec.to_us(ticket.scheduled_at),
                    codec.to_us(ticket.dispatched_at),
                    ticket.task_id,
                ),
            ).fetchone()
            if row is not None:
                dispatched.append((ticket.run_id, int(row[0])))
        elif isinstance(event, RunWithdrawn):  # it never happened
            row_id = self._row_of(event.run.run_id, dispatched)
            if row_id is not None:
                execute("DELETE FROM runs WHERE id = %s", (row_id,))
        elif isinstance(event, RunFinished):
            row_id = self._row_of(event.run.run_id, dispatched)
            if row_id is None:
                return  # its task was deleted, and the row with it
            result = results.get(event.run.run_id) or RunResult()
            execute(
                "UPDATE runs SET finished_at = %s, outcome = %s, exit_code = %s, error = %s, "
                "output = %s WHERE id = %s",
                (
                    codec.to_us(event.finished_at),
                    event.outcome.value,
                    result.exit_code,
                    None if result.error is None else pg_text(result.error),
                    pg_text(cap_output(result.output)),
                    row_id,
                ),
            )
            self._prune(connection, event.run.task_id, event.outcome is RunOutcome.MISSED)
        elif isinstance(event, OccurrencesSkipped):
            count = f"{event.count}" if event.exact else f"at least {event.count}"
            plural = "s" if event.count != 1 else ""
            execute(
                "INSERT INTO runs (task_id, attempt, kind, scheduled_at, finished_at, "
                "outcome, error, missed) SELECT %s, 0, %s, %s, %s, %s, %s, %s "
                "WHERE EXISTS (SELECT 1 FROM tasks WHERE id = %s)",
                (
                    event.task_id,
                    SlotKind.OCCURRENCE.value,
                    codec.to_us(event.first_at),
                    now_us,
                    RunOutcome.MISSED.value,
                    f"skipped {count} occurrence{plural} ({_SKIP_WHY[event.reason]})",
                    event.count,
                    event.task_id,
                ),
            )
            self._prune(connection, event.task_id, True)
        elif isinstance(event, TaskRemoved):
            execute("DELETE FROM tasks WHERE id = %s", (event.task_id,))
        elif isinstance(event, TaskDropped):  # kept, and left out from now on
            execute(
                "INSERT INTO quarantine (task_id, error, at) SELECT %s, %s, %s "
                "WHERE EXISTS (SELECT 1 FROM tasks WHERE id = %s) ON CONFLICT DO NOTHING",
                (event.task_id, pg_text(event.reason), now_us, event.task_id),
            )

    def _row_of(self, run_id: RunId, dispatched: list[tuple[RunId, int]]) -> int | None:
        for pending, row_id in dispatched:  # dispatched earlier in this same transaction
            if pending == run_id:
                return row_id
        return self._run_rows.get(run_id)

    def _prune(self, connection: Connection[Any], task_id: TaskId, missed: bool) -> None:
        connection.execute(_PRUNE[missed], (task_id, task_id, self.history_limit - 1))

    def record_run_pid(self, run_id: RunId, pid: int) -> None:
        row_id = self._run_rows.get(run_id)
        if row_id is not None:
            self._session.execute("UPDATE runs SET pid = %s WHERE id = %s", (pid, row_id))

    def record_run_output(self, run_id: RunId, output: str) -> None:
        row_id = self._run_rows.get(run_id)
        if row_id is not None:
            self._session.execute(
                "UPDATE runs SET output = %s WHERE id = %s AND outcome IS NULL",
                (pg_text(cap_output(output)), row_id),
            )

    def open_runs(self) -> list[RunRecord]:
        rows = self._session.query(
            f"SELECT {_RUN_COLUMNS} FROM runs WHERE outcome IS NULL ORDER BY id"
        )
        return [_run_record(row) for row in rows]

    def interrupt_open_runs(self, now: datetime) -> list[RunRecord]:
        with self._session.transaction() as connection:
            rows = connection.execute(
                f"UPDATE runs SET outcome = %s, finished_at = %s, error = %s "
                f"WHERE outcome IS NULL RETURNING {_RUN_COLUMNS}",
                (RunOutcome.INTERRUPTED.value, codec.to_us(now), INTERRUPTED_ERROR),
            ).fetchall()
            connection.execute("UPDATE tasks SET waiting = NULL WHERE waiting IS NOT NULL")
        self._run_rows.clear()
        # RETURNING gives the rows as they are now; the caller wants them as they were.
        return sorted(
            (
                _run_record(
                    (*row[:6], None, None, row[8], None, *row[10:]),
                )
                for row in rows
            ),
            key=lambda record: record.id,
        )

    # ------------------------------------------------------------ requests

    def submit_request(
        self, op: str, task_id: TaskId | None, payload: str | None, now: datetime
    ) -> int:
        rows = self._session.query(
            "INSERT INTO requests (op, task_id, payload, created_at) VALUES (%s, %s, %s, %s) "
            "RETURNING id",
            (op, task_id, None if payload is None else pg_text(payload), codec.to_us(now)),
        )
        return int(rows[0][0])

    def open_requests(self) -> list[RequestRow]:
        return [
            RequestRow(*row)
            for row in self._session.query(
                "SELECT id, op, task_id, payload, created_at FROM requests "
                "WHERE done_at IS NULL ORDER BY id"
            )
        ]

    def complete_request(self, request_id: int, error: str | None, now: datetime) -> None:
        now_us = codec.to_us(now)
        with self._session.transaction() as connection:
            connection.execute(
                "UPDATE requests SET done_at = %s, error = %s WHERE id = %s",
                (now_us, None if error is None else pg_text(error), request_id),
            )
            # Answers are read within seconds; a day later they are just clutter.
            connection.execute("DELETE FROM requests WHERE done_at < %s", (now_us - _DAY_US,))

    def request_outcome(self, request_id: int) -> tuple[bool, str | None]:
        rows = self._session.query(
            "SELECT done_at, error FROM requests WHERE id = %s", (request_id,)
        )
        if not rows:
            return True, f"request {request_id} was lost"
        return rows[0][0] is not None, rows[0][1]

    # ---------------------------------------------------------- change feed

    def changed(self) -> bool:
        return self._change_feed().changed()

    def fileno(self) -> int | None:
        return self._change_feed().fileno()

    # ------------------------------------------- upkeep (see StoreUpkeep)

    # A DSN can carry a password: not handed to commands in TASKGUI_DB.
    location: str | None = None

    def take_over_checkpoints(self) -> None:
        return None  # the server folds its own log back

    def verify_file(self, *, companions: bool = True) -> None:
        pass  # no file under this process that could be replaced

    def save_what_is_open(self, now: datetime) -> str:
        return "the server keeps what was committed"

    def _change_feed(self) -> NotifyFeed:
        if self._feed is None:
            self._feed = NotifyFeed(self.dsn, self.schema, own=lambda: self._session.backend_pid)
        return self._feed

    # --------------------------------------------------------------- reads

    def load(self, now: datetime) -> LoadResult:
        rows = self._session.query(f"{_SELECT_TASKS} WHERE {_NOT_QUARANTINED} ORDER BY id")
        decoder = codec.RowDecoder()
        tasks: list[TaskSnapshot] = []
        bad: list[tuple[tuple[Any, ...], CodecError]] = []
        for row in rows:
            try:
                tasks.append(decoder.snapshot(row))
            except CodecError as error:
                bad.append((row, error))
        if bad:
            self._quarantine(bad, now)
        return LoadResult(tasks, self.quarantined())

    def load_for_start(self, now: datetime) -> StartLoad:
        loaded = self.load(now)
        return StartLoad(loaded.tasks, None, loaded.quarantined)

    def _quarantine(self, bad: list[tuple[tuple[Any, ...], CodecError]], now: datetime) -> None:
        now_us = codec.to_us(now)
        with self._session.transaction() as connection, connection.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO quarantine (task_id, error, at) VALUES (%s, %s, %s) "
                "ON CONFLICT (task_id) DO UPDATE SET error = excluded.error, at = excluded.at",
                [(row[0], pg_text(str(error)), now_us) for row, error in bad],
            )

    def quarantined(self) -> list[QuarantinedTask]:
        rows = self._session.query("SELECT task_id, error FROM quarantine ORDER BY task_id")
        return [QuarantinedTask(task_id, error) for task_id, error in rows]

    def get(self, task_id: TaskId) -> TaskSnapshot:
        rows = self._session.query(f"{_SELECT_TASKS} WHERE id = %s", (task_id,))
        if not rows:
            raise TaskNotFoundError(task_id)
        try:
            return codec.RowDecoder().snapshot(rows[0])
        except CodecError as error:
            problem = str(error)
            if not problem.startswith(f"task {task_id}: "):
                problem = f"task {task_id}: {problem}"
            raise CodecError(
                f"{problem}; it is kept in the database but left out of the schedule: repair "
                f"its row in the schema {self.schema} with psql, or restore a backup"
            ) from None

    def list_tasks(self, state: TaskState | None = None) -> list[TaskSnapshot]:
        if state is None:
            rows = self._session.query(f"{_SELECT_TASKS} WHERE {_NOT_QUARANTINED} ORDER BY id")
        else:
            rows = self._session.query(
                f"{_SELECT_TASKS} WHERE state = %s AND {_NOT_QUARANTINED} ORDER BY id",
                (state.value,),
            )
        snapshot = codec.RowDecoder().snapshot
        tasks: list[TaskSnapshot] = []
        for row in rows:
            with suppress(CodecError):
                tasks.append(snapshot(row))
        return tasks

    def wait_reasons(self) -> dict[TaskId, WaitReason]:
        reasons: dict[TaskId, WaitReason] = {}
        for task_id, value in self._session.query(
            "SELECT id, waiting FROM tasks WHERE waiting IS NOT NULL"
        ):
            with suppress(ValueError):
                reasons[task_id] = WaitReason(value)
        return reasons

    def last_runs(self) -> dict[TaskId, RunRecord]:
        rows = self._session.query(
            f"SELECT DISTINCT ON (task_id) {_RUN_COLUMNS} FROM runs "
            "WHERE outcome IS NOT NULL ORDER BY task_id, id DESC"
        )
        return {row[1]: _run_record(row) for row in rows}

    def run_nodes(self, run_ids: Sequence[int]) -> dict[int, str]:
        """The node that ran (or runs) each run, where one claimed it."""
        rows = self._session.query(
            "SELECT id, node FROM runs WHERE id = ANY(%s) AND node IS NOT NULL", (list(run_ids),)
        )
        return {int(row[0]): str(row[1]) for row in rows}

    def runs(self, task_id: TaskId, limit: int = DEFAULT_HISTORY_LIMIT) -> list[RunRecord]:
        rows = self._session.query(
            f"SELECT {_RUN_COLUMNS} FROM runs WHERE task_id = %s ORDER BY id DESC LIMIT %s",
            (task_id, limit),
        )
        return [_run_record(row) for row in rows]


def _initial(values: Sequence[Any], slot: int) -> tuple[Any, ...]:
    """A new task's definition values (without the id) and its initial status values."""
    paused = values[codec.TASK_COLUMNS.index("paused") - 1]
    state = TaskState.PAUSED.value if paused else TaskState.PENDING.value
    return (*values, state, 0, slot, SlotKind.OCCURRENCE.value, slot, 1, None, None, None)
