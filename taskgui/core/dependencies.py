"""Tasks that run after other tasks: "run B after A succeeds", "after all of A and C".

The rules, all in one place and pure (the engine keeps the state, the store commits it
with the upstream's result, so a crash between A's end and B's start loses nothing and
runs nothing twice):

- An *edge* says B runs after A when A's occurrence ends a certain way: ``succeeded``,
  ``failed`` (the retry policy gave up: a failed attempt that will be retried has not
  ended the occurrence) or ``finished`` (either).
- Each qualifying completion of an upstream marks it *satisfied* for B. When every
  upstream of B is satisfied (fan-in), B is triggered once and the marks are cleared:
  with fan-in, B runs once every upstream has completed since B's last trigger.
- Triggers that arrive while B already has a triggered run pending are coalesced into
  that one run (the marks still clear).
- A task may start several (fan-out): every downstream edge is looked at.
- The graph has no cycles: ``cycle_through`` finds one (to name it) before it is saved.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum

from taskgui.core.errors import InvalidTaskError
from taskgui.core.states import RunOutcome

# The same as ``taskgui.core.task.TaskId``, which imports this module (a task carries
# its upstream edges), so it cannot be imported from there.
TaskId = int
_NO_MARKS: frozenset[TaskId] = frozenset()

MAX_UPSTREAMS = 64
# The ids an import links its tasks by before they have real ones (the new ids are
# known only once they are stored; ``core.transfer.links``): far above any id a
# database hands out, so a crash between the two steps leaves a visible, harmless
# "waiting for task 4611686018427387904", never an edge to an unrelated task.
PLACEHOLDER_BASE = 1 << 62


class After(StrEnum):
    """Which end of the upstream's occurrence starts the downstream task."""

    SUCCEEDED = "succeeded"
    FAILED = "failed"
    FINISHED = "finished"

    def matches(self, outcome: RunOutcome) -> bool:
        """Whether an occurrence that ended with ``outcome`` (for good) qualifies."""
        if outcome is RunOutcome.SUCCEEDED:
            return self is not After.FAILED
        if outcome.is_failure:
            return self is not After.SUCCEEDED
        return False  # cancelled or missed: nothing ran to its end


@dataclass(frozen=True, slots=True, order=True)
class Upstream:
    """One edge into a task: run after ``task_id`` ends as ``after`` says."""

    task_id: TaskId
    after: After = After.SUCCEEDED

    def describe(self, name: str) -> str:
        return {
            After.SUCCEEDED: f"after {name} succeeds",
            After.FAILED: f"after {name} fails",
            After.FINISHED: f"after {name} finishes",
        }[self.after]


def check_upstreams(task_id: TaskId, upstreams: Iterable[Upstream]) -> tuple[Upstream, ...]:
    """The upstreams in a stable order; refuse a task after itself, twice, or too many."""
    ordered = tuple(sorted(set(upstreams)))
    seen: set[TaskId] = set()
    for edge in ordered:
        if task_id and edge.task_id == task_id:
            raise InvalidTaskError("a task cannot run after itself")
        if edge.task_id in seen:
            raise InvalidTaskError(f"task {edge.task_id} is named twice in 'run after'")
        if edge.task_id <= 0:
            raise InvalidTaskError(f"'run after' names no task: {edge.task_id}")
        seen.add(edge.task_id)
    if len(ordered) > MAX_UPSTREAMS:
        raise InvalidTaskError(f"a task can run after at most {MAX_UPSTREAMS} tasks")
    return ordered


def cycle_through(
    task_id: TaskId,
    upstreams: Iterable[TaskId],
    upstreams_of: Mapping[TaskId, Iterable[TaskId]],
) -> list[TaskId] | None:
    """The cycle that giving ``task_id`` these ``upstreams`` would close, or None.

    Returned as the path ``[task_id, u1, ..., task_id]`` (each runs after the next), so
    the message can name every task in it. Iterative depth-first search over the
    upstream edges: O(tasks + edges) once, at save time, never while scheduling.
    """
    start = list(upstreams)
    parents: dict[TaskId, TaskId] = {}
    stack: list[tuple[TaskId, Iterator[TaskId]]] = [(task_id, iter(start))]
    visited = {task_id}
    while stack:
        node, edges = stack[-1]
        for upstream in edges:
            if upstream == task_id:
                return _closed(task_id, node, parents)
            if upstream not in visited:
                visited.add(upstream)
                parents[upstream] = node
                stack.append((upstream, iter(upstreams_of.get(upstream, ()))))
                break
        else:
            stack.pop()
    return None


