"""Tasks that run after others: the engine's half of ``core/dependencies``.

When an occurrence of A ends for good (it succeeded, or its retry policy gave up), the
graph marks A satisfied for each task after it, and the tasks whose every upstream is
now satisfied get one *triggered* run. Only A's downstream edges are looked at (the
graph indexes them by upstream id): no scan over the tasks.

Everything a completion changes (the marks of the tasks after A, the triggered slots)
comes back as ``TaskChanged`` events in the same list as A's ``RunFinished``, which the
repository commits in one transaction: a crash between A's end and B's start loses
no trigger and, since the trigger is B's stored slot, runs B once after the restart.

A trigger is coalesced (dropped) when B already has a run queued that is not a plain
occurrence (a triggered, manual or retry run): that run will start B anyway. While B
runs, a trigger queues one triggered run, which waits for the run in progress, and
later triggers coalesce into it. A cancelled or paused B ignores triggers.
"""

from __future__ import annotations

from datetime import datetime

from taskgui.core.dependencies import PLACEHOLDER_BASE, Dependencies, Upstream
from taskgui.core.engine.base import EngineBase
from taskgui.core.engine.entry import TaskEntry
from taskgui.core.errors import InvalidTaskError, UnreadableTaskError
from taskgui.core.events import Event, TaskChanged
from taskgui.core.states import RunOutcome, SlotKind, TaskState
from taskgui.core.task import TaskId, TaskSpec

# The slots a trigger coalesces into: each already starts the task.
_COALESCING = frozenset({SlotKind.TRIGGERED, SlotKind.MANUAL, SlotKind.RETRY})


class Triggering(EngineBase):
    """The "run after" half of the engine (see the module docstring)."""

    @property
    def dependencies(self) -> Dependencies:
        """The graph (read it; change it through the engine's own methods)."""
        return self._deps

    def upstreams_refusal(self, spec: TaskSpec) -> str | None:
        """Why ``spec``'s "run after" cannot be saved (a task that does not exist, a
        cycle, named task by task), or None."""
        if not spec.after:
            return None
        for edge in spec.after:
            # A placeholder: an import links its own tasks, and names their ids next.
            if not self._tasks.knows(edge.task_id) and edge.task_id < PLACEHOLDER_BASE:
                return f"'run after' names task {edge.task_id}, which does not exist"
        cycle = self._deps.cycle_if(spec.id, spec.after) if spec.id else None
        if cycle is None:
            return None
        names = [f"{spec.name} ({task})" if task == spec.id else self._name(task) for task in cycle]
        return "'run after' would make a cycle: " + " -> ".join(names)

    def check_upstreams(self, spec: TaskSpec) -> None:
        """InvalidTaskError with ``upstreams_refusal``'s reason, if any."""
        refusal = self.upstreams_refusal(spec)
        if refusal is not None:
            raise InvalidTaskError(refusal)

    def downstream_of(self, task_id: TaskId) -> list[TaskId]:
        """The tasks that run after ``task_id``, in id order."""
        return sorted(self._deps.downstream(task_id))

    def _name(self, task_id: TaskId) -> str:
        try:
            return f"{self._tasks[task_id].spec.name} ({task_id})"
        except (KeyError, UnreadableTaskError):
            return f"task {task_id}"

    def _follow_upstreams(self, entry: TaskEntry, marks: frozenset[TaskId] | None = None) -> None:
        """Keep the graph in step with the task's edges (after add, update, load);
        ``marks``: the stored ones (a load), else the task keeps those it has."""
        task_id = entry.spec.id
        after: tuple[Upstream, ...] = entry.spec.after
        if after or self._deps.upstreams(task_id):
            kept = self._deps.satisfied(task_id) if marks is None else marks
            self._deps.set(task_id, after, kept)

    def _forget_upstreams(self, task_id: TaskId, events: list[Event]) -> None:
        """A task is removed: its edges go, and the tasks after it lose their mark for
        it (they keep the edge and wait; the person was asked before the delete)."""
        marked = [f for f in self._deps.downstream(task_id) if task_id in self._deps.satisfied(f)]
        self._deps.remove(task_id)
        for follower in marked:
            entry = self._tasks.get(follower)
            if entry is not None:
                events.append(TaskChanged(self._snapshot(entry)))

    def _upstream_ended(
        self, entry: TaskEntry, outcome: RunOutcome, now: datetime, events: list[Event]
    ) -> None:
        """An occurrence of ``entry`` ended for good: mark and trigger the tasks after it."""
        task_id = entry.spec.id
        followers = self._deps.downstream(task_id)
        if not followers:
            return
        before = {follower: self._deps.satisfied(follower) for follower in followers}
        triggered = set(self._deps.completed(task_id, outcome))
        for follower in sorted(followers):
            follower_entry = self._loaded(follower)
            if follower_entry is None:
                continue
            if follower in triggered:
                self._trigger(follower_entry, now, events)
            elif self._deps.satisfied(follower) != before[follower]:
                events.append(TaskChanged(self._snapshot(follower_entry)))  # a mark: commit it

    def _loaded(self, task_id: TaskId) -> TaskEntry | None:
        try:
            return self._tasks[task_id]
        except (KeyError, UnreadableTaskError):
            return None

    def _trigger(self, entry: TaskEntry, now: datetime, events: list[Event]) -> None:
        """Give ``entry`` one triggered run now, unless it coalesces (module docstring)."""
        if entry.terminal is TaskState.CANCELLED or entry.spec.paused:
            events.append(TaskChanged(self._snapshot(entry)))  # its marks were cleared
            return
        if entry.slot_kind in _COALESCING:
            events.append(TaskChanged(self._snapshot(entry)))
            return
        events += self._unqueue(entry)
        if entry.slot_kind is SlotKind.OCCURRENCE:
            # Its own schedule goes on after the triggered run, as after a run now.
            entry.deferred_at = entry.slot_scheduled or entry.slot_at
        entry.terminal = None
        entry.set_slot(SlotKind.TRIGGERED, now)
        self._queue(entry)
        events.append(TaskChanged(self._snapshot(entry)))
