"""Picking up after whatever happened last time a schedule ran.

The order matters. First, runs that a previous process left in progress (it crashed,
was killed, the machine lost power) are closed as ``interrupted``; then the tasks are
loaded into the engine, which sends each interrupted task to its retry policy; then
those decisions are committed. Past-due tasks meet their misfire policy at the
scheduler's first ``due``. A crash therefore loses at most the runs in flight, and those
are recorded and retried: at-least-once delivery.

A run that was queued for a worker and never started (dispatched beyond the free
workers, ``RunDispatched.queued``; the store kept no start time for it) is recorded
as interrupted too, but it is not a failed attempt: its task gets its run back, due
when it was, as a new attempt (should its process have started unrecorded after all,
each execution still has an attempt of its own), and runs as any due task does.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from taskgui.core.engine.engine import Engine
from taskgui.core.events import Event
from taskgui.core.states import SlotKind, TaskState
from taskgui.core.status import TaskSnapshot
from taskgui.core.task import TaskId
from taskgui.store.protocols import QuarantinedTask, RunRecord, TaskRepository
from taskgui.system.collector import collector_paused


@dataclass(frozen=True, slots=True)
class Recovery:
    """What opening the schedule found and did, for the log and the user."""

    interrupted: list[RunRecord]
    quarantined: list[QuarantinedTask]
    events: list[Event]
    task_count: int


def recover(repository: TaskRepository, engine: Engine, now: datetime) -> Recovery:
    """Close runs left open, load every task into ``engine``, commit its decisions."""
    interrupted = repository.interrupt_open_runs(now)
    # Loading allocates a few objects per task and frees almost none; the cyclic
    # collector would walk every one of them again and again while the heap grows
    # (a third of a 100,000-task cold start). Nothing here makes cycles to collect.
    with collector_paused():
        loaded = repository.load_for_start(now)
        tasks = _runs_given_back(loaded.tasks, interrupted)
        events = engine.load(tasks, now, loaded.deferred)
    repository.apply(events, now)
    return Recovery(interrupted, loaded.quarantined, events, len(engine))


def _runs_given_back(tasks: list[TaskSnapshot], interrupted: list[RunRecord]) -> list[TaskSnapshot]:
    """Tasks stored as running whose open runs had all never started: as pending, with
    the earliest of those runs due again (see the module docstring)."""
    unstarted: dict[TaskId, RunRecord] = {}
    started: set[TaskId] = set()
    for run in interrupted:
        if run.started_at is not None:
            started.add(run.task_id)
        else:
            unstarted.setdefault(run.task_id, run)
    if not unstarted:
        return tasks
    return [
        _given_back(task, unstarted[task.id])
        if task.id in unstarted and task.id not in started and task.state is TaskState.RUNNING
        else task
        for task in tasks
    ]


def _given_back(task: TaskSnapshot, run: RunRecord) -> TaskSnapshot:
    status = task.status
    # What the dispatch moved into the slot (the next occurrence, for a run of another
    # kind the occurrence waiting behind it) waits behind the run again.
    behind = status.next_run_at if status.slot_kind is SlotKind.OCCURRENCE else None
    given = status._replace(
        state=TaskState.PENDING,
        next_run_at=run.scheduled_at,
        slot_kind=run.kind,
        scheduled_at=run.scheduled_at,
        slot_attempt=run.attempt + 1,
        deferred_at=None if run.kind is SlotKind.OCCURRENCE else (behind or status.deferred_at),
        running=0,
        running_since=None,
        waiting=None,
    )
    return task._replace(status=given)
