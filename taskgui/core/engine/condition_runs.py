"""Run conditions in the engine: due tasks that wait for the machine, and runs that
stop when a condition ends.

A due task whose conditions do not hold is parked on the condition (``_park_if_unmet``)
and only a change of the machine's state looks at it again (``conditions_changed``),
so waiting costs nothing per tick. A task that asks to stop when its conditions end
has its runs in progress stopped on that change; each such run ends as ``stopped``
and the same attempt waits for the conditions again.
"""

from __future__ import annotations

import contextlib
from datetime import datetime, timedelta

from taskgui.core.conditions import SystemConditions, Unmet
from taskgui.core.engine.base import EngineBase
from taskgui.core.engine.entry import TaskEntry
from taskgui.core.engine.queues import ReadyKey
from taskgui.core.events import (
    Event,
    OccurrencesSkipped,
    RunCancelRequested,
    SkipReason,
    TaskChanged,
)
from taskgui.core.states import RunOutcome, SlotKind, TaskState
from taskgui.core.status import RunId, RunTicket
from taskgui.core.task import TaskSpec

# How often the idle time is read while a run that stops when the user returns is going.
IDLE_WATCH = timedelta(seconds=10)


def give_up_at(
    spec: TaskSpec,
    kind: SlotKind | None,
    due_at: datetime,
    scheduled: datetime | None = None,
    *,
    next_at: datetime | None = None,
) -> datetime | None:
    """Until when a due run may wait for its conditions: its own limit (``--give-up-
    after``, from ``due_at``), else the task's next occurrence after ``scheduled`` (a
    one-off task or a manual run without a limit waits as long as it takes), whichever
    is first. The rule of a file's engine and of a shared schedule's leader alike.

    ``next_at``: that next occurrence, where the caller knows it and not ``scheduled``
    (a shared schedule's run carries its spread start, not its occurrence)."""
    limit_at: datetime | None = None
    limit = spec.conditions.give_up_after
    if limit is not None:
        with contextlib.suppress(OverflowError):  # past year 9999: no limit
            limit_at = due_at + limit
    if kind is not SlotKind.OCCURRENCE:
        return limit_at
    next_at = next_at or spec.recurrence.next_after(scheduled or due_at)
    if next_at is None or limit_at is None:
        return next_at or limit_at
    return min(next_at, limit_at)


