"""The words for "run after", shared by the window and the command line.

Names come from the caller (the tasks it has read): a name is untrusted text, and
each front end shows these strings as plain text. An upstream that no longer exists
is named by its id, so a task that waits for a deleted one says so.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from taskgui.core.status import TaskSnapshot
from taskgui.core.task import TaskId, TaskSpec


def name_of(task_id: TaskId, names: Mapping[TaskId, str]) -> str:
    name = names.get(task_id)
    return f"task {task_id} (deleted)" if name is None else f"{name} ({task_id})"


def open_upstreams(spec: TaskSpec, marks: Iterable[TaskId]) -> list[TaskId]:
    """The upstreams that have not completed since the task's last trigger."""
    done = set(marks)
    return [edge.task_id for edge in spec.after if edge.task_id not in done]


def waiting_for(snapshot: TaskSnapshot, names: Mapping[TaskId, str]) -> str:
    """``waiting for A (3), C (5)``: what a task with nothing queued waits for."""
    ids = open_upstreams(snapshot.spec, snapshot.status.after_marks)
    if not ids:
        return "waiting for the tasks it runs after"
    return "waiting for " + ", ".join(name_of(task_id, names) for task_id in ids)


def upstream_text(spec: TaskSpec, names: Mapping[TaskId, str]) -> str:
    """``after A (3) succeeds, after C (5) finishes``, and whether it has its own schedule."""
    if not spec.after:
        return ""
    text = ", ".join(edge.describe(name_of(edge.task_id, names)) for edge in spec.after)
    if len(spec.after) > 1:
        text += " (all of them)"
    return text + ("; no schedule of its own" if spec.only_after else "")


def linked(spec: TaskSpec, tasks: Iterable[TaskSnapshot]) -> list[TaskSnapshot]:
    """Of ``tasks``, those ``spec`` runs after and those that run after it, in id order:
    every task a view of that one names (a store's ``linked_tasks`` reads no others)."""
    upstreams = {edge.task_id for edge in spec.after}
    found = [
        task
        for task in tasks
        if task.id in upstreams or any(edge.task_id == spec.id for edge in task.spec.after)
    ]
    return sorted(found, key=lambda task: task.id)


def downstream_index(specs: Iterable[TaskSpec]) -> dict[TaskId, list[TaskId]]:
    """Upstream id -> the ids of the tasks that run after it (ascending)."""
    index: dict[TaskId, list[TaskId]] = {}
    for spec in sorted(specs, key=lambda spec: spec.id):
        for edge in spec.after:
            index.setdefault(edge.task_id, []).append(spec.id)
    return index


def dependents_text(task_id: TaskId, index: Mapping[TaskId, list[TaskId]],
                    names: Mapping[TaskId, str]) -> str:  # fmt: skip
    """``B (4), C (5)``: the tasks that run after ``task_id``, or ``""``."""
    return ", ".join(name_of(follower, names) for follower in index.get(task_id, ()))
