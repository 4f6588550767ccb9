"""Runs dispatched ahead that can still be taken back, and runs whose end is ignored.

A run dispatched ``dispatch_ahead`` before its deadline shows as running while it
waits for its start time, but until its command starts it can be taken back as if it
was never dispatched (``Engine.withdraw``; the store forgets it): by a cancel or
delete of its task (which then leave no run in the history), by a more urgent due
task that finds no free worker (``make_way``), and at a shutdown that does not wait
for it. A pause, as for any running run, lets it go on.

The bookkeeping is two sets the service consults on every pool signal: the runs
handed over with a start time that may not have begun yet (``ahead``), and the runs
whose end the engine must not hear of (``ignored``): taken back, or abandoned when
their dispatch could not be committed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from taskgui.core.engine.engine import Engine
from taskgui.core.events import Event
from taskgui.core.status import RunId
from taskgui.core.task import TaskId

# Commit withdrawals (and publish them); False if the store refused (reported).
Commit = Callable[[list[Event]], bool]


class _Withdrawing(Protocol):
    def withdraw(self, run_id: RunId) -> bool: ...


class TakeBack:
    """See the module docstring. ``engine`` is replaced when the service rebuilds its."""

    def __init__(self, engine: Engine, pool: _Withdrawing, commit: Commit) -> None:
        self.engine = engine
        self._pool = pool
        self._commit = commit
        self.ahead: set[RunId] = set()
        self.ignored: set[RunId] = set()

    def started(self, run_id: RunId) -> None:
        """Its command began: it can no longer be taken back."""
        self.ahead.discard(run_id)

    def ended(self, run_id: RunId) -> bool:
        """Its worker is done with it; True if its end is to be ignored."""
        self.ahead.discard(run_id)
        if run_id in self.ignored:
            self.ignored.discard(run_id)
            return True
        return False

    def abandon(self, run_id: RunId) -> None:
        """Its dispatch was not committed: it never happened, and is never recorded."""
        self.ignored.add(run_id)

    def waiting_runs(self) -> None:
        """At shutdown: runs still waiting for their start time never ran; rather than
        recording them as interrupted, take them back, so the next start runs them as
        due."""
        self._take_back(sorted(self.ahead))
        self.ahead.clear()

    def runs_of(self, task_id: TaskId) -> bool:
        """Before a cancel or delete: a run of the task still waiting for its start
        time never happened, so it leaves no cancelled run in the history. False if
        that could not be committed (reported; the store failure path takes over)."""
        runs = self.engine.running_runs
        return self._take_back(
            [
                run_id
                for run_id in sorted(self.ahead)
                if run_id in runs and runs[run_id].task_id == task_id
            ]
        )

    def _take_back(self, run_ids: Sequence[RunId]) -> bool:
        """Withdraw those of ``run_ids`` that have not begun, and commit that."""
        events = [event for run_id in run_ids for event in self.withdraw(run_id)]
        return self._commit(events) if events else True

    def make_way(self) -> list[Event]:
        """Take back a run dispatched ahead that a more urgent due task should overtake.

        A run dispatched ahead holds its worker before its time; a more urgent task
        that arrives meanwhile (added, run now) would otherwise wait for that whole
        run. If one waits for a worker, the least urgent run that has not begun is
        taken back, as if never dispatched; its worker, once free, goes through
        ``due`` again, which gives it to the most urgent task. One at a time: each
        freed worker repeats this check.
        """
        engine = self.engine
        urgent = engine.ready_priority()
        if urgent is None or not self.ahead:
            return []
        runs = engine.running_runs
        held = [  # withdrawable: its task exists and is as it was when dispatched
            (engine.snapshot(runs[run_id].task_id).spec.priority, run_id)
            for run_id in self.ahead
            if engine.withdrawable(run_id)
        ]
        for priority, run_id in sorted(held):
            if priority >= urgent:
                break
            events = self.withdraw(run_id)
            if events:
                return events
        return []

    def withdraw(self, run_id: RunId) -> list[Event]:
        """Take back a run whose command has not begun, in the engine and from its
        worker (whose end is then ignored); [] if it has begun or may not be."""
        if not (self.engine.withdrawable(run_id) and self._pool.withdraw(run_id)):
            return []
        self.ahead.discard(run_id)
        self.ignored.add(run_id)
        return self.engine.withdraw(run_id)