def _closed(task_id: TaskId, last: TaskId, parents: Mapping[TaskId, TaskId]) -> list[TaskId]:
    """The path task_id -> ... -> last -> task_id from the search's parent links."""
    chain = [last]
    while chain[-1] != task_id:
        chain.append(parents[chain[-1]])
    chain.reverse()
    return [*chain, task_id]


class Dependencies:
    """The graph of "run after" edges and which upstreams have completed for whom.

    Owned by the engine; every operation is a dict lookup per edge (a completion of A
    touches A's downstream edges only).
    """

    __slots__ = ("_downstream", "_satisfied", "_upstreams")

    def __init__(self) -> None:
        self._upstreams: dict[TaskId, tuple[Upstream, ...]] = {}
        self._downstream: dict[TaskId, set[TaskId]] = {}
        self._satisfied: dict[TaskId, set[TaskId]] = {}

    def upstreams(self, task_id: TaskId) -> tuple[Upstream, ...]:
        return self._upstreams.get(task_id, ())

    def downstream(self, task_id: TaskId) -> frozenset[TaskId]:
        return frozenset(self._downstream.get(task_id, ()))

    def satisfied(self, task_id: TaskId) -> frozenset[TaskId]:
        """The upstreams that completed (as required) since ``task_id``'s last trigger."""
        marks = self._satisfied.get(task_id)
        return _NO_MARKS if marks is None else frozenset(marks)

    def upstream_ids(self) -> dict[TaskId, list[TaskId]]:
        return {task: [edge.task_id for edge in edges] for task, edges in self._upstreams.items()}

    def cycle_if(self, task_id: TaskId, upstreams: Iterable[Upstream]) -> list[TaskId] | None:
        """The cycle that these upstreams for ``task_id`` would make, or None."""
        return cycle_through(task_id, [edge.task_id for edge in upstreams], self.upstream_ids())

    def set(
        self,
        task_id: TaskId,
        upstreams: Iterable[Upstream],
        satisfied: Iterable[TaskId] = (),
    ) -> None:
        """Give ``task_id`` these upstream edges (replacing its old ones).

        ``satisfied``: the marks stored with the task (a restart keeps them); marks for
        an upstream that is no longer one are dropped.
        """
        self.remove(task_id, keep_downstream=True)
        edges = tuple(upstreams)
        if not edges:
            return
        self._upstreams[task_id] = edges
        for edge in edges:
            self._downstream.setdefault(edge.task_id, set()).add(task_id)
        kept = {upstream for upstream in satisfied if any(e.task_id == upstream for e in edges)}
        if kept:
            self._satisfied[task_id] = kept

    def remove(self, task_id: TaskId, *, keep_downstream: bool = False) -> None:
        """Forget ``task_id``'s own edges (and, unless kept, the edges into others)."""
        for edge in self._upstreams.pop(task_id, ()):
            followers = self._downstream.get(edge.task_id)
            if followers is not None:
                followers.discard(task_id)
                if not followers:
                    del self._downstream[edge.task_id]
        self._satisfied.pop(task_id, None)
        if not keep_downstream:
            # The tasks after this one keep their edge (they wait for a task that no
            # longer exists, which the UI shows); their mark for it is cleared.
            for follower in self._downstream.get(task_id, ()):
                marks = self._satisfied.get(follower)
                if marks is not None:
                    marks.discard(task_id)

    def completed(self, upstream: TaskId, outcome: RunOutcome) -> list[TaskId]:
        """An occurrence of ``upstream`` ended for good with ``outcome``.

        Marks it satisfied for each downstream task whose edge it qualifies for, and
        returns the tasks whose every upstream is now satisfied (their marks cleared):
        each of those is triggered once.
        """
        triggered: list[TaskId] = []
        for follower in sorted(self._downstream.get(upstream, ())):
            edges = self._upstreams[follower]
            if not any(e.task_id == upstream and e.after.matches(outcome) for e in edges):
                continue
            marks = self._satisfied.setdefault(follower, set())
            marks.add(upstream)
            if all(edge.task_id in marks for edge in edges):
                del self._satisfied[follower]
                triggered.append(follower)
        return triggered
