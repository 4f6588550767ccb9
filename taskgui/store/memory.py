"""An in-memory TaskRepository: the contract without the disk.

It exists so the layers above can be tested fast, and so the contract suite has a
second implementation to hold the SQLite one to (and vice versa). It follows the same
rules: ids from 1 in insertion order and none used up by a failed batch, runs and
records of missed occurrences pruned to ``history_limit`` each, runs left open closed
as interrupted, statuses kept without the engine's live fields, and text SQLite could
not store refused or made storable.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime

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
from taskgui.core.status import RunId, RunResult, TaskSnapshot, TaskStatus, initial_status
from taskgui.core.task import TaskId, TaskSpec
from taskgui.store.protocols import (
    DEFAULT_HISTORY_LIMIT,
    INTERRUPTED_ERROR,
    LoadResult,
    QuarantinedTask,
    RunRecord,
    StartLoad,
    cap_output,
    check_storable,
    storable_text,
)

_NOT_LIVE = (0, None, None)  # running, running_since, waiting of a stored status


def _persistent(status: TaskStatus) -> TaskStatus:
    return status._replace(running=0, running_since=None, waiting=None)


class MemoryRepository:
    """TaskRepository in dicts. Nothing survives the process."""

    def __init__(self, *, history_limit: int = DEFAULT_HISTORY_LIMIT) -> None:
        if history_limit < 1:
            raise ValueError("history_limit must be at least 1")
        self.history_limit = history_limit
        self._tasks: dict[TaskId, TaskSnapshot] = {}
        self._waiting: dict[TaskId, WaitReason] = {}
        self._runs: dict[TaskId, list[RunRecord]] = {}
        self._next_task_id = 1
        self._run_ids = itertools.count(1)
        self._run_rows: dict[RunId, tuple[TaskId, int]] = {}
        # Tasks set aside (quarantined): kept, left out of loads and lists.
        self._set_aside: dict[TaskId, str] = {}

    def add_tasks(self, specs: Sequence[TaskSpec], now: datetime) -> list[TaskSpec]:
        # All or nothing, like SQLite's transaction: the whole batch is built (and
        # checked for text SQLite could not store) before an id is used up.
        first = self._next_task_id
        stored = [spec.with_id(first + offset) for offset, spec in enumerate(specs)]
        for spec in stored:
            check_storable(spec)
        snapshots = [TaskSnapshot(spec, initial_status(spec)) for spec in stored]
        self._next_task_id = first + len(stored)
        for snapshot in snapshots:
            self._tasks[snapshot.id] = snapshot
            self._runs[snapshot.id] = []
        return stored

    def apply(
        self,
        events: Sequence[Event],
        now: datetime,
        results: Mapping[RunId, RunResult] | None = None,
    ) -> None:
        results = results or {}
        for event in events:  # refuse before changing anything, as SQLite rolls back
            if isinstance(event, TaskChanged):
                check_storable(event.task.spec)
        for event in events:
            if isinstance(event, TaskChanged):
                if event.task.id in self._tasks:
                    # Only what SqliteRepository has columns for: the live fields
                    # (running, running_since, waiting) belong to this process.
                    task = event.task
                    status = task.status
                    # Like SQLite's tasks.waiting column: kept for other readers.
                    if status.waiting is None:
                        self._waiting.pop(task.id, None)
                    else:
                        self._waiting[task.id] = status.waiting
                    if (status.running, status.running_since, status.waiting) != _NOT_LIVE:
                        task = TaskSnapshot(task.spec, _persistent(status))
                    self._tasks[task.id] = task
            elif isinstance(event, RunDispatched):
                ticket = event.run
                record = RunRecord(
                    id=next(self._run_ids),
                    task_id=ticket.task_id,
                    attempt=ticket.attempt,
                    kind=ticket.kind,
                    scheduled_at=ticket.scheduled_at,
                    started_at=ticket.dispatched_at,
                    finished_at=None,
                    outcome=None,
                )
                self._runs.setdefault(ticket.task_id, []).append(record)
                self._run_rows[ticket.run_id] = (ticket.task_id, record.id)
            elif isinstance(event, RunWithdrawn):
                location = self._run_rows.pop(event.run.run_id, None)
                if location is not None and location[0] in self._runs:
                    task_runs = self._runs[location[0]]
                    task_runs[:] = [run for run in task_runs if run.id != location[1]]
            elif isinstance(event, RunFinished):
                self._finish(event, results.get(event.run.run_id) or RunResult())
            elif isinstance(event, OccurrencesSkipped):
                count = f"{event.count}" if event.exact else f"at least {event.count}"
                plural = "s" if event.count != 1 else ""
                self._runs.setdefault(event.task_id, []).append(
                    RunRecord(
                        id=next(self._run_ids),
                        task_id=event.task_id,
                        attempt=0,
                        kind=SlotKind.OCCURRENCE,
                        scheduled_at=event.first_at,
                        started_at=None,
                        finished_at=now,
                        outcome=RunOutcome.MISSED,
                        error=f"skipped {count} occurrence{plural} ({event.reason.value})",
                        missed=event.count,
                    )
                )
                self._prune(event.task_id)  # a missed run is history too
            elif isinstance(event, TaskRemoved):
                self._tasks.pop(event.task_id, None)
                self._runs.pop(event.task_id, None)
                self._set_aside.pop(event.task_id, None)
            elif isinstance(event, TaskDropped) and event.task_id in self._tasks:
                self._set_aside.setdefault(event.task_id, event.reason)

    def _finish(self, event: RunFinished, result: RunResult) -> None:
        location = self._run_rows.pop(event.run.run_id, None)
        if location is None or location[0] not in self._runs:
            return
        task_id, row_id = location
        runs = self._runs[task_id]
        for index, record in enumerate(runs):
            if record.id == row_id:
                runs[index] = replace(
                    record,
                    finished_at=event.finished_at,
                    outcome=event.outcome,
                    exit_code=result.exit_code,
                    error=None if result.error is None else storable_text(result.error),
                    output=cap_output(result.output),
                )
                break
        self._prune(task_id)

    def _prune(self, task_id: TaskId) -> None:
        """Keep the newest ``history_limit`` finished runs of a task (open ones aside),
        and as many records of missed occurrences, as SqliteRepository does."""
        runs = self._runs.get(task_id)
        if runs is None:
            return
        drop: set[int] = set()
        for missed in (False, True):
            kept = [
                record
                for record in runs
                if record.outcome is not None and (record.outcome is RunOutcome.MISSED) == missed
            ]
            drop.update(record.id for record in kept[: max(0, len(kept) - self.history_limit)])
        if drop:
            self._runs[task_id] = [record for record in runs if record.id not in drop]

    def record_run_pid(self, run_id: RunId, pid: int) -> None:
        self._change_run(run_id, lambda record: replace(record, pid=pid))

    def record_run_output(self, run_id: RunId, output: str) -> None:
        self._change_run(
            run_id,
            lambda record: (
                replace(record, output=cap_output(output)) if record.outcome is None else record
            ),
        )

    def _change_run(self, run_id: RunId, change: Callable[[RunRecord], RunRecord]) -> None:
        """Replace the history row of an engine run (if it is still there) by ``change(row)``."""
        location = self._run_rows.get(run_id)
        if location is None or location[0] not in self._runs:
            return
        task_id, row_id = location
        runs = self._runs[task_id]
        for index, record in enumerate(runs):
            if record.id == row_id:
                runs[index] = change(record)

    def interrupt_open_runs(self, now: datetime) -> list[RunRecord]:
        opened: list[RunRecord] = []
        for task_id, runs in self._runs.items():
            for index, record in enumerate(runs):
                if record.outcome is None:
                    opened.append(record)
                    runs[index] = replace(
                        record,
                        outcome=RunOutcome.INTERRUPTED,
                        finished_at=now,
                        error=INTERRUPTED_ERROR,
                    )
            self._runs[task_id] = runs
        self._run_rows.clear()
        return sorted(opened, key=lambda record: record.id)

    def _schedulable(self) -> list[TaskSnapshot]:
        return [task for task in self._tasks.values() if task.id not in self._set_aside]

    def load(self, now: datetime) -> LoadResult:
        return LoadResult(self._schedulable(), self.quarantined())

    def load_for_start(self, now: datetime) -> StartLoad:
        return StartLoad(self._schedulable(), None, self.quarantined())  # nothing to decode

    def get(self, task_id: TaskId) -> TaskSnapshot:
        try:
            return self._tasks[task_id]
        except KeyError:
            raise TaskNotFoundError(task_id) from None

    def list_tasks(self, state: TaskState | None = None) -> list[TaskSnapshot]:
        return [
            snapshot for snapshot in self._schedulable() if state is None or snapshot.state is state
        ]

    def wait_reasons(self) -> dict[TaskId, WaitReason]:
        return {
            task_id: self._waiting[task_id] for task_id in self._tasks if task_id in self._waiting
        }

    def last_runs(self) -> dict[TaskId, RunRecord]:
        latest: dict[TaskId, RunRecord] = {}
        for task_id, runs in self._runs.items():
            finished = [record for record in runs if record.outcome is not None]
            if finished:
                latest[task_id] = finished[-1]
        return latest

    def runs(self, task_id: TaskId, limit: int = DEFAULT_HISTORY_LIMIT) -> list[RunRecord]:
        return list(reversed(self._runs.get(task_id, [])))[:limit]

    def quarantined(self) -> list[QuarantinedTask]:
        return [QuarantinedTask(task_id, why) for task_id, why in sorted(self._set_aside.items())]

    def close(self) -> None:
        pass
