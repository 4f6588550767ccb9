"""What the engine reports back: frozen, past-tense facts (and one request).

Every engine call returns a list of these. The store persists them, the runtime acts
on them, the views redraw from them; the engine itself never touches disk or Qt.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import TypeAlias

from taskgui.core.fast_init import fast_init
from taskgui.core.states import RunOutcome
from taskgui.core.status import RunTicket, TaskSnapshot
from taskgui.core.task import TaskId


@fast_init
@dataclass(frozen=True, slots=True)
class TaskAdded:
    task: TaskSnapshot


@fast_init
@dataclass(frozen=True, slots=True)
class TaskChanged:
    """Anything about the task changed; ``task`` is its new snapshot."""

    task: TaskSnapshot


@dataclass(frozen=True, slots=True)
class TaskRemoved:
    task_id: TaskId


@dataclass(frozen=True, slots=True)
class TaskDropped:
    """A task was set aside: it could not be read when first needed, or handling it
    failed in a way no task should; the engine no longer has it.

    Not a deletion: a repository applying this event keeps the row and sets it aside
    (quarantine), so the next start leaves it out too; one already set aside keeps its
    first reason. Front ends report ``reason``.
    """

    task_id: TaskId
    reason: str
    unreadable: bool = True  # False: it was read, and handling it failed


@fast_init
@dataclass(frozen=True, slots=True)
class RunDispatched:
    """The engine chose this run; the runtime must record it, then start it.

    ``queued``: dispatched beyond the free workers, to wait in the pool for the next
    one (``Engine.due``'s ``queue``): recorded as dispatched, not yet started.
    """

    run: RunTicket
    queued: bool = False


@dataclass(frozen=True, slots=True)
class RunWithdrawn:
    """A dispatched run was taken back before its command started: it never happened,
    and the store forgets it (see ``Engine.withdraw``)."""

    run: RunTicket


@dataclass(frozen=True, slots=True)
class RunFinished:
    run: RunTicket
    outcome: RunOutcome
    finished_at: datetime


@dataclass(frozen=True, slots=True)
class RetryScheduled:
    """Attempt ``attempt`` of the task will run at ``run_at`` (after ``delay``)."""

    task_id: TaskId
    attempt: int
    max_attempts: int
    run_at: datetime
    delay: timedelta


@dataclass(frozen=True, slots=True)
class TaskExhausted:
    """Every attempt of an occurrence failed; the app should say so loudly."""

    task_id: TaskId
    name: str
    attempts: int
    outcome: RunOutcome


class SkipReason(StrEnum):
    MISFIRE = "misfire"  # found late (sleep, downtime, clock jump); policy said skip/coalesce
    OVERLAP = "overlap"  # the previous run was still going; overlap policy said skip
    CONDITION = "condition"  # its run conditions did not hold before it gave up waiting
    WAKE = "wake"  # due while the computer slept; a person chose Skip (core/wake.py)


# Why a missed record says it was missed: written with it by every store, so one table
# (PostgreSQL's own copy once lacked "condition" and failed on such a skip).
SKIP_WHY = {
    SkipReason.MISFIRE: "taskgui was not running, the machine slept, or the clock jumped",
    SkipReason.OVERLAP: "the previous run was still going",
    SkipReason.CONDITION: "its run conditions did not hold in time",
    SkipReason.WAKE: "due while the computer slept; skipped when it woke",
}


@dataclass(frozen=True, slots=True)
class OccurrencesSkipped:
    """``count`` occurrences from ``first_at`` on did not run (``exact``: not a lower bound)."""

    task_id: TaskId
    count: int
    exact: bool
    first_at: datetime
    reason: SkipReason


@dataclass(frozen=True, slots=True)
class RunCancelRequested:
    """The task was cancelled or deleted while this run was going: stop its process."""

    run: RunTicket


Event: TypeAlias = (
    TaskAdded
    | TaskChanged
    | TaskRemoved
    | TaskDropped
    | RunDispatched
    | RunWithdrawn
    | RunFinished
    | RetryScheduled
    | TaskExhausted
    | OccurrencesSkipped
    | RunCancelRequested
)
