"""An occurrence due while the task's own run goes on (runs that may not overlap).

Two different things look alike here. An occurrence due before the runs in progress
began is a backlog: the scheduler was down, asleep or behind, and the misfire policy
decides (``run_all`` owes every one, each after the one before). One that came due
while they went on is an overlap, and the overlap policy decides: ``skip`` counts it
missed "because the previous run was still going", ``queue`` lets the latest one wait
for that run. "While they went on" counts from the start of the chain of runs that
waited one behind the other (``back_to_back``), not from the run in progress alone:
under ``queue`` every run starts late by design, and the occurrences planned from it
were not missed for downtime (until 2026-12-04 they were skipped as such, and the one
that should have waited with them). For the same reason an occurrence planned only
after its time, by such a run's dispatch, is late only from then (``due``).
"""

from __future__ import annotations

from datetime import datetime

from taskgui.core.engine import policies
from taskgui.core.engine.base import EngineBase
from taskgui.core.engine.entry import TaskEntry
from taskgui.core.engine.queues import ReadyKey
from taskgui.core.events import Event, SkipReason, TaskChanged
from taskgui.core.states import MisfirePolicy, OverlapPolicy, SlotKind
from taskgui.core.task import TaskId

# Whether a task waits behind its runs, and since when their chain began.
Behind = tuple[bool, datetime | None]


class Overlapping(EngineBase):
    """The overlap half of ``Dispatching.due`` (see the module docstring)."""

    def _came_due_during_runs(self, entry: TaskEntry) -> bool:
        """Whether the due occurrence came due while the task's runs in progress (and
        the chain they carry on) went on: an overlap, whatever its lateness."""
        return (
            entry.slot_kind is SlotKind.OCCURRENCE
            and entry.spec.overlap is not OverlapPolicy.PARALLEL
            and entry.slot_at > self._back_to_back.since(entry.runs)  # type: ignore[operator]
        )

    def _overlapped(self, entry: TaskEntry, seq: int, now: datetime, events: list[Event]) -> bool:
        """Apply the overlap policy to an occurrence that came due during the task's
        runs (True: it now waits for them)."""
        spec = entry.spec
        assert entry.slot_at is not None
        if spec.overlap is OverlapPolicy.SKIP:
            self._skip(entry, now, events, SkipReason.OVERLAP)
            return False
        # From the occurrence, not its spread start: a spread never drifts the schedule.
        occurrence = entry.slot_scheduled or entry.slot_at
        skipped, waits = policies.queue_behind(spec, occurrence, now)
        if skipped is not None:
            events.append(skipped)
            self._set_occurrence(entry, waits)
            assert entry.slot_at is not None
            if entry.slot_at > now:  # its spread starts it later: it comes due then
                self._queue(entry)
                events.append(TaskChanged(self._snapshot(entry)))
                return False
        assert entry.slot_at is not None
        self._back_to_back.wait(spec.id, self._back_to_back.since(entry.runs))
        key = (-spec.priority, entry.slot_at.timestamp(), seq)
        self._queues.wait_for_previous_run(spec.id, key)
        return True

    def _behind_runs(self, task_id: TaskId) -> Behind:
        """Whether the task waits behind its runs, and since when their chain began."""
        waits = self._queues.waits_for_previous_run(task_id)
        return waits, self._back_to_back.waiting_since(task_id)

    def _wait_behind_runs_again(
        self, entry: TaskEntry, behind: tuple[bool, datetime | None]
    ) -> bool:
        """After an edit that keeps the schedule: a task that waited behind its runs
        waits there again, in its place (every edit takes a task out of its queues: it
        was then found late in the time queue and skipped as a misfire; a review)."""
        waited, since = behind
        spec = entry.spec
        if not (waited and entry.runs and self._should_queue(entry)) or entry.slot_at is None:
            return False
        if spec.overlap is OverlapPolicy.PARALLEL:
            return False
        if since is not None:
            self._back_to_back.wait(spec.id, since)
        key = (-spec.priority, entry.slot_at.timestamp(), entry.seq)
        self._queues.wait_for_previous_run(spec.id, key)
        return True

    def _due_while_running(
        self, entry: TaskEntry, key: ReadyKey, late: bool, now: datetime, events: list[Event]
    ) -> bool:
        """A task came due while a run of it goes on (and runs may not overlap): skip
        it, or let it wait for that run (True: it now waits). ``late``: late for the
        misfire policy, so not an overlap."""
        if not late and self._came_due_during_runs(entry):
            return self._overlapped(entry, key[2], now, events)
        spec = entry.spec
        # Due before the run in progress was even dispatched: a backlog (the
        # scheduler was down, asleep or behind), not an overlap, even inside
        # the grace period. run_all owes it in full, each occurrence after the
        # one before; the other policies count it missed for what it was.
        # A triggered run waits for the run in progress (it was triggered after).
        triggered = entry.slot_kind is SlotKind.TRIGGERED
        backlog = not triggered and (late or _due_before_runs(entry))
        if backlog and spec.misfire is not MisfirePolicy.RUN_ALL:
            self._skip(entry, now, events, SkipReason.MISFIRE)
        elif spec.overlap is OverlapPolicy.SKIP and not (backlog or triggered):
            self._skip(entry, now, events, SkipReason.OVERLAP)
        else:
            self._queues.wait_for_previous_run(spec.id, key)
            return True
        return False

    def _skip(
        self, entry: TaskEntry, now: datetime, events: list[Event], reason: SkipReason
    ) -> None:
        """Count the due occurrence and every later one already past as missed."""
        assert entry.slot_at is not None
        skipped, next_at = policies.skip_passed(entry.spec, entry.slot_at, now, reason)
        events.append(skipped)
        if next_at is None:
            entry.clear_slot()
        else:
            self._set_occurrence(entry, next_at)
            self._queue(entry)
        events.append(TaskChanged(self._snapshot(entry)))


def _due_before_runs(entry: TaskEntry) -> bool:
    """Whether the slot was due before every run in progress was dispatched.

    Such an occurrence was already waiting when the scheduler took up the earlier one:
    it passed while nothing could run it. One that came due later met a run in
    progress: that is what the overlap policy is for.
    """
    assert entry.slot_at is not None
    return all(entry.slot_at <= ticket.dispatched_at for ticket in entry.runs.values())