class ConditionRuns(EngineBase):
    """The run-conditions part of ``Engine`` (see the module docstring)."""

    def conditions_changed(self, system: SystemConditions, now: datetime) -> list[Event]:
        """The machine's state changed: look again at the tasks waiting on a condition.

        Only those tasks are looked at. Each one whose conditions now hold goes back to
        the ready heap with the key it had (its place in line); one that now waits on
        another condition says so. Call ``due`` afterwards to start them.
        """
        self._system = system
        events: list[Event] = []
        waiting = self._queues.conditions
        for task_id in waiting.parked():
            entry = self._tasks[task_id]
            unmet = entry.spec.conditions.unmet(system)
            if unmet is None:
                key = waiting.release(task_id)
                assert key is not None
                self._ready.push(task_id, key)
            elif unmet == waiting.unmet(task_id):
                continue
            else:
                waiting.repark(task_id, unmet)
            events.append(TaskChanged(self._snapshot(entry)))
        if self._runs:
            self._stop_runs_whose_conditions_ended(system, events)
        return events

    def _stop_runs_whose_conditions_ended(
        self, system: SystemConditions, events: list[Event]
    ) -> None:
        """Ask to stop each run whose task stops when its conditions end, now that one
        does not hold. Only the runs in progress are looked at (at most the pool's size).

        A fact the machine cannot report any more (a source that went away) stops
        nothing: a run is stopped for what is known to be false, never for a doubt.
        """
        for run_id, ticket in self._runs.items():
            if run_id in self._stopping_for:
                continue
            entry = self._tasks.get(ticket.task_id)
            if entry is None or entry.terminal is not None:
                continue
            conditions = entry.spec.conditions
            if not conditions.stop_when_unmet or not conditions:
                continue
            unmet = conditions.unmet(system)
            if unmet is None or not unmet.checkable:
                continue
            self._stopping_for[run_id] = unmet.reason
            events.append(RunCancelRequested(ticket))

    def stop_reason(self, run_id: RunId) -> str | None:
        """Why the engine asked this run to stop ("on battery"), while its task still
        wants it run again; None for a run nobody stopped for its conditions. The
        runtime records a run that ends so as stopped, not cancelled."""
        reason = self._stopping_for.get(run_id)
        ticket = self._runs.get(run_id)
        if reason is None or ticket is None:
            return None
        entry = self._tasks.get(ticket.task_id)
        return reason if entry is not None and entry.terminal is None else None

    def _run_again_when_conditions_hold(
        self, entry: TaskEntry, ticket: RunTicket, now: datetime, events: list[Event]
    ) -> None:
        """A run stopped because its conditions ended, or because taskgui stopped: the
        same attempt comes due now (no attempt spent) and, where it has conditions,
        waits parked on them until they hold again; after a stop, at the next start.

        A stopped occurrence is the task's slot again, due now ("pending, waiting: on
        battery"); the next occurrence, queued when it was dispatched, is planned from
        it once more, so it may wait until then, as any due occurrence may. A stopped
        retry or manual run goes in front of the occurrence it displaces, as a retry
        does. Either way the schedule neither drifts nor loses an occurrence.
        """
        if entry.slot_kind in (SlotKind.RETRY, SlotKind.MANUAL, SlotKind.TRIGGERED):
            return  # another attempt is already queued; it meets the same conditions
        if entry.slot_kind is SlotKind.OCCURRENCE:
            events += self._unqueue(entry)
            if ticket.kind is not SlotKind.OCCURRENCE:
                entry.deferred_at = entry.slot_scheduled or entry.slot_at
        # For an occurrence, ``scheduled`` is what the next one is computed from: its
        # start, which a spread keeps within the interval, so the next is the same.
        entry.set_slot(ticket.kind, now, attempt=ticket.attempt, scheduled=ticket.scheduled_at)
        self._queue(entry)

    def idle_check_in(self) -> timedelta | None:
        """When the idle time should be read again: the soonest a waiting task's idle
        condition would hold, or, while a run that stops when the user comes back is
        going, ``IDLE_WATCH`` (the user's return moves no signal; None: no need)."""
        system = self._system
        if system is None:
            return None
        soonest: timedelta | None = None
        for task_id in self._queues.conditions.idle_waiters():
            holds_in = self._tasks[task_id].spec.conditions.idle_holds_in(system)
            if holds_in is not None and (soonest is None or holds_in < soonest):
                soonest = holds_in
        if (soonest is None or soonest > IDLE_WATCH) and self._watches_idle():
            soonest = IDLE_WATCH
        return soonest

    def _watches_idle(self) -> bool:
        """Whether a run in progress is to stop when the user is no longer idle."""
        for ticket in self._runs.values():
            entry = self._tasks.get(ticket.task_id)
            if entry is not None:
                conditions = entry.spec.conditions
                if conditions.stop_when_unmet and conditions.idle_for is not None:
                    return True
        return False

    def _park_if_unmet(self, entry: TaskEntry, key: ReadyKey, now: datetime) -> bool:
        """Park a due task whose run conditions do not hold; True if it was parked."""
        conditions = entry.spec.conditions
        if not conditions:
            return False
        system = self._system
        unmet = (
            conditions.unmet(system)
            if system is not None
            else Unmet(next(iter(sorted(conditions.required))), "not read yet")
        )
        if unmet is None:
            return False
        self._queues.conditions.park(entry.spec.id, unmet, key, self._give_up_at(entry))
        return True

    @staticmethod
    def _give_up_at(entry: TaskEntry) -> datetime | None:
        assert entry.slot_at is not None
        return give_up_at(entry.spec, entry.slot_kind, entry.slot_at, entry.slot_scheduled)

    def _give_up_waiting(self, now: datetime, events: list[Event]) -> None:
        """Occurrences that waited for their conditions until their time ran out are
        counted missed, and the schedule goes on from the next one."""
        for task_id in self._queues.conditions.given_up(now.timestamp()):
            entry = self._tasks[task_id]
            self._back_to_back.left(task_id)  # a wait behind its runs is over too
            if entry.slot_kind is SlotKind.OCCURRENCE:
                # This occurrence only: later ones that passed meanwhile come due in
                # their turn and meet the misfire policy like any late occurrence.
                occurrence = entry.slot_scheduled or entry.slot_at
                assert occurrence is not None
                events.append(
                    OccurrencesSkipped(task_id, 1, True, occurrence, SkipReason.CONDITION)
                )
                entry.last_outcome = RunOutcome.MISSED
                next_at = entry.spec.recurrence.next_after(occurrence)
                if next_at is None:
                    entry.clear_slot()
                    if not entry.runs:
                        entry.terminal = TaskState.MISSED  # a one-off task: nothing more
                else:
                    self._set_occurrence(entry, next_at)
                    self._queue(entry)
                events.append(TaskChanged(self._snapshot(entry)))
            else:  # a retry or a manual run with its own limit: drop it, keep the rest
                entry.clear_slot()
                if entry.deferred_at is not None:
                    self._set_occurrence(entry, entry.deferred_at)
                    entry.deferred_at = None
                    self._queue(entry)
                events.append(TaskChanged(self._snapshot(entry)))
