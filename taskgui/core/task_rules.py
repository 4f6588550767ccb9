"""May this task be run now, retried, paused, resumed, cancelled? One answer for all.

The engine's guards and the window's enabled actions (toolbar, context menu, "Pause
All") ask the same pure functions, so a button is never enabled for an operation the
engine would refuse, and the refusal a person reads from the CLI is the one the rules
give. Each returns None when the operation is allowed, else the refusal as a sentence.

The engine answers a request that changes nothing (pause a paused task, cancel a
cancelled one) with no events before it asks these; the rules still refuse it, which
is what an action's enabled state needs.
"""

from __future__ import annotations

from taskgui.core.states import OverlapPolicy, RunOutcome, TaskState
from taskgui.core.task import TaskSpec


def run_now_refusal(spec: TaskSpec, state: TaskState, *, running: bool) -> str | None:
    """Allowed for a paused task (it stays paused) and a finished one-off task (it runs
    once more); not beside a run in progress unless runs may overlap."""
    if running and spec.overlap is not OverlapPolicy.PARALLEL:
        return f"task {spec.name!r} is already running"
    if state is TaskState.CANCELLED and spec.recurrence.is_recurring:
        return f"task {spec.name!r} was cancelled; duplicate it to schedule it again"
    return None


def retry_refusal(
    spec: TaskSpec, state: TaskState, last_outcome: RunOutcome | None, *, running: bool
) -> str | None:
    """A task waiting for its next attempt, an exhausted one (it starts over), or one
    whose last run failed may be retried now; the rest have not failed."""
    if state is TaskState.RETRYING:
        return None
    failed = last_outcome is not None and last_outcome.is_failure
    if state is TaskState.EXHAUSTED or (failed and not state.is_terminal):
        return run_now_refusal(spec, state, running=running)
    return f"task {spec.name!r} has not failed; use 'run now' to run it anyway"


def cancel_refusal(spec: TaskSpec, state: TaskState) -> str | None:
    """Anything not finished may be cancelled (a run in progress is stopped)."""
    if state is TaskState.CANCELLED:
        return f"task {spec.name!r} is already cancelled"
    if state.is_terminal:
        return f"task {spec.name!r} has already {state.value}; nothing to cancel"
    return None


def pause_refusal(spec: TaskSpec, state: TaskState) -> str | None:
    """A task that will run again may be paused; a finished one has nothing to pause."""
    if spec.paused:
        return f"task {spec.name!r} is already paused"
    if state.is_terminal:
        return f"task {spec.name!r} has {state.value}; there is nothing to pause"
    return None


def resume_refusal(spec: TaskSpec) -> str | None:
    """A paused task may resume unless its schedule is refused (edit it first)."""
    if not spec.paused:
        return f"task {spec.name!r} is not paused"
    refusal = spec.recurrence.refusal
    if refusal is not None:
        return (
            f"task {spec.name!r} cannot resume: its schedule is refused "
            f"({refusal}); edit the schedule first"
        )
    return None
