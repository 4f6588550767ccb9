"""Since when a task's runs have gone on back to back, for the overlap policy.

Under ``--overlap queue`` an occurrence that comes due while a run goes on waits for
it, and runs when it ends; the next occurrence is planned from that dispatch, so by
the time it is looked at it is often already past. It came due while the task's runs
went on, one behind the other: an overlap, not a backlog the scheduler owes because
it was down or asleep (which is what an occurrence due before the first of those runs
is). The engine tells the two apart by the moment the chain of runs began, which
only this records: each run's own dispatch time is later than the occurrences that
waited behind the one before it. And such an occurrence is late only from when it
was planned: it could not run before, whatever the misfire grace says.

Held in memory only, for runs in progress and the tasks waiting behind them: after a
restart a run's chain begins at its own dispatch, as a backlog's would.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from taskgui.core.status import RunId, RunTicket
from taskgui.core.task import TaskId


class BackToBack:
    """The beginning of each chain of runs that waited one behind the other."""

    __slots__ = ("_planned", "_runs", "_waiting")

    def __init__(self) -> None:
        self._waiting: dict[TaskId, datetime] = {}  # a task waiting behind its run
        self._runs: dict[RunId, datetime] = {}  # a run dispatched after such a wait
        # When a task's slot was planned, by the dispatch of such a run.
        self._planned: dict[TaskId, datetime] = {}

    def since(self, runs: Mapping[RunId, RunTicket]) -> datetime:
        """When the chain of these runs in progress (a task's) began."""
        chained = self._runs
        return min(chained.get(run_id, ticket.dispatched_at) for run_id, ticket in runs.items())

    def wait(self, task_id: TaskId, since: datetime) -> None:
        """The task's occurrence waits behind a chain that began ``since``."""
        self._waiting[task_id] = since

    def waiting_since(self, task_id: TaskId) -> datetime | None:
        """When the chain the task waits behind began (None: it waits behind none)."""
        return self._waiting.get(task_id) if self._waiting else None

    def dispatched(self, task_id: TaskId, run_id: RunId, now: datetime) -> None:
        """A run of the task was dispatched ``now`` (and its next slot planned): if it
        had waited, it carries the chain on."""
        if self._waiting:
            since = self._waiting.pop(task_id, None)
            if since is not None:
                self._runs[run_id] = since
                self._planned[task_id] = now
                return
        if self._planned:
            self._planned.pop(task_id, None)

    def planned_after(self, task_id: TaskId, moment: datetime) -> bool:
        """Whether the task's slot was planned after ``moment`` by a dispatch that
        carried a chain on (so it is not late before then)."""
        planned = self._planned.get(task_id)
        return planned is not None and planned > moment

    def withdrawn(self, task_id: TaskId, run_id: RunId, dispatched_at: datetime) -> None:
        """A run taken back as if never dispatched: if it carried a chain on, its task
        waits behind that chain again, planned when it was dispatched (not late)."""
        since = self._runs.pop(run_id, None) if self._runs else None
        if since is not None:
            self._waiting[task_id] = since
            self._planned[task_id] = dispatched_at

    def ended(self, run_id: RunId) -> None:
        if self._runs:
            self._runs.pop(run_id, None)

    def left(self, task_id: TaskId) -> None:
        """The task left the queues (paused, edited, cancelled): its wait is over."""
        if self._waiting:
            self._waiting.pop(task_id, None)
        if self._planned:
            self._planned.pop(task_id, None)

    def clear(self) -> None:
        self._waiting.clear()
        self._runs.clear()
        self._planned.clear()
