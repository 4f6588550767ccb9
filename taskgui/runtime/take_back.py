"""Runs dispatched ahead or queued that can still be taken back, and runs whose end
is ignored.

A run dispatched ``dispatch_ahead`` before its deadline shows as running while it
waits for its start time, but until its command starts it can be taken back as if it
was never dispatched (``Engine.withdraw``; the store forgets it): by a cancel or
delete of its task (which then leave no run in the history), by a more urgent due
task that finds no free worker (``make_way``), and at a shutdown that does not wait
for it. A pause, as for any running run, lets it go on.

A run queued in the pool beyond its free workers (see ``WorkerPool.queue_room``) is
the same until a worker takes it, and more: it is taken back for a more urgent due
task at once (out of the pool's queue, so its place is free for that task in the same
dispatch), and by a pause or an edit of its task too (``queued_runs_of``): it would
not have been dispatched after them, so it must not start after them.

The bookkeeping is three sets the service consults on every pool signal: the runs
handed over with a start time that may not have begun yet (``ahead``), the runs
queued (``queued``), and the runs whose end the engine must not hear of
(``ignored``): taken back, or abandoned when their dispatch could not be committed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

from taskgui.core.engine.engine import Engine
from taskgui.core.events import Event
from taskgui.core.operation import Op
from taskgui.core.status import RunId
from taskgui.core.task import TaskId

# Commit withdrawals (and publish them); False if the store refused (reported).
Commit = Callable[[list[Event]], bool]


class _Withdrawing(Protocol):
    def withdraw(self, run_id: RunId) -> bool: ...

    def unqueue(self, run_id: RunId) -> bool: ...


class TakeBack:
    """See the module docstring. ``engine`` is replaced when the service rebuilds its."""

    def __init__(self, engine: Engine, pool: _Withdrawing, commit: Commit) -> None:
        self.engine = engine
        self._pool = pool
        self._commit = commit
        self.ahead: set[RunId] = set()
        self.queued: set[RunId] = set()
        self.ignored: set[RunId] = set()
        # The priority each run of ``ahead`` and ``queued`` was dispatched with: a run
        # whose task changed since cannot be taken back anyway (``withdrawable``), so
        # make_way can tell whether anything could make way without asking the engine.
        self._priority: dict[RunId, int] = {}
        self._was_queued: set[RunId] = set()  # until its end: see queued_until_taken

    def hold(self, run_id: RunId, priority: int, *, queued: bool) -> None:
        """A run was handed over with a start time (or ``queued`` in the pool)."""
        (self.queued if queued else self.ahead).add(run_id)
        self._priority[run_id] = priority
        if queued:
            self._was_queued.add(run_id)

    def queued_until_taken(self, run_id: RunId) -> bool:
        """At its end: whether the run was queued for a worker (asked once)."""
        return _pop(self._was_queued, run_id)

    def _release(self, run_id: RunId) -> None:
        self.ahead.discard(run_id)
        self.queued.discard(run_id)
        self._priority.pop(run_id, None)

    def started(self, run_id: RunId) -> None:
        """Its command began: it can no longer be taken back."""
        self._release(run_id)

    def ended(self, run_id: RunId) -> bool:
        """Its worker is done with it; True if its end is to be ignored."""
        self._release(run_id)
        return _pop(self.ignored, run_id)

    def abandon(self, run_id: RunId) -> None:
        """Its dispatch was not committed: it never happened, and is never recorded."""
        self.ignored.add(run_id)

    def waiting_runs(self) -> None:
        """At shutdown: runs still waiting for their start time (or queued) never ran;
        rather than recording them as interrupted, take them back, so the next start
        runs them as due."""
        self._take_back(sorted(self._priority))
        self.ahead.clear()
        self.queued.clear()
        self._priority.clear()

    def queued_runs(self) -> bool:
        """At the start of a shutdown: no queued run starts any more."""
        return self._take_back(sorted(self.queued))

    def before(self, op: Op, task_id: TaskId) -> bool:
        """Before a person's change to a task: the runs it takes back (a cancel or a
        delete: those not begun; a pause or an edit: those queued). False if that could
        not be committed (reported; the change is then not made)."""
        if op in (Op.CANCEL, Op.DELETE):
            return self.runs_of(task_id)
        if op in (Op.PAUSE, Op.UPDATE):
            return self.queued_runs_of(task_id)
        return True

    def runs_of(self, task_id: TaskId) -> bool:
        """Before a cancel or delete: a run of the task still waiting for its start
        time (or queued) never happened, so it leaves no cancelled run in the history.
        False if that could not be committed (reported; the store failure path takes
        over)."""
        return self._take_back(self._of(task_id, self._priority))

    def queued_runs_of(self, task_id: TaskId) -> bool:
        """Before a pause or an edit: a queued run of the task goes back too (it would
        not have been dispatched after them). False if that could not be committed."""
        return self._take_back(self._of(task_id, self.queued))

    def _of(self, task_id: TaskId, run_ids: Iterable[RunId]) -> list[RunId]:
        runs = self.engine.running_runs
        return [
            run_id
            for run_id in sorted(run_ids)
            if run_id in runs and runs[run_id].task_id == task_id
        ]

    def _take_back(self, run_ids: Sequence[RunId]) -> bool:
        """Withdraw those of ``run_ids`` that have not begun, and commit that."""
        events = [event for run_id in run_ids for event in self.withdraw(run_id)]
        return self._commit(events) if events else True

    def make_way(self) -> list[Event]:
        """Take back a run dispatched ahead or queued that a more urgent due task should
        overtake.

        A run dispatched ahead holds its worker before its time, and a queued one a
        place in the pool's queue; a more urgent task that arrives meanwhile (added,
        run now) would otherwise wait behind it. If one waits for a worker, the least
        urgent run that has not begun is taken back, as if never dispatched (a queued
        one first among equals, then the one dispatched last): a queued one's place is
        free at once, a worker once the run's cancelled end is heard of; either then
        goes through ``due`` again, which gives it to the most urgent task. One at a
        time: the caller asks again after each.
        """
        priorities = self._priority
        if not priorities:
            return []
        urgent = self.engine.ready_priority()
        if urgent is None or min(priorities.values()) >= urgent:
            return []
        queued = self.queued
        candidates = sorted(
            (priority, run_id not in queued, -run_id)
            for run_id, priority in priorities.items()
            if priority < urgent
        )
        for _, _, negative_id in candidates:
            events = self.withdraw(-negative_id)
            if events:
                return events
        return []

    def withdraw(self, run_id: RunId) -> list[Event]:
        """Take back a run whose command has not begun, in the engine and from the pool
        (out of its queue, or from its worker, whose end is then ignored); [] if it has
        begun or may not be."""
        if not self.engine.withdrawable(run_id):
            return []
        if not self._pool.unqueue(run_id):  # out of the queue: no end will come
            if not self._pool.withdraw(run_id):
                return []
            self.ignored.add(run_id)
        else:
            self._was_queued.discard(run_id)
        self._release(run_id)
        return self.engine.withdraw(run_id)


def _pop(runs: set[RunId], run_id: RunId) -> bool:
    """Take ``run_id`` out of ``runs``; whether it was in."""
    if run_id in runs:
        runs.discard(run_id)
        return True
    return False
