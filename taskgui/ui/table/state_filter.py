"""The state groups a person filters the task table by, and how many tasks each holds.

Each group is a button above the table with its count. A state belongs to exactly one
group besides "All", so the counts add up and a task is never counted as something it
is not: a task that will retry is not "Failed", and a paused one is not "Pending".

While a text search is active the counts are of the tasks the search finds, so a
button never promises rows that clicking it would not show. ``SearchCounts`` keeps
those per-state counts as rows change, so a state change costs a dict update rather
than a pass over every task.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum

from taskgui.core.state_groups import STATE_GROUPS
from taskgui.core.states import TaskState
from taskgui.core.task import TaskId

__all__ = ["SearchCounts", "StateFilter"]


class StateFilter(Enum):
    """The state groups a person filters by (the buttons above the table)."""

    ALL = "all"
    PENDING = "pending"
    RUNNING = "running"
    RETRYING = "retrying"
    PAUSED = "paused"
    FAILED = "failed"
    DONE = "done"
    CANCELLED = "cancelled"

    @property
    def label(self) -> str:
        return _LOOKS[self][0]

    @property
    def tooltip(self) -> str:
        """What the group holds, for the button's tooltip."""
        return _LOOKS[self][1]

    @property
    def states(self) -> frozenset[TaskState]:
        return _STATES[self]


_LOOKS = {
    StateFilter.ALL: ("All", "Every task"),
    StateFilter.PENDING: ("Pending", "Waiting for their next run (or for a worker)"),
    StateFilter.RUNNING: ("Running", "Running now"),
    StateFilter.RETRYING: ("Retrying", "A run failed; the next attempt is scheduled"),
    StateFilter.PAUSED: ("Paused", "Paused: no scheduled runs until resumed"),
    StateFilter.FAILED: (
        "Failed",
        "Gave up after their last attempt, or missed their only run time",
    ),
    StateFilter.DONE: ("Done", "One-off tasks that succeeded"),
    StateFilter.CANCELLED: ("Cancelled", "Cancelled for good"),
}

# The groups' states are the command line's too (``core.state_groups``).
_STATES: dict[StateFilter, frozenset[TaskState]] = {
    group: frozenset(TaskState) if group is StateFilter.ALL else STATE_GROUPS[group.value]
    for group in StateFilter
}


class SearchCounts:
    """How many of the tasks a search matches are in each state.

    ``set`` records a task's state (None: it does not match, or is gone); ``count``
    sums a group. The caller decides what matches; this only keeps the tally.
    """

    def __init__(self, matches: Iterable[tuple[TaskId, TaskState]] = ()) -> None:
        self._state_of: dict[TaskId, TaskState] = dict(matches)
        self._counts: dict[TaskState, int] = dict.fromkeys(TaskState, 0)
        for state in self._state_of.values():
            self._counts[state] += 1

    def state_of(self, task_id: TaskId) -> TaskState | None:
        """The state of a task the search finds; None if it does not find it."""
        return self._state_of.get(task_id)

    def ids(self) -> list[TaskId]:
        """The matching tasks (a narrower search only needs to look among these)."""
        return list(self._state_of)

    def set(self, task_id: TaskId, state: TaskState | None) -> bool:
        """Record a task's state, or that it no longer matches; True if a count moved."""
        old = self._state_of.get(task_id)
        if old is state:
            return False
        if old is not None:
            self._counts[old] -= 1
        if state is None:
            del self._state_of[task_id]
        else:
            self._state_of[task_id] = state
            self._counts[state] += 1
        return True

    def count(self, states: Iterable[TaskState]) -> int:
        return sum(self._counts[state] for state in states)

    def total(self) -> int:
        return len(self._state_of)
