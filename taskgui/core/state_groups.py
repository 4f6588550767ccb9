"""The groups of task states a person filters by: the window's buttons above the table
and ``taskgui list --state``. One table for both, so "failed" and "done" mean the same
tasks in each (the command line knew only the states themselves: ``exhausted``,
``succeeded``; a trial found the window's words refused there).

Each state is in exactly one group besides "all": a task that will retry is not
"failed", and a paused one is not "pending".
"""

from __future__ import annotations

from types import MappingProxyType

from taskgui.core.states import TaskState

# Group name -> its states (the name of a one-state group is that state's value).
STATE_GROUPS = MappingProxyType(
    {
        "pending": frozenset({TaskState.PENDING}),
        "running": frozenset({TaskState.RUNNING}),
        "retrying": frozenset({TaskState.RETRYING}),
        "paused": frozenset({TaskState.PAUSED}),
        "failed": frozenset({TaskState.EXHAUSTED, TaskState.MISSED}),
        "done": frozenset({TaskState.SUCCEEDED}),
        "cancelled": frozenset({TaskState.CANCELLED}),
    }
)
assert set().union(*STATE_GROUPS.values()) == set(TaskState), "every state has a group"


def states_named(name: str) -> frozenset[TaskState]:
    """The states a ``--state`` word stands for: a group, or one state by its value
    (``exhausted``). ValueError for neither."""
    group = STATE_GROUPS.get(name)
    return group if group is not None else frozenset({TaskState(name)})


def state_words() -> list[str]:
    """Every word ``states_named`` takes: the groups, then the states not named so."""
    return [*STATE_GROUPS, *(state.value for state in TaskState if state.value not in STATE_GROUPS)]
