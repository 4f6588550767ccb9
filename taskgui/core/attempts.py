"""How many attempts of its occurrence a task has used, where that says something.

One rule for every view (the window's table, ``taskgui list`` and ``show``): until
2026-12-04 the command line printed the raw count, "0/3" and "1/3" beside tasks whose
row in the window was empty.
"""

from __future__ import annotations

from taskgui.core.states import SlotKind, TaskState
from taskgui.core.status import TaskSnapshot

# An occurrence under way: what it has used of its attempts is the point.
_ATTEMPTS_COUNT = frozenset({TaskState.RUNNING, TaskState.RETRYING, TaskState.EXHAUSTED})
# Between occurrences (or held): the count still speaks if the last one did not succeed.
_ATTEMPTS_IF_FAILED = frozenset({TaskState.PENDING, TaskState.PAUSED})


def shown_attempt(snapshot: TaskSnapshot) -> int | None:
    """The attempts to show beside a task, None when the count is noise.

    ``status.attempt`` keeps the count of the last occurrence after it ended, so
    "1 / 3" stood beside a task that had just succeeded, and beside a cancelled one
    (a trial), where it reads as a retry under way. It is shown while an occurrence
    runs or waits between its attempts (retrying, or paused or held with a retry
    queued), when the task gave up (exhausted), and after a recurring task's last
    occurrence failed for good (it is pending its next one: "3 / 3" says it failed
    every attempt). Not after a success, a cancel or a missed run. The window's
    Attempts column and the command line's ``list`` and ``show`` say the same.
    """
    status = snapshot.status
    if status.attempt <= 0:
        return None
    if status.state in _ATTEMPTS_COUNT:
        return status.attempt
    if status.state in _ATTEMPTS_IF_FAILED:
        between_attempts = status.slot_kind is SlotKind.RETRY
        failed = status.last_outcome is not None and status.last_outcome.is_failure
        return status.attempt if between_attempts or failed else None
    return None
