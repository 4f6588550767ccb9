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
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg import Connection

from taskgui.core.errors import InvalidTaskError
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
from taskgui.core.states import RunOutcome, SlotKind, TaskState
from taskgui.core.status import RunId, RunRecord, RunResult
from taskgui.core.task import TaskId, TaskSpec
from taskgui.store import codec
from taskgui.store.errors import StoreError
from taskgui.store.postgres import news
from taskgui.store.postgres.cluster import holds_lease
from taskgui.store.postgres.news import NewsItem
from taskgui.store.postgres.placement import Placement
from taskgui.store.postgres.reads import (
    INSERT_MANY,
    INSERT_ONE,
    PRUNE,
    UPDATE_TASK,
    PostgresReads,
    pg_text,
)
from taskgui.store.postgres.schema import RUN_KEY
from taskgui.store.protocols import (
    INTERRUPTED_ERROR,
    cap_output,
    unstorable_text_error,
)
from taskgui.store.run_rows import RUN_COLUMNS, run_record


def _refusal(specs: Iterable[TaskSpec]) -> InvalidTaskError | None:
    for spec in specs:
        error = unstorable_text_error(spec)
        texts = (spec.name, spec.concurrency_key or "")
        if error is None and any("\x00" in text for text in texts):
            error = InvalidTaskError("the task's name or concurrency key holds a NUL character")
        if error is not None:
            return error
    return None


class FencedOffError(StoreError):
    """A fenced write found that this process no longer leads; nothing was written."""


@dataclass(frozen=True, slots=True)
class FencedWrite:
    """A fenced write committed; ``news``: its outbox row, for its teller to tell
    (``store.postgres.news``), None when it decided nothing to tell."""

    news: NewsItem | None = None


class PostgresRepository(PostgresReads):
    """The store protocols over a PostgreSQL schema (the reads are ``PostgresReads``').

    ``fence`` (node, epoch): while set, every ``apply`` is fenced by that lease (see
    ``apply_fenced``) and raises FencedOffError when the lease is gone: for a process
    that leads a shared schedule for a moment (the CLI's change with no node running).
    """

    fence: tuple[str, int] | None = None

    # -------------------------------------------------------------- writes

    def add_tasks(self, specs: Sequence[TaskSpec], now: datetime) -> list[TaskSpec]:
        refusal = _refusal(specs)
        if refusal is not None:
            raise refusal
        now_us = codec.to_us(now)
        try:
            if len(specs) == 1:
                _, *values, slot = codec.new_task_values(specs[0])
                row = self._session.query(INSERT_ONE, (*_initial(values, slot), now_us, now_us))
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
                    cursor.executemany(INSERT_MANY, rows)
        except UnicodeEncodeError:
            refusal = _refusal(specs) or InvalidTaskError("the task holds unsavable text")
            raise refusal from None
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
        if self.fence is not None:  # this process leads for now: its writes are fenced
            node, epoch = self.fence
            if not self.apply_fenced(events, now, node=node, epoch=epoch, results=results):
                raise FencedOffError(
                    "this process no longer leads the shared schedule (another node took "
                    "over); nothing was changed: try again"
                )
            return
        self._write(events, now, results=results, fence=None, placements={}, pids=pids)

    def apply_fenced(
        self,
        events: Sequence[Event],
        now: datetime,
        *,
        node: str,
        epoch: int,
        results: Mapping[RunId, RunResult] | None = None,
        placements: Mapping[TaskId, Placement] | None = None,
    ) -> FencedWrite | None:
        """As a shared schedule's leader: ``apply``, only while ``node`` leads with
        fencing token ``epoch`` (read FOR SHARE in the same transaction, so a takeover
        waits for this commit and every later one of the old leader writes nothing).

        A run is dispatched with its epoch, priority and key, for any node to claim; an
        occurrence some dispatch already committed (``runs_once``) rolls the whole
        transaction back. ``placements``: where a task's runs may go (its pin, the
        conditions the claiming node's machine must meet). The ends, retries and
        give-ups it decides go to the outbox in the same transaction (``news``), for
        ``node`` to tell. None when nothing was written: the caller's engine no longer
        matches the store and is rebuilt from it.
        """
        if not events:
            return FencedWrite()
        try:
            told = self._write(
                events, now, results=results, fence=(node, epoch), placements=placements or {}
            )
        except _FencedError:
            return None
        return FencedWrite(told)

    def _write(
        self,
        events: Sequence[Event],
        now: datetime,
        *,
        results: Mapping[RunId, RunResult] | None,
        fence: tuple[str, int] | None,
        placements: Mapping[TaskId, Placement],
        pids: Mapping[RunId, int] | None = None,
    ) -> NewsItem | None:
        changed = [event.task.spec for event in events if isinstance(event, TaskChanged)]
        refusal = _refusal(changed)
        if refusal is not None:
            raise refusal
        now_us = codec.to_us(now)
        results = results or {}
        dispatched: list[tuple[RunId, int]] = []
        told: NewsItem | None = None
        with self._session.transaction() as connection:
            if fence is not None and not holds_lease(connection, *fence):
                raise _FencedError
            for run_id, pid in (pids or {}).items():  # first: a run may end in this one
                row_id = self._run_rows.get(run_id)
                if row_id is not None:
                    connection.execute("UPDATE runs SET pid = %s WHERE id = %s", (pid, row_id))
            for event in events:
                if fence is not None and isinstance(event, RunDispatched):
                    _dispatch_fenced(connection, event, fence[1], placements, dispatched)
                else:
                    self._apply_one(connection, event, now_us, results, dispatched)
            if fence is not None:  # a shared schedule's decision: told from the outbox
                told = news.write(
                    connection, teller=fence[0], epoch=fence[1], events=events, results=results
                )
        # Known only once committed: a rolled-back dispatch has no row.
        for run_id, row_id in dispatched:
            self._run_rows[run_id] = row_id
        for event in events:
            if isinstance(event, RunFinished | RunWithdrawn):
                self._run_rows.pop(event.run.run_id, None)
        return told

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
                UPDATE_TASK,
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
                # Not over an end already recorded: on a shared schedule the node that
                # ran it wrote its result, or the leader rescued it.
                "UPDATE runs SET finished_at = %s, outcome = %s, exit_code = %s, error = %s, "
                "output = %s WHERE id = %s AND outcome IS NULL",
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
                    f"skipped {count} occurrence{plural} ({SKIP_WHY[event.reason]})",
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
        connection.execute(PRUNE[missed], (task_id, task_id, self.history_limit - 1))

    def run_rows(self) -> dict[RunId, int]:
        """The row of each run this repository dispatched (or carried on) and that has
        not ended here yet."""
        return dict(self._run_rows)

    def forget_run_rows(self) -> None:
        self._run_rows.clear()

    def carry_run_rows(self, rows: Mapping[RunId, int]) -> None:
        """Runs dispatched before (see ``Engine.load``'s ``carried_on``): their rows."""
        self._run_rows.update(rows)

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
            f"SELECT {RUN_COLUMNS} FROM runs WHERE outcome IS NULL ORDER BY id"
        )
        return [run_record(row) for row in rows]

    def interrupt_open_runs(self, now: datetime) -> list[RunRecord]:
        """A single process's start: close the runs a single process left open.

        Only those: a run a node claimed (``node``) or a leader dispatched under its
        fencing token (``epoch``) belongs to the shared schedule, whose nodes go on
        running it; a node closes its own leftovers (``SharedRuns.interrupt_own``) and
        the leader rescues a silent node's. Closing them here would end another
        machine's run in progress, and a retry would run it twice."""
        with self._session.transaction() as connection:
            rows = connection.execute(
                f"UPDATE runs SET outcome = %s, finished_at = %s, error = %s "
                f"WHERE outcome IS NULL AND node IS NULL AND epoch IS NULL "
                f"RETURNING {RUN_COLUMNS}",
                (RunOutcome.INTERRUPTED.value, codec.to_us(now), INTERRUPTED_ERROR),
            ).fetchall()
            connection.execute("UPDATE tasks SET waiting = NULL WHERE waiting IS NOT NULL")
        self._run_rows.clear()
        # RETURNING gives the rows as they are now; the caller wants them as they were.
        return sorted(
            (
                run_record(
                    (*row[:6], None, None, row[8], None, *row[10:]),
                )
                for row in rows
            ),
            key=lambda record: record.id,
        )


