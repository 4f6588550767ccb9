"""The SQLite repository's reads (tasks, history, followers) and its request mailbox.

Kept apart from the writes (``repository``): a read never opens a transaction of its
own but the quarantine of rows it could not decode, which it records as it finds them.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from contextlib import suppress
from datetime import datetime
from typing import Any

from taskgui.core.dependency_text import linked
from taskgui.core.engine.cold import ColdTasks
from taskgui.core.engine.deferred import DeferredTasks
from taskgui.core.errors import TaskNotFoundError
from taskgui.core.states import TaskState, WaitReason
from taskgui.core.status import TaskSnapshot
from taskgui.core.task import TaskId, TaskSpec
from taskgui.store import codec
from taskgui.store.errors import CodecError
from taskgui.store.protocols import (
    DEFAULT_HISTORY_LIMIT,
    LoadResult,
    QuarantinedTask,
    RunRecord,
    ScheduleHolder,
    StartLoad,
    TaskChanges,
    storable_text,
)
from taskgui.store.requests import RequestRow
from taskgui.store.run_rows import RUN_COLUMNS, run_record
from taskgui.store.sqlite import follow
from taskgui.store.sqlite.base import (
    SELECT_TASKS,
    SqliteBase,
)
from taskgui.store.sqlite.connection import translate_errors
from taskgui.store.sqlite.deferred_source import (
    BATCH,
    HAS_UPSTREAMS,
    SELECT_DEFERRED,
    SELECT_LOADED_WHOLE,
    SqliteTaskSource,
)
from taskgui.store.sqlite.lock import holder_pid, is_locked, lock_path_for
from taskgui.system.collector import collector_paused

_NOT_QUARANTINED = "id NOT IN (SELECT task_id FROM quarantine)"


class SqliteReads(SqliteBase):
    """Reads and requests; the writes are ``SqliteRepository``'s."""

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
                f"{SELECT_TASKS} WHERE {_NOT_QUARANTINED} ORDER BY id"
            ):
                try:
                    append(snapshot(row))
                except CodecError as error:
                    bad.append((row, error))
        if bad:
            self._quarantine(bad, now)
        return LoadResult(tasks, self.quarantined())

    def load_for_start(self, now: datetime) -> StartLoad:
        """Running tasks whole, and those that run after others, are paused for a while
        or whose row is not as taskgui writes it; every other task by id and next run
        time only.

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
        source = SqliteTaskSource(self._query, lambda rows: self._quarantine(rows, now))
        # Straight from the cursor into flat arrays: no list of 100,000 tuples between.
        with collector_paused(), translate_errors(self.path):
            cold = ColdTasks(self._connection.execute(SELECT_DEFERRED))
        if cold.judge_whole:  # READ_WHOLE: decoded now (any bad row set aside)
            found, _errors = source.fetch_many(cold.judge_whole)
            whole = sorted([*whole, *found], key=lambda snapshot: snapshot.spec.id)
        return StartLoad(whole, DeferredTasks(cold, source), self.quarantined())

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
        rows = self._query(SELECT_TASKS + " WHERE id = ?", (task_id,))
        if not rows:
            raise TaskNotFoundError(task_id)
        return dict(zip(codec.TASK_COLUMNS, rows[0], strict=True))

    def get(self, task_id: TaskId) -> TaskSnapshot:
        """One task; CodecError, naming it and what to do, when its row cannot be read."""
        rows = self._query(SELECT_TASKS + " WHERE id = ?", (task_id,))
        if not rows:
            raise TaskNotFoundError(task_id)
        repair = (
            f"repair its row in {self.path} with an SQLite tool, restore the file from a "
            f"backup, or delete it ('taskgui delete {task_id}')"
        )
        return codec.one_snapshot(rows[0], repair, self.path)

    def list_tasks(self, state: TaskState | None = None) -> list[TaskSnapshot]:
        """Tasks in id order, without rows that cannot be decoded.

        Those are the rows ``load`` quarantines; a read does not write, so one that
        has not been through a load yet is left out here without being recorded.
        """
        if state is None:
            rows = self._query(f"{SELECT_TASKS} WHERE {_NOT_QUARANTINED} ORDER BY id")
        else:
            rows = self._query(
                f"{SELECT_TASKS} WHERE state = ? AND {_NOT_QUARANTINED} ORDER BY id",
                (state.value,),
            )
        return codec.readable_snapshots(rows)

    def linked_tasks(self, spec: TaskSpec) -> list[TaskSnapshot]:
        """Its upstreams by id, and of the tasks that have upstreams (the few the
        partial index ``tasks_after`` finds, as a start loads them whole) those that
        run after it: no other row is read."""
        upstreams = sorted({edge.task_id for edge in spec.after})  # MAX_UPSTREAMS at most
        ids = f"SELECT id FROM tasks WHERE {HAS_UPSTREAMS}"
        if upstreams:  # (an empty "id IN ()" is planned as a scan)
            ids += f" UNION SELECT id FROM tasks WHERE id IN ({', '.join('?' * len(upstreams))})"
        rows = self._query(
            f"{SELECT_TASKS} WHERE id IN ({ids}) AND {_NOT_QUARANTINED} ORDER BY id", upstreams
        )
        return linked(spec, codec.readable_snapshots(rows))

    def wait_reasons(self, task_ids: Collection[TaskId] | None = None) -> dict[TaskId, WaitReason]:
        """Why each due task waits, as the process running the schedule last wrote it.

        Snapshots read from the file never carry a wait reason (it is that process's
        live state); a view in another process lays these over them. Values from a
        newer taskgui that this one does not know are left out.
        """
        waiting = "SELECT id, waiting FROM tasks WHERE waiting IS NOT NULL"
        if task_ids is None:
            rows = self._query(waiting)
        else:  # by rowid, a batch of ids a query
            ids = sorted(set(task_ids))
            rows = []
            for start in range(0, len(ids), BATCH):
                chunk = ids[start : start + BATCH]
                marks = ", ".join("?" * len(chunk))
                rows += self._query(f"{waiting} AND id IN ({marks})", chunk)
        reasons: dict[TaskId, WaitReason] = {}
        for task_id, value in rows:
            with suppress(ValueError):
                reasons[task_id] = WaitReason(value)
        return reasons

    def last_runs(self) -> dict[TaskId, RunRecord]:
        rows = self._query(
            f"SELECT {RUN_COLUMNS} FROM runs WHERE id IN ("
            "SELECT MAX(id) FROM runs WHERE outcome IS NOT NULL GROUP BY task_id)"
        )
        return {row[1]: run_record(row) for row in rows}

    # ------------------------------------------------ following (see follow.py)

    def task_changes(self, marks: Mapping[TaskId, object]) -> TaskChanges:
        return follow.task_changes(self._query, marks)

    def last_run_ids(self) -> dict[TaskId, int]:
        return follow.last_run_ids(self._query)

    def schedule_holder(self) -> ScheduleHolder | None:
        """From the scheduler lock (``lock``): held or not, and the pid it wrote."""
        if not is_locked(self.path):
            return None
        return ScheduleHolder(holder_pid(lock_path_for(self.path)))

    def runs_by_id(self, run_ids: Collection[int]) -> list[RunRecord]:
        return [run_record(row) for row in follow.runs_by_id(self._query, RUN_COLUMNS, run_ids)]

    def runs(self, task_id: TaskId, limit: int = DEFAULT_HISTORY_LIMIT) -> list[RunRecord]:
        rows = self._query(
            f"SELECT {RUN_COLUMNS} FROM runs WHERE task_id = ? ORDER BY id DESC LIMIT ?",
            (task_id, limit),
        )
        return [run_record(row) for row in rows]
