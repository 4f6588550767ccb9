"""The enums that name where a task is and how a run ended.

Values are the lower-case words stored in the database and printed by the CLI, so
they are part of the on-disk and scripting contract: add members, never rename them.
"""

from __future__ import annotations

from enum import StrEnum


class TaskState(StrEnum):
    """Where a task is in its life. Derived by the engine, never set by hand."""

    PENDING = "pending"  # waiting for its next run (or due and waiting for a worker/key)
    RUNNING = "running"
    RETRYING = "retrying"  # a run failed; waiting for the next attempt
    PAUSED = "paused"
    SUCCEEDED = "succeeded"  # a one-off task that ran successfully
    EXHAUSTED = "exhausted"  # a one-off task whose every attempt failed
    CANCELLED = "cancelled"
    # A one-off task whose only run time passed while nothing was running it, and whose
    # misfire policy says not to run it late. Not in DESIGN.md's first list: without it
    # such a task would have to pretend it was cancelled or succeeded.
    MISSED = "missed"

    @property
    def is_terminal(self) -> bool:
        """True when the task will not run again unless a person asks it to."""
        return self in _TERMINAL

    @property
    def ended_as(self) -> str:
        """How a finished task ended, to follow its name: "task 'x' was cancelled"."""
        return _ENDED_AS.get(self, f"is {self.value}")


_TERMINAL = frozenset(
    {TaskState.SUCCEEDED, TaskState.EXHAUSTED, TaskState.CANCELLED, TaskState.MISSED}
)
_ENDED_AS = {
    TaskState.SUCCEEDED: "has succeeded",
    TaskState.EXHAUSTED: "gave up after its last attempt",
    TaskState.CANCELLED: "was cancelled",
    TaskState.MISSED: "missed its only run",
}


class RunOutcome(StrEnum):
    """How one run (one attempt) ended."""

    SUCCEEDED = "succeeded"
    FAILED = "failed"
    TIMED_OUT = "timed_out"
    CANCELLED = "cancelled"
    INTERRUPTED = "interrupted"  # the app stopped or died while the run was going
    MISSED = "missed"  # an occurrence skipped by the misfire or overlap policy
    # Stopped because a run condition ended (on battery, offline, user back) and the
    # task asks for that: run again when the conditions hold, no attempt spent.
    STOPPED = "stopped"

    @property
    def is_failure(self) -> bool:
        """True for the outcomes that the retry policy answers."""
        return self in (RunOutcome.FAILED, RunOutcome.TIMED_OUT, RunOutcome.INTERRUPTED)


class OverlapPolicy(StrEnum):
    """What a recurring task does when its next occurrence is due while a run is going."""

    SKIP = "skip"  # drop the occurrence (recorded as missed)
    QUEUE = "queue"  # run it as soon as the previous run finishes
    PARALLEL = "parallel"  # run it alongside


class MisfirePolicy(StrEnum):
    """What a task does when found past due by more than its grace period.

    That happens after the machine slept, taskgui was not running, the clock jumped, or
    the task was paused: resuming a task meets the same policy for what it missed.
    """

    RUN_ONCE = "run_once"  # one catch-up run now; missed occurrences coalesce into it
    SKIP = "skip"  # do not run late; go on with the next future occurrence
    RUN_ALL = "run_all"  # run every missed occurrence, up to a bound


class WaitReason(StrEnum):
    """Why a task that is due has not started yet."""

    WORKER = "worker"  # every worker is busy
    CONCURRENCY_KEY = "concurrency_key"  # another task with the same key is running
    PREVIOUS_RUN = "previous_run"  # overlap policy QUEUE: the previous run is going
    # A run condition does not hold (core/conditions.py), one member per condition.
    AC_POWER = "ac_power"  # on battery
    NETWORK = "network"  # offline
    UNMETERED = "unmetered"  # on a metered connection
    IDLE = "idle"  # the user is active
    UNCHECKABLE = "uncheckable"  # this machine cannot report what a condition needs
    # On a shared schedule: each machine that may take it meets some of its conditions
    # but none meets them all (one on battery, the other offline), so no one of them
    # is the reason.
    CONDITIONS_SPLIT = "conditions_split"
    WAKE_ANSWER = "wake_answer"  # held after a wake-up until a person answers (core/wake.py)
    UPSTREAM = "upstream"  # it runs after other tasks (core/dependencies.py), not yet
    # On a shared schedule: dispatched, and no node (or not the one it is pinned to)
    # has taken it yet, though a machine that meets its conditions answers.
    NODE = "node"
    # ... and no node that may take it answers: the node it is pinned to is away, or
    # none that answers has its tag (starting one is what helps, not waiting).
    NO_NODE = "no_node"


class SlotKind(StrEnum):
    """What the task's next queued run is for."""

    OCCURRENCE = "occurrence"  # a run of its schedule
    RETRY = "retry"  # the next attempt after a failure
    MANUAL = "manual"  # a person asked for it (run now / retry now)
    TRIGGERED = "triggered"  # the tasks it runs after ended as it asks (core/dependencies.py)
