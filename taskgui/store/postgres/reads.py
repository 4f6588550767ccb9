"""The PostgreSQL repository's connection, reads, request mailbox and change feed.

The writes are ``repository``'s; rows and JSON are the SQLite file's (``store/codec.py``).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from contextlib import suppress
from datetime import datetime
from typing import Any

from taskgui.core.dependency_text import linked
from taskgui.core.errors import TaskNotFoundError
from taskgui.core.states import RunOutcome, TaskState, WaitReason
from taskgui.core.status import RunId, RunRecord, TaskSnapshot
from taskgui.core.task import TaskId, TaskSpec
from taskgui.store import codec
from taskgui.store.errors import CodecError
from taskgui.store.postgres.feed import NotifyFeed
from taskgui.store.postgres.schema import DEFAULT_SCHEMA
from taskgui.store.postgres.session import Session
from taskgui.store.protocols import (
    DEFAULT_HISTORY_LIMIT,
    LoadResult,
    QuarantinedTask,
    StartLoad,
    storable_text,
)
from taskgui.store.requests import RequestRow
from taskgui.store.run_rows import RUN_COLUMNS, SHARED_RUN_COLUMNS, run_record

TASK_COLUMNS = ", ".join(codec.TASK_COLUMNS)
SELECT_TASKS = f"SELECT {TASK_COLUMNS} FROM tasks"
NOT_QUARANTINED = "id NOT IN (SELECT task_id FROM quarantine)"
UPDATE_TASK = (
    "UPDATE tasks SET "
    + ", ".join(f"{column} = %s" for column in codec.TASK_COLUMNS[1:])
    + ", updated_at = %s, waiting = %s WHERE id = %s"
)
ROW_COLUMNS = f"{TASK_COLUMNS}, created_at, updated_at"
ROW_VALUES = ", ".join(["%s"] * (len(codec.TASK_COLUMNS) + 1))  # the id comes apart
INSERT_ONE = (
    "WITH next AS (UPDATE counters SET value = value + 1 WHERE name = 'task_id' "
    f"RETURNING value) INSERT INTO tasks ({ROW_COLUMNS}) "
    f"SELECT next.value, {ROW_VALUES} FROM next RETURNING id"
)
INSERT_MANY = f"INSERT INTO tasks ({ROW_COLUMNS}) VALUES (%s, {ROW_VALUES})"
KIND_OF_HISTORY = {
    True: f"outcome = '{RunOutcome.MISSED.value}'",
    False: f"outcome IS NOT NULL AND outcome <> '{RunOutcome.MISSED.value}'",
}
PRUNE = {
    missed: (
        f"DELETE FROM runs WHERE task_id = %s AND {kind} AND id < ("
        f"SELECT id FROM runs WHERE task_id = %s AND {kind} "
        "ORDER BY id DESC LIMIT 1 OFFSET %s)"
    )
    for missed, kind in KIND_OF_HISTORY.items()
}
DAY_US = 86_400_000_000


def pg_text(text: str) -> str:
    """``text`` as PostgreSQL can store it: no NUL, no lone surrogate."""
    text = storable_text(text)
    return text.replace("\x00", "\ufffd") if "\x00" in text else text


class PostgresReads:
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
            connection.execute("DELETE FROM requests WHERE done_at < %s", (now_us - DAY_US,))

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

    def changed_tables(self) -> frozenset[str]:
        """Which tables others wrote, of what ``changed`` drained (``feed.EVERY_TABLE``
        among them when it may have missed some)."""
        return self._change_feed().changed_tables()

    def fileno(self) -> int | None:
        return self._change_feed().fileno()

    def watch_paths(self) -> tuple[str, ...]:
        return ()  # told through the LISTEN connection's descriptor (fileno)

    # ------------------------------------------- upkeep (see StoreUpkeep)

    # A DSN can carry a password: not handed to commands in TASKGUI_DB.
    location: str | None = None

    def take_over_checkpoints(self) -> None:
        return None  # the server folds its own log back

    def task_stream(self) -> None:
        return None  # a start loads the tasks whole (see load_for_start)

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
        rows = self._session.query(f"{SELECT_TASKS} WHERE {NOT_QUARANTINED} ORDER BY id")
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
        rows = self._session.query(f"{SELECT_TASKS} WHERE id = %s", (task_id,))
        if not rows:
            raise TaskNotFoundError(task_id)
        repair = f"repair its row in the schema {self.schema} with psql, or restore a backup"
        return codec.one_snapshot(rows[0], repair)

    def list_tasks(self, state: TaskState | None = None) -> list[TaskSnapshot]:
        if state is None:
            rows = self._session.query(f"{SELECT_TASKS} WHERE {NOT_QUARANTINED} ORDER BY id")
        else:
            rows = self._session.query(
                f"{SELECT_TASKS} WHERE state = %s AND {NOT_QUARANTINED} ORDER BY id",
                (state.value,),
            )
        return codec.readable_snapshots(rows)

    def linked_tasks(self, spec: TaskSpec) -> list[TaskSnapshot]:
        """Its upstreams by id, and of the tasks with upstreams (their ``rules`` say
        "after", as the file's partial index has them) those that run after it: the
        server looks at each row's rules, only those rows come back to be decoded."""
        upstreams = sorted({edge.task_id for edge in spec.after})
        rows = self._session.query(
            f"{SELECT_TASKS} WHERE (id = ANY(%s) OR strpos(rules, %s) > 0) "
            f"AND {NOT_QUARANTINED} ORDER BY id",
            (upstreams, '"after":'),
        )
        return linked(spec, codec.readable_snapshots(rows))

    def wait_reasons(self, task_ids: Collection[TaskId] | None = None) -> dict[TaskId, WaitReason]:
        waiting = "SELECT id, waiting FROM tasks WHERE waiting IS NOT NULL"
        if task_ids is None:
            rows = self._session.query(waiting)
        else:
            rows = self._session.query(f"{waiting} AND id = ANY(%s)", (sorted(set(task_ids)),))
        reasons: dict[TaskId, WaitReason] = {}
        for task_id, value in rows:
            with suppress(ValueError):
                reasons[task_id] = WaitReason(value)
        return reasons

    def last_runs(self) -> dict[TaskId, RunRecord]:
        rows = self._session.query(
            f"SELECT DISTINCT ON (task_id) {RUN_COLUMNS} FROM runs "
            "WHERE outcome IS NOT NULL ORDER BY task_id, id DESC"
        )
        return {row[1]: run_record(row) for row in rows}

    def run_nodes(self, run_ids: Sequence[int]) -> dict[int, str]:
        """The node that ran (or runs) each run, where one claimed it."""
        rows = self._session.query(
            "SELECT id, node FROM runs WHERE id = ANY(%s) AND node IS NOT NULL", (list(run_ids),)
        )
        return {int(row[0]): str(row[1]) for row in rows}

    def runs(self, task_id: TaskId, limit: int = DEFAULT_HISTORY_LIMIT) -> list[RunRecord]:
        rows = self._session.query(
            f"SELECT {SHARED_RUN_COLUMNS} FROM runs WHERE task_id = %s ORDER BY id DESC LIMIT %s",
            (task_id, limit),
        )
        return [run_record(row) for row in rows]
