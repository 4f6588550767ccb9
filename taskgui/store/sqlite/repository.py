"""The SQLite repository: the file a person trusts with their schedule.

Every write is one short ``BEGIN IMMEDIATE`` transaction, so a crash at any moment
leaves either all of an operation on disk or none of it. Statements are prepared once
(sqlite3 caches them by text) and rows are plain tuples, because the scheduler writes
on every dispatch and finish.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from datetime import datetime

from taskgui.core.events import (
    SKIP_WHY,
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
from taskgui.core.status import RunId, RunResult
from taskgui.core.task import TaskId, TaskSpec
from taskgui.store import codec
from taskgui.store.protocols import (
    INTERRUPTED_ERROR,
    NEVER_STARTED_ERROR,
    RunRecord,
    cap_output,
    storable_text,
)
from taskgui.store.run_rows import RUN_COLUMNS, run_record
from taskgui.store.sqlite.base import (
    KIND_OF_HISTORY,
    refuse_unstorable,
)
from taskgui.store.sqlite.insert import insert_new_tasks
from taskgui.store.sqlite.reads import SqliteReads

# ``waiting`` is written with every change but never read back into a snapshot: it is
# the running process's live view, for other processes (see ``wait_reasons``).
_UPDATE_TASK = (
    "UPDATE tasks SET "
    + ", ".join(f"{column} = ?" for column in codec.TASK_COLUMNS[1:])
    + ", updated_at = ?, waiting = ? WHERE id = ?"
)
# The same without the definition, for a change of status only: the definition this
# connection last wrote for the task is the very object being written (see
# ``_written_specs``), and the scheduler's process is the only writer of its tasks.
_UPDATE_STATUS = (
    "UPDATE tasks SET "
    + ", ".join(f"{column} = ?" for column in codec.STATUS_COLUMNS)
    + ", updated_at = ?, waiting = ? WHERE id = ?"
)
# How many definitions ``_written_specs`` remembers: a run's dispatch, start and end
# are written within moments of each other; older ones are written whole again.
_WRITTEN_SPECS = 4096
# A row set aside once keeps its first reason; a row already deleted has nothing to keep.
_SET_ASIDE = (
    "INSERT OR IGNORE INTO quarantine (task_id, error, at) "
    "SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM tasks WHERE id = ?)"
)


class SqliteRepository(SqliteReads):
    """ScheduleStore over one SQLite file. Use from one thread at a time.

    The connection and the file checks are ``SqliteBase``'s, the reads and the
    request mailbox ``SqliteReads``'; the writes are here.
    """

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
            refuse_unstorable(specs)
            raise
        for spec in stored:  # new: no history yet
            self._finished[spec.id, False] = self._finished[spec.id, True] = 0
        # Their definitions are on disk as these very objects: a first dispatch then
        # writes the status only. A batch beyond the cap leaves the rest to be written
        # whole once (as before), so the map never grows past it.
        self._remember_written({spec.id: spec for spec in stored[:_WRITTEN_SPECS]})
        return stored

    def apply(
        self,
        events: Sequence[Event],
        now: datetime,
        results: Mapping[RunId, RunResult] | None = None,
        pids: Mapping[RunId, int] | None = None,
    ) -> None:
        if not events and not pids:
            return
        now_us = codec.to_us(now)
        results = results or {}
        try:
            self._apply(events, now_us, results, pids or {})
        except UnicodeEncodeError:
            refuse_unstorable(event.task.spec for event in events if isinstance(event, TaskChanged))
            raise

    def _apply(
        self,
        events: Sequence[Event],
        now_us: int,
        results: Mapping[RunId, RunResult],
        pids: Mapping[RunId, int],
    ) -> None:
        written = self._written_specs
        wrote: dict[TaskId, TaskSpec] = {}
        with self._transaction() as connection:
            execute = connection.execute
            ending = {event.run.run_id for event in events if type(event) is RunFinished}
            for run_id, pid in pids.items():  # first: a run may end in this transaction
                row_id = self._run_rows.get(run_id)
                if row_id is not None and run_id not in ending:  # else with its end
                    # A queued run's start is known from here (see RunDispatched).
                    execute(
                        "UPDATE runs SET pid = ?, started_at = coalesce(started_at, ?) "
                        "WHERE id = ?",
                        (pid, now_us, row_id),
                    )
            # A task's row is written once per transaction, as its last change left it
            # (a queued run's start and its end often come in the same one).
            last = {
                event.task.spec.id: index
                for index, event in enumerate(events)
                if type(event) is TaskChanged
            }
            for index, event in enumerate(events):
                if isinstance(event, TaskChanged):
                    snapshot = event.task
                    spec = snapshot.spec
                    if last[spec.id] != index:
                        continue
                    if written.get(spec.id) is spec:
                        execute(
                            _UPDATE_STATUS,
                            (
                                *codec.status_values(snapshot.status),
                                now_us,
                                _waiting_value(snapshot.status.waiting),
                                spec.id,
                            ),
                        )
                        continue
                    execute(
                        _UPDATE_TASK,
                        (
                            *codec.spec_values(spec),
                            *codec.status_values(snapshot.status),
                            now_us,
                            _waiting_value(snapshot.status.waiting),
                            spec.id,
                        ),
                    )
                    wrote[spec.id] = spec
                elif isinstance(event, RunDispatched):
                    ticket = event.run
                    cursor = execute(
                        "INSERT INTO runs (task_id, attempt, kind, scheduled_at, started_at) "
                        "VALUES (?, ?, ?, ?, ?)",
                        (
                            ticket.task_id,
                            ticket.attempt,
                            ticket.kind._value_,  # .value, without its property
                            codec.to_us(ticket.scheduled_at),
                            # Queued: not started until its pid says so (a crash before
                            # that dispatches it again; see interrupt_open_runs).
                            None if event.queued else codec.to_us(ticket.dispatched_at),
                        ),
                    )
                    assert cursor.lastrowid is not None
                    self._run_rows[ticket.run_id] = cursor.lastrowid
                elif isinstance(event, RunWithdrawn):  # it never happened
                    row_id = self._run_rows.pop(event.run.run_id, None)
                    if row_id is not None:
                        execute("DELETE FROM runs WHERE id = ?", (row_id,))
                elif isinstance(event, RunFinished):
                    run_id = event.run.run_id
                    self._finish_run(connection, event, results.get(run_id), pids.get(run_id))
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
                            f"skipped {count} occurrence{plural} ({SKIP_WHY[event.reason]})",
                            event.count,
                        ),
                    )
                    self._kept_one_more(connection, event.task_id, missed=True)
                elif isinstance(event, TaskRemoved):
                    execute("DELETE FROM tasks WHERE id = ?", (event.task_id,))
                    written.pop(event.task_id, None)
                    self._finished.pop((event.task_id, False), None)
                    self._finished.pop((event.task_id, True), None)
                elif isinstance(event, TaskDropped):  # kept, and left out from now on
                    execute(_SET_ASIDE, (event.task_id, event.reason, now_us, event.task_id))
        self._remember_written(wrote)

    def _remember_written(self, wrote: dict[TaskId, TaskSpec]) -> None:
        """After a commit: the definitions now on disk (see ``_UPDATE_STATUS``)."""
        if len(self._written_specs) + len(wrote) > _WRITTEN_SPECS:
            self._written_specs.clear()
        self._written_specs.update(wrote)

    def _finish_run(
        self,
        connection: sqlite3.Connection,
        event: RunFinished,
        result: RunResult | None,
        pid: int | None,
    ) -> None:
        row_id = self._run_rows.pop(event.run.run_id, None)
        if row_id is None:
            return  # its task was deleted, and the row with it
        result = result or RunResult()
        connection.execute(
            "UPDATE runs SET finished_at = ?, outcome = ?, exit_code = ?, error = ?, "
            "output = ?, started_at = coalesce(started_at, ?), pid = coalesce(?, pid) "
            "WHERE id = ?",
            (
                codec.to_us(event.finished_at),
                event.outcome._value_,  # .value, without its property
                result.exit_code,
                None if result.error is None else storable_text(result.error),
                cap_output(result.output),
                # A queued run whose start comes with its end (or that could not start).
                codec.to_us(result.started_at or event.finished_at),
                pid,  # its start was heard of with its end
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
                f"SELECT count(*) FROM runs WHERE task_id = ? AND {KIND_OF_HISTORY[missed]}",
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
        kind = KIND_OF_HISTORY[missed]
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
            run_record(row)
            for row in self._query(
                f"SELECT {RUN_COLUMNS} FROM runs WHERE outcome IS NULL ORDER BY id"
            )
        ]

    def interrupt_open_runs(self, now: datetime) -> list[RunRecord]:
        with self._transaction() as connection:
            rows = connection.execute(
                f"SELECT {RUN_COLUMNS} FROM runs WHERE outcome IS NULL ORDER BY id"
            ).fetchall()
            # A queued run that never started (no start time): its task is loaded whole
            # with the running ones, for recovery to dispatch the run again.
            connection.execute(
                "UPDATE tasks SET state = ? WHERE id IN "
                "(SELECT task_id FROM runs WHERE outcome IS NULL AND started_at IS NULL)",
                (TaskState.RUNNING.value,),
            )
            connection.execute(
                "UPDATE runs SET outcome = ?, finished_at = ?, error = ? "
                "WHERE outcome IS NULL AND started_at IS NULL",
                (RunOutcome.INTERRUPTED.value, codec.to_us(now), NEVER_STARTED_ERROR),
            )
            connection.execute(
                "UPDATE runs SET outcome = ?, finished_at = ?, error = ? WHERE outcome IS NULL",
                (RunOutcome.INTERRUPTED.value, codec.to_us(now), INTERRUPTED_ERROR),
            )
            # What the previous process's tasks waited for is over with it, too.
            connection.execute("UPDATE tasks SET waiting = NULL WHERE waiting IS NOT NULL")
        self._run_rows.clear()
        interrupted = [run_record(row) for row in rows]
        for run in interrupted:  # one more finished run each: count them afresh
            self._finished.pop((run.task_id, False), None)
        return interrupted


def _waiting_value(reason: WaitReason | None) -> str | None:
    return None if reason is None else reason.value