_ANYWHERE = Placement()


class _FencedError(Exception):
    """Raised inside a fenced write to roll it back: not the leader, or a run key taken."""


def _dispatch_fenced(
    connection: Connection[Any],
    event: RunDispatched,
    epoch: int,
    placements: Mapping[TaskId, Placement],
    dispatched: list[tuple[RunId, int]],
) -> None:
    ticket = event.run
    row = connection.execute(
        "INSERT INTO runs (task_id, attempt, kind, scheduled_at, started_at, epoch, priority, "
        "concurrency_key, on_node, on_tag, needs, needs_idle_s) SELECT t.id, %s, %s, %s, %s, "
        "%s, t.priority, t.concurrency_key, %s, %s, %s, %s FROM tasks t WHERE t.id = %s "
        f"ON CONFLICT {RUN_KEY} DO NOTHING RETURNING id",
        (
            ticket.attempt,
            ticket.kind.value,
            codec.to_us(ticket.scheduled_at),
            codec.to_us(ticket.dispatched_at),
            epoch,
            *(placements.get(ticket.task_id) or _ANYWHERE).values,
            ticket.task_id,
        ),
    ).fetchone()
    if row is not None:
        dispatched.append((ticket.run_id, int(row[0])))
        return
    if connection.execute("SELECT 1 FROM tasks WHERE id = %s", (ticket.task_id,)).fetchone():
        raise _FencedError  # dispatched already: whoever believed otherwise reloads


_PAUSED_AT = codec.NEW_TASK_VALUES.index("paused") - 1  # the values come without the id


def _initial(values: Sequence[Any], slot: int | None) -> tuple[Any, ...]:
    """A new task's definition values (without the id) and its initial status values
    (no slot for a task that runs only after others)."""
    paused = values[_PAUSED_AT]
    state = TaskState.PAUSED.value if paused else TaskState.PENDING.value
    kind = None if slot is None else SlotKind.OCCURRENCE.value
    return (*values, state, 0, slot, kind, slot, 1, None, None, None, None)
