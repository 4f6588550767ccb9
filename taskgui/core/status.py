"""Where a task is: the engine's view of it, as frozen values the other layers read.

``TaskStatus`` is everything the engine needs to resume a task after a restart (its
attempt count, its next run, what that run is for), so the store persists it next to
the definition and retry state survives a crash. ``TaskSnapshot`` pairs the two for
views. ``RunTicket`` names one run handed to a worker.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple

from taskgui.core.fast_init import fast_init
from taskgui.core.states import RunOutcome, SlotKind, TaskState, WaitReason
from taskgui.core.task import TaskId, TaskSpec

RunId = int


class TaskStatus(NamedTuple):
    """A task's place in the schedule.

    ``next_run_at`` / ``slot_kind`` / ``scheduled_at`` describe the one run the task has
    queued (its *slot*): when it fires, what it is for, and when it is due, which the
    history shows as "scheduled" (for an occurrence, the occurrence time that
    fixed-rate arithmetic adds the interval to; an older taskgui stored a retry's
    decision time here, and the engine reads a retry's due time from ``next_run_at``,
    so old rows show right too). ``deferred_at`` keeps
    the next scheduled occurrence while a retry or a manual run stands in front of it.
    ``attempt`` is how many attempts the current occurrence has used.

    A NamedTuple rather than a frozen dataclass, unlike the other values: the engine
    builds one for every event it returns, and a tuple is three times cheaper to make
    (0.5 µs against 1.5 µs), which is what keeps add and cancel within their budgets.
    It is just as immutable; change one with ``_replace``.
    """

    state: TaskState = TaskState.PENDING
    attempt: int = 0
    next_run_at: datetime | None = None
    slot_kind: SlotKind | None = None
    scheduled_at: datetime | None = None
    slot_attempt: int = 1
    deferred_at: datetime | None = None
    last_outcome: RunOutcome | None = None
    last_run_at: datetime | None = None
    running: int = 0
    running_since: datetime | None = None
    waiting: WaitReason | None = None
    # The upstreams that completed since this task's last trigger (fan-in marks, see
    # core/dependencies.py): stored with the status, committed with the upstream's result.
    after_marks: frozenset[TaskId] = frozenset()
    # On a shared (PostgreSQL) schedule: the nodes that run its runs in progress, as
    # a window following it read them (the engine never sets it; the store lays it
    # over the status, as it does ``waiting``).
    nodes: tuple[str, ...] = ()


class TaskSnapshot(NamedTuple):
    """A task's definition and status at one moment.

    A NamedTuple for the same reason as TaskStatus: one is made for every event.
    """

    spec: TaskSpec
    status: TaskStatus

    @property
    def id(self) -> TaskId:
        return self.spec.id

    @property
    def state(self) -> TaskState:
        return self.status.state


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class RunTicket:
    """One run handed to a worker: which task, which attempt, for which occurrence."""

    run_id: RunId
    task_id: TaskId
    attempt: int
    kind: SlotKind
    scheduled_at: datetime
    dispatched_at: datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class RunResult:
    """What the runner observed of a finished run, beyond its outcome.

    ``output`` is the tail of stdout and stderr, already capped by the runner;
    ``error`` is a one-line explanation for a person ("exit status 3", "timed out
    after 30s", "command not found").
    """

    exit_code: int | None = None
    error: str | None = None
    output: str = ""
    # When its process started, for a run queued for a worker whose start the store
    # may not have heard of before its end (None: the store's own record stands).
    started_at: datetime | None = None


def initial_status(spec: TaskSpec) -> TaskStatus:
    """The status of a task the moment it is added: its first occurrence queued.

    The engine produces exactly this for a new task, so a repository can store a
    task and its status in one write, before the engine has seen it.
    """
    if spec.only_after:  # no schedule of its own: nothing queued until its upstream ends
        return TaskStatus(state=TaskState.PAUSED if spec.paused else TaskState.PENDING)
    first = spec.recurrence.first_at_or_after(spec.first_run_at)
    return TaskStatus(
        state=TaskState.PAUSED if spec.paused else TaskState.PENDING,
        next_run_at=first,
        slot_kind=SlotKind.OCCURRENCE,
        scheduled_at=first,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class RunRecord:
    """One run in a task's history. ``outcome`` is None while the run is in progress.

    A core value (not a store row) so that views can show history without knowing
    how it is stored.
    """

    id: int
    task_id: TaskId
    attempt: int
    kind: SlotKind
    scheduled_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    outcome: RunOutcome | None
    exit_code: int | None = None
    error: str | None = None
    output: str = ""
    pid: int | None = None  # the process (group) that ran it, once started
    # For a record of missed occurrences (outcome ``missed``): how many it stands for,
    # a lower bound when ``error`` says "at least". 0 for a run.
    missed: int = 0
    # On a shared schedule: the node that ran (or runs) it; "" elsewhere.
    node: str = ""
