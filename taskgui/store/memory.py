"""An in-memory ScheduleStore: the contract without the disk.

It exists so the layers above can be tested fast, and so the contract suite has a
second implementation to hold the SQLite one to (and vice versa). It follows the same
rules: ids from 1 in insertion order, none used up by a failed batch, runs and missed
occurrences pruned to ``history_limit`` each, open runs closed as interrupted, no live
fields of the engine kept, and text SQLite could not store refused or made storable.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace
from datetime import datetime

from taskgui.core.dependency_text import linked
from taskgui.core.errors import TaskNotFoundError
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
from taskgui.core.status import RunId, RunResult, TaskSnapshot, TaskStatus, initial_status
from taskgui.core.task import TaskId, TaskSpec
from taskgui.store.doorbell import Bell, Doorbells
from taskgui.store.memory_requests import RequestBox
from taskgui.store.protocols import (
    DEFAULT_HISTORY_LIMIT,
    INTERRUPTED_ERROR,
    Checkpointer,
    LoadResult,
    QuarantinedTask,
    RunRecord,
    ScheduleHolder,
    StartLoad,
    TaskChanges,
    cap_output,
    check_storable,
    storable_text,
)
from taskgui.store.requests import RequestRow

_NOT_LIVE = (0, None, None)  # running, running_since, waiting of a stored status


def _persistent(status: TaskStatus) -> TaskStatus:
    return status._replace(running=0, running_since=None, waiting=None)


class MemoryDatabase:
    """What every connection to one in-memory store shares: the "file".

    Several ``MemoryRepository`` objects over one ``MemoryDatabase`` behave like
    several connections to one SQLite file: what one commits the others read, its
    requests reach them, and their change feeds say so. Each write below is one
    "commit" (``version`` goes up by one), which is all the change feed needs.
    """

    def __init__(self) -> None:
        self.tasks: dict[TaskId, TaskSnapshot] = {}
        self.waiting: dict[TaskId, WaitReason] = {}
        self.runs: dict[TaskId, list[RunRecord]] = {}
        self.next_task_id = 1
        self.run_ids = itertools.count(1)
        # Tasks set aside (quarantined): kept, left out of loads and lists.
        self.set_aside: dict[TaskId, str] = {}
        self.requests = RequestBox()
        self.version = 0  # commits so far, by any connection
        # Who runs the schedule (HolderProbe): there is no lock to read, so whoever
        # plays the process that runs it says so here.
        self.holder: ScheduleHolder | None = None
        self.bells = Doorbells()  # what the change feeds' descriptors are woken by


class MemoryRepository:
    """ScheduleStore in dicts. Nothing survives the process.

    ``database``: share the store of another connection (``connect`` gives one), as
    a second process would open the same file; by default a store of its own.
    """

    def __init__(
        self,
        *,
        history_limit: int = DEFAULT_HISTORY_LIMIT,
        database: MemoryDatabase | None = None,
    ) -> None:
        if history_limit < 1:
            raise ValueError("history_limit must be at least 1")
        self.history_limit = history_limit
        self.database = MemoryDatabase() if database is None else database
        self._data = self.database
        # Engine run ids live for one connection; the rows they map to are shared.
        self._run_rows: dict[RunId, tuple[TaskId, int]] = {}
        # The change feed: the version last looked at, and this connection's own
        # commits since (which it need not be told of).
        self._seen_version = self._data.version
        self._own_commits = 0
        self._bell: Bell | None = None  # made when an event loop first asks (fileno)

    location: str | None = None  # nothing outside this process can open it

    def connect(self) -> MemoryRepository:
        """Another connection to this store (as another process would open the file)."""
        return MemoryRepository(history_limit=self.history_limit, database=self._data)

    def _commit(self) -> None:
        self._data.version += 1
        self._own_commits += 1
        self._data.bells.ring_others(self)

    def add_tasks(self, specs: Sequence[TaskSpec], now: datetime) -> list[TaskSpec]:
        # All or nothing, like SQLite's transaction: the whole batch is built (and
        # checked for text SQLite could not store) before an id is used up.
        first = self._data.next_task_id
        stored = [spec.with_id(first + offset) for offset, spec in enumerate(specs)]
        for spec in stored:
            check_storable(spec)
        snapshots = [TaskSnapshot(spec, initial_status(spec)) for spec in stored]
        self._data.next_task_id = first + len(stored)
        for snapshot in snapshots:
            self._data.tasks[snapshot.id] = snapshot
            self._data.runs[snapshot.id] = []
        if stored:
            self._commit()
        return stored

    def apply(
        self,
        events: Sequence[Event],
        now: datetime,
        results: Mapping[RunId, RunResult] | None = None,
        pids: Mapping[RunId, int] | None = None,
    ) -> None:
        results = results or {}
        for event in events:  # refuse before changing anything, as SQLite rolls back
            if isinstance(event, TaskChanged):
                check_storable(event.task.spec)
        for run_id, pid in (pids or {}).items():  # first: a run may end in this batch
            self.record_run_pid(run_id, pid)
        for event in events:
            if isinstance(event, TaskChanged):
                if event.task.id in self._data.tasks:
                    # Only what SqliteRepository has columns for: the live fields
                    # (running, running_since, waiting) belong to this process.
                    task = event.task
                    status = task.status
                    # Like SQLite's tasks.waiting column: kept for other readers.
                    if status.waiting is None:
                        self._data.waiting.pop(task.id, None)
                    else:
                        self._data.waiting[task.id] = status.waiting
                    if (status.running, status.running_since, status.waiting) != _NOT_LIVE:
                        task = TaskSnapshot(task.spec, _persistent(status))
                    self._data.tasks[task.id] = task
            elif isinstance(event, RunDispatched):
                ticket = event.run
                record = RunRecord(
                    id=next(self._data.run_ids),
                    task_id=ticket.task_id,
                    attempt=ticket.attempt,
                    kind=ticket.kind,
                    scheduled_at=ticket.scheduled_at,
                    started_at=ticket.dispatched_at,
                    finished_at=None,
                    outcome=None,
                )
                self._data.runs.setdefault(ticket.task_id, []).append(record)
                self._run_rows[ticket.run_id] = (ticket.task_id, record.id)
            elif isinstance(event, RunWithdrawn):
                location = self._run_rows.pop(event.run.run_id, None)
                if location is not None and location[0] in self._data.runs:
                    task_runs = self._data.runs[location[0]]
                    task_runs[:] = [run for run in task_runs if run.id != location[1]]
            elif isinstance(event, RunFinished):
                self._finish(event, results.get(event.run.run_id) or RunResult())
            elif isinstance(event, OccurrencesSkipped):
                count = f"{event.count}" if event.exact else f"at least {event.count}"
                plural = "s" if event.count != 1 else ""
                self._data.runs.setdefault(event.task_id, []).append(
                    RunRecord(
                        id=next(self._data.run_ids),
                        task_id=event.task_id,
                        attempt=0,
                        kind=SlotKind.OCCURRENCE,
                        scheduled_at=event.first_at,
                        started_at=None,
                        finished_at=now,
                        outcome=RunOutcome.MISSED,
                        error=f"skipped {count} occurrence{plural} ({SKIP_WHY[event.reason]})",
                        missed=event.count,
                    )
                )
                self._prune(event.task_id)  # a missed run is history too
            elif isinstance(event, TaskRemoved):
                self._data.tasks.pop(event.task_id, None)
                self._data.runs.pop(event.task_id, None)
                self._data.set_aside.pop(event.task_id, None)
            elif isinstance(event, TaskDropped) and event.task_id in self._data.tasks:
                self._data.set_aside.setdefault(event.task_id, event.reason)
        if events:
            self._commit()

    def _finish(self, event: RunFinished, result: RunResult) -> None:
        location = self._run_rows.pop(event.run.run_id, None)
        if location is None or location[0] not in self._data.runs:
            return
        task_id, row_id = location
        runs = self._data.runs[task_id]
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
        runs = self._data.runs.get(task_id)
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
            self._data.runs[task_id] = [record for record in runs if record.id not in drop]

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
        if location is None or location[0] not in self._data.runs:
            return
        task_id, row_id = location
        runs = self._data.runs[task_id]
        for index, record in enumerate(runs):
            if record.id == row_id:
                runs[index] = change(record)
                self._commit()

    def interrupt_open_runs(self, now: datetime) -> list[RunRecord]:
        opened: list[RunRecord] = []
        for task_id, runs in self._data.runs.items():
            for index, record in enumerate(runs):
                if record.outcome is None:
                    opened.append(record)
                    runs[index] = replace(
                        record,
                        outcome=RunOutcome.INTERRUPTED,
                        finished_at=now,
                        error=INTERRUPTED_ERROR,
                    )
            self._data.runs[task_id] = runs
        self._run_rows.clear()
        self._data.waiting.clear()  # what those tasks waited for is over too (as SQLite)
        if opened:
            self._commit()
        return sorted(opened, key=lambda record: record.id)

    def _schedulable(self) -> list[TaskSnapshot]:
        return [task for task in self._data.tasks.values() if task.id not in self._data.set_aside]

    def load(self, now: datetime) -> LoadResult:
        return LoadResult(self._schedulable(), self.quarantined())

    def load_for_start(self, now: datetime) -> StartLoad:
        return StartLoad(self._schedulable(), None, self.quarantined())  # nothing to decode

    def get(self, task_id: TaskId) -> TaskSnapshot:
        try:
            return self._data.tasks[task_id]
        except KeyError:
            raise TaskNotFoundError(task_id) from None

    def list_tasks(self, state: TaskState | None = None) -> list[TaskSnapshot]:
        return [
            snapshot for snapshot in self._schedulable() if state is None or snapshot.state is state
        ]

    def linked_tasks(self, spec: TaskSpec) -> list[TaskSnapshot]:
        return linked(spec, self._schedulable())

    def wait_reasons(self, task_ids: Collection[TaskId] | None = None) -> dict[TaskId, WaitReason]:
        tasks, waiting = self._data.tasks, self._data.waiting
        wanted = (
            tasks if task_ids is None else [task_id for task_id in task_ids if task_id in tasks]
        )
        return {task_id: waiting[task_id] for task_id in wanted if task_id in waiting}

    def last_runs(self) -> dict[TaskId, RunRecord]:
        latest: dict[TaskId, RunRecord] = {}
        for task_id, runs in self._data.runs.items():
            finished = [record for record in runs if record.outcome is not None]
            if finished:
                latest[task_id] = finished[-1]
        return latest

    def runs(self, task_id: TaskId, limit: int = DEFAULT_HISTORY_LIMIT) -> list[RunRecord]:
        return list(reversed(self._data.runs.get(task_id, [])))[:limit]

    def quarantined(self) -> list[QuarantinedTask]:
        return [
            QuarantinedTask(task_id, why) for task_id, why in sorted(self._data.set_aside.items())
        ]

    # ----------------------------------------------------------- following

    def task_changes(self, marks: Mapping[TaskId, object]) -> TaskChanges:
        changed: list[TaskSnapshot] = []
        new_marks: dict[TaskId, object] = {}
        for snapshot in sorted(self._schedulable(), key=lambda task: task.id):
            waiting = self._data.waiting.get(snapshot.id)
            mark = (snapshot, waiting)
            new_marks[snapshot.id] = mark
            if marks.get(snapshot.id) != mark:
                shown = snapshot.status._replace(waiting=waiting)
                changed.append(snapshot._replace(status=shown))
        removed = [task_id for task_id in marks if task_id not in new_marks]
        return TaskChanges(changed=changed, removed=removed, marks=new_marks)

    def schedule_holder(self) -> ScheduleHolder | None:
        return self._data.holder

    def last_run_ids(self) -> dict[TaskId, int]:
        return {task_id: record.id for task_id, record in self.last_runs().items()}

    def runs_by_id(self, run_ids: Collection[int]) -> list[RunRecord]:
        wanted = set(run_ids)
        found = [run for runs in self._data.runs.values() for run in runs if run.id in wanted]
        return sorted(found, key=lambda record: record.id)

    def open_runs(self) -> list[RunRecord]:
        opened = [run for runs in self._data.runs.values() for run in runs if run.outcome is None]
        return sorted(opened, key=lambda record: record.id)

    # ------------------------------------------------------------ requests

    def submit_request(
        self, op: str, task_id: TaskId | None, payload: str | None, now: datetime
    ) -> int:
        request_id = self._data.requests.submit(op, task_id, payload, now)
        self._commit()
        return request_id

    def open_requests(self) -> list[RequestRow]:
        return self._data.requests.open()

    def complete_request(self, request_id: int, error: str | None, now: datetime) -> None:
        self._data.requests.complete(request_id, error, now)
        self._commit()

    def request_outcome(self, request_id: int) -> tuple[bool, str | None]:
        return self._data.requests.outcome(request_id)

    # --------------------------------------------------------- change feed

    def changed(self) -> bool:
        if self._bell is not None:
            self._bell.drain()
        foreign = self._data.version - self._seen_version - self._own_commits
        self._seen_version = self._data.version
        self._own_commits = 0
        return foreign > 0

    def fileno(self) -> int | None:
        if self._bell is None:
            self._bell = self._data.bells.bell(self)
            weakref.finalize(self, self._bell.close)  # a store never closed leaks no pipe
        return self._bell.fileno()

    def watch_paths(self) -> tuple[str, ...]:
        return ()  # nothing on disk: the descriptor (fileno) rings

    # -------------------------------------------------------------- upkeep

    def take_over_checkpoints(self) -> Callable[[], Checkpointer] | None:
        return None  # no log to fold back

    def task_stream(self) -> None:
        return None  # nothing to read: every task is in memory

    def verify_file(self, *, companions: bool = True) -> None:
        pass  # nothing on disk can be replaced under it

    def save_what_is_open(self, now: datetime) -> str:
        return "nothing was on disk"

    def close(self) -> None:
        if self._bell is not None:
            self._bell.close()
