"""The command line's side of "run after": checks before saving, and what show and
delete say about the tasks that run before and after one.

Every check reads the stored tasks (the CLI holds no engine when a scheduler runs
elsewhere); the scheduler checks again when it takes the change (``Operations``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, TextIO

from taskgui.core.dependencies import Upstream, cycle_through
from taskgui.core.dependency_text import (
    dependents_text,
    downstream_index,
    name_of,
    upstream_text,
    waiting_for,
)
from taskgui.core.errors import InvalidStateError, InvalidTaskError
from taskgui.core.operation import Op
from taskgui.core.recurrence import Once
from taskgui.core.states import WaitReason
from taskgui.core.status import TaskSnapshot
from taskgui.core.task import TaskId, TaskSpec
from taskgui.store.protocols import TaskRepository

UPSTREAM = WaitReason.UPSTREAM.value


def check_upstreams(spec: TaskSpec, tasks: Sequence[TaskSnapshot]) -> None:
    """InvalidTaskError when the task runs after one that does not exist, or would
    close a cycle (named: "A (1) -> B (2) -> A (1)")."""
    if not spec.after:
        return
    names = {snapshot.id: snapshot.spec.name for snapshot in tasks}
    for edge in spec.after:
        if edge.task_id not in names:
            raise InvalidTaskError(f"--after names task {edge.task_id}, which does not exist")
    if not spec.id:
        return  # a new task: nothing runs after it yet, so it closes no cycle
    upstreams = {s.id: [edge.task_id for edge in s.spec.after] for s in tasks if s.spec.after}
    cycle = cycle_through(spec.id, [edge.task_id for edge in spec.after], upstreams)
    if cycle is not None:
        names[spec.id] = spec.name
        path = " -> ".join(name_of(task_id, names) for task_id in cycle)
        raise InvalidTaskError(f"'run after' would make a cycle: {path}")


def edited(
    spec: TaskSpec, after: Sequence[Upstream] | None, no_after: bool, only_after: str | None
) -> TaskSpec:
    """``edit``'s new "run after" for ``spec``: the edges given (or none), and whether
    it keeps a schedule of its own; InvalidTaskError in core's words if it cannot be."""
    edges = () if no_after else tuple(after) if after is not None else spec.after
    only = spec.only_after if only_after is None else only_after == "yes"
    if only_after == "yes" and not edges:  # before: exit 0, "runs after no task"
        raise InvalidTaskError(
            f"task {spec.id} runs after no task, so --only-after yes has nothing to wait "
            "for; give the tasks with --after ID"
        )
    if not edges:
        only = False
    if only:  # no schedule of its own: it becomes a one-off that waits for its upstream
        return replace(spec, after=edges, only_after=True, recurrence=Once())
    return replace(spec, after=edges, only_after=False)


def after_words(spec: TaskSpec) -> str:
    if not spec.after:
        return "runs after no task"
    ids = ", ".join(f"{edge.task_id}:{edge.after.value}" for edge in spec.after)
    return f"runs after {ids}" + (" only" if spec.only_after else "")


def names_of(tasks: Sequence[TaskSnapshot]) -> dict[TaskId, str]:
    return {snapshot.id: snapshot.spec.name for snapshot in tasks}


def waiting_words(snapshot: TaskSnapshot, names: Mapping[TaskId, str]) -> str:
    """The list's WAITING cell for a task waiting on its upstream: ``for A (3)``."""
    return waiting_for(snapshot, names).removeprefix("waiting ")


def show_pairs(snapshot: TaskSnapshot, tasks: Sequence[TaskSnapshot]) -> list[tuple[str, str]]:
    """``show``'s lines for the tasks before and after this one."""
    names = names_of(tasks)
    index = downstream_index(task.spec for task in tasks)
    return [
        ("runs after", upstream_text(snapshot.spec, names) or "none"),
        ("runs before", dependents_text(snapshot.id, index, names) or "none"),
    ]


def show_json(snapshot: TaskSnapshot, tasks: Sequence[TaskSnapshot]) -> dict[str, Any]:
    """``show --json``'s keys for the tasks before and after this one."""
    names = names_of(tasks)
    index = downstream_index(task.spec for task in tasks)
    marks = snapshot.status.after_marks
    return {
        "after": [
            {
                "id": edge.task_id,
                "name": names.get(edge.task_id),  # None: that task no longer exists
                "on": edge.after.value,
                "completed": edge.task_id in marks,  # since this task's last trigger
            }
            for edge in snapshot.spec.after
        ],
        "only_after": snapshot.spec.only_after,
        "downstream": [
            {"id": task_id, "name": names[task_id]} for task_id in index.get(snapshot.id, ())
        ],
    }


def confirm_change(
    op: Op,
    snapshot: TaskSnapshot,
    repository: TaskRepository,
    *,
    force: bool,
    stdin: TextIO | None = None,
    ask: Callable[[str], str] = input,
) -> None:
    """Before a delete, or a cancel of a task that has not ended, of a task others run
    after: ask on a terminal; refuse (InvalidStateError, naming them and ``--force``)
    when nobody can answer. The file and the shared schedule both call this, so both
    ask the same; the stored tasks are read only for a delete or such a cancel."""
    if force or not (op is Op.DELETE or (op is Op.CANCEL and not snapshot.state.is_terminal)):
        return
    tasks = repository.list_tasks()
    index = downstream_index(task.spec for task in tasks)
    followers = dependents_text(snapshot.id, index, names_of(tasks))
    if not followers:
        return
    verb, done = ("delete", "deleted") if op is Op.DELETE else ("cancel", "cancelled")
    what = f"{followers} run(s) after {name_of(snapshot.id, names_of(tasks))}"
    consequence = "and would wait for it for ever" if op is Op.DELETE else "and would wait"
    source = stdin or sys.stdin
    if not source.isatty():
        raise InvalidStateError(f"{what} {consequence}; give --force to {verb} it anyway")
    answer = ask(f"{what}; {verb} it anyway? [y/N] ")
    if answer.strip().lower() not in ("y", "yes"):
        raise InvalidStateError(f"not {done}: {what}")


__all__ = [
    "UPSTREAM",
    "after_words",
    "check_upstreams",
    "confirm_change",
    "edited",
    "names_of",
    "show_json",
    "show_pairs",
    "waiting_words",
]
