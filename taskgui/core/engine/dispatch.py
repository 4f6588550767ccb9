"""Dispatching: due tasks to runs, and a run's end back to the schedule.

``due`` moves everything due from the time queue to the ready heap, then dispatches
from the ready heap while workers are free; ``started``, ``finished`` and
``withdraw`` follow a run from there. The rules that decide what a late occurrence,
an overlap or a run's end leads to are pure functions in ``policies``; this module
applies their verdicts to the queues.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from datetime import datetime, timedelta

from taskgui.core.conditions import NO_CONDITIONS
from taskgui.core.engine import policies
from taskgui.core.engine.condition_runs import ConditionRuns
from taskgui.core.engine.entry import TaskEntry
from taskgui.core.engine.overlap import Overlapping
from taskgui.core.engine.queues import ReadyKey
from taskgui.core.engine.run_by_hand import occurrence_run_by_hand
from taskgui.core.engine.triggers import Triggering
from taskgui.core.engine.withdraw import capture
from taskgui.core.errors import InvalidStateError, UnreadableTaskError
from taskgui.core.events import (
    Event,
    RetryScheduled,
    RunDispatched,
    RunFinished,
    RunWithdrawn,
    TaskChanged,
)
from taskgui.core.states import OverlapPolicy, RunOutcome, SlotKind, TaskState
from taskgui.core.status import RunId, RunTicket
from taskgui.core.task import TaskId


class Dispatching(ConditionRuns, Triggering, Overlapping):
    """The dispatch half of ``Engine`` (see the module docstring)."""

    def due(self, now: datetime, free_workers: int, queue: int = 0) -> list[Event]:
        """Move due tasks to the ready heap and dispatch up to ``free_workers`` of them,
        then up to ``queue`` more to wait in the pool for the next free worker (those
        are ``queued``: their tasks show as pending, waiting for a worker, until
        ``started``).

        Returns ``RunDispatched`` for each run to start (in priority order) plus the
        changes: skipped occurrences, tasks now waiting for a worker or a key.

        The hot path of the scheduler: a task with no run conditions (the shared
        ``NO_CONDITIONS``), no key and no run in progress costs one pop from each
        queue and its dispatch; conditions, overlaps, misfires and pauses that end
        are looked at only when there are any.
        """
        events: list[Event] = []
        now_ts = now.timestamp()
        tasks = self._tasks
        # (Also for tasks read since the last call, by a person's change or a view,
        # whose spread was drawn then: their start is committed with these events.)
        if tasks.deferred_count or self._spread_on_read:
            self._load_due(now_ts, events)
        if self._resumes or self._queues.conditions:
            self._wake_the_waiting(now, events)
        ready = self._ready
        arrived: list[TaskId] = []
        pop_due = self._time.pop_at_most
        bound = (now_ts, sys.maxsize)
        while (item := pop_due(bound)) is not None:
            task_id, (at_ts, seq) = item
            entry = tasks[task_id]
            spec = entry.spec
            # Late for the misfire policy (not if it was planned only inside its grace,
            # behind runs that waited one for the other: see overlap.py).
            late = (
                entry.slot_kind is SlotKind.OCCURRENCE
                and now - entry.slot_at > spec.misfire_grace  # type: ignore[operator]
                and not self._back_to_back.planned_after(task_id, now - spec.misfire_grace)
            )
            if late:
                if not self._misfire(entry, now, events):
                    continue
                assert entry.slot_at is not None
                at_ts = entry.slot_at.timestamp()  # the policy may have moved the slot
            # The time key is (slot_at.timestamp(), seq): its run time is the slot's.
            key = (-spec.priority, at_ts, seq)
            if entry.runs and spec.overlap is not OverlapPolicy.PARALLEL:
                if self._due_while_running(entry, key, late, now, events):
                    arrived.append(task_id)
                continue
            arrived.append(task_id)
            if spec.conditions is NO_CONDITIONS or not self._park_if_unmet(entry, key, now):
                ready.push(task_id, key)
        free_workers += queue  # the queue's places come after the free workers
        started: set[TaskId] = set()
        pop_ready = ready.pop_at_most
        while free_workers > 0 and (head := pop_ready(_ANY_READY)) is not None:
            task_id, key = head
            entry = tasks[task_id]
            spec = entry.spec
            if spec.conditions is not NO_CONDITIONS and self._park_if_unmet(entry, key, now):
                arrived.append(task_id)  # the machine changed while it waited in line
                continue
            concurrency_key = spec.concurrency_key
            if concurrency_key is not None and self._queues.key_busy(concurrency_key):
                # It may have said "waiting for a worker" since an earlier call.
                self._queues.park_on_key(task_id, concurrency_key, key)
                arrived.append(task_id)
                continue
            self._dispatch(entry, now, events, queued=free_workers <= queue)
            started.add(task_id)
            free_workers -= 1
        if arrived:
            self._report_waiting(arrived, started, events)
        return events

    def _report_waiting(
        self, arrived: list[TaskId], started: set[TaskId], events: list[Event]
    ) -> None:
        """What each task that moved in ``due`` now waits for (a started one was
        reported as such)."""
        tasks = self._tasks
        for task_id in dict.fromkeys(arrived):
            if task_id not in started:
                events.append(TaskChanged(self._snapshot(tasks[task_id])))

    def _load_due(self, now_ts: float, events: list[Event]) -> None:
        """Load every deferred task that is due, before ``due`` changes anything, and
        drop those that cannot be read (so one bad row cannot stop a dispatch half-way)."""
        # In batches: a backlog (a laptop waking, a long downtime) can make thousands due.
        events.extend(self._drop(error) for error in self._tasks.load_due(now_ts))
        events.extend(self._drop(error) for error in self._load_returned_due(now_ts))
        events.extend(self._drawn_on_read())

    def _load_returned_due(self, until_ts: float) -> list[UnreadableTaskError]:
        """Load the returned tasks (given back after a run) due by ``until_ts``: they
        kept their keys in the time queue."""
        tasks = self._tasks
        if not tasks.returned_count:
            return []
        due = self._time.ids_with_key_at_most((until_ts, sys.maxsize))
        return tasks.load_these([task_id for task_id in due if tasks.is_returned(task_id)])

    def _dispatch(
        self, entry: TaskEntry, now: datetime, events: list[Event], *, queued: bool = False
    ) -> None:
        assert entry.slot_kind is not None and entry.slot_at is not None
        before = capture(entry)
        by_hand = occurrence_run_by_hand(entry, now)
        ticket = RunTicket(
            run_id=next(self._run_ids),
            task_id=entry.spec.id,
            attempt=entry.slot_attempt,
            kind=entry.slot_kind if by_hand is None else SlotKind.OCCURRENCE,
            # When the run was due. (A retry stored by an older taskgui has the moment
            # it was decided as its scheduled time; its due time is the slot's.)
            scheduled_at=entry.slot_at if by_hand is None else by_hand,
            dispatched_at=now,
        )
        entry.add_run(ticket)
        self._runs[ticket.run_id] = ticket
        self._back_to_back.dispatched(ticket.task_id, ticket.run_id, now)
        entry.attempt = ticket.attempt
        spec = entry.spec
        if spec.concurrency_key is not None:
            self._queues.acquire_key(spec.concurrency_key)
            self._run_keys[ticket.run_id] = spec.concurrency_key
        # The slot is used; the next scheduled occurrence takes its place now (not at
        # the end of the run), so overlap policies see it come due while this runs.
        next_at: datetime | None
        if ticket.kind is SlotKind.OCCURRENCE:
            # From the occurrence, not from its spread start: no drift.
            occurrence = by_hand or entry.slot_scheduled or ticket.scheduled_at
            next_at = None if entry.uses_fixed_delay else spec.recurrence.next_after(occurrence)
        else:
            next_at = entry.deferred_at
        entry.deferred_at = None
        if next_at is not None:
            self._set_occurrence(entry, next_at)
            self._queue(entry)
        else:
            entry.clear_slot()
        self._withdraw.record(ticket.run_id, before, entry)
        if queued:
            self._queued.add(ticket.run_id)
        events.append(RunDispatched(ticket, queued))
        events.append(TaskChanged(self._snapshot(entry)))

    def withdrawable(self, run_id: RunId) -> bool:
        """Whether ``withdraw`` can take this run back: dispatched, not started, and
        its task unchanged since (not cancelled, edited or rescheduled)."""
        ticket = self._runs.get(run_id)
        if ticket is None:
            return False
        return self._withdraw.can_withdraw(run_id, self._tasks.get(ticket.task_id))

    def withdraw(self, run_id: RunId) -> list[Event]:
        """Take back a dispatch whose command never started, as if it had not been made.

        The task gets back the slot it had (its next occurrence is planned again when
        it next runs) and goes through ``due`` again, so the same rules decide when it
        runs. For a run dispatched ahead of its time that a more urgent task should
        overtake, and for one still waiting at shutdown. Returns ``RunWithdrawn`` (the
        store forgets the run) and the task's change. InvalidStateError unless
        ``withdrawable``.
        """
        if not self.withdrawable(run_id):
            raise InvalidStateError(f"run {run_id} cannot be taken back")
        ticket = self._runs.pop(run_id)
        self._queued.discard(run_id)
        entry = self._tasks[ticket.task_id]
        entry.end_run(run_id)
        # Out of its queues first: releasing the key may make a task parked on it
        # ready, and that must not be this task's own slot, about to be replaced.
        events: list[Event] = [RunWithdrawn(ticket), *self._unqueue(entry)]
        self._release_key(run_id, events)
        self._withdraw.restore(run_id, entry)
        self._back_to_back.withdrawn(ticket.task_id, run_id, ticket.dispatched_at)
        if self._should_queue(entry):
            assert entry.slot_at is not None
            self._time.push(entry.spec.id, (entry.slot_at.timestamp(), entry.seq))
        events.append(TaskChanged(self._snapshot(entry)))
        return events

    def started(self, run_id: RunId, now: datetime) -> list[Event]:
        """The run's process has started (after its start was recorded)."""
        ticket = self._runs.get(run_id)
        if ticket is None:
            return []
        self._withdraw.forget(run_id)
        self._queued.discard(run_id)
        entry = self._tasks.get(ticket.task_id)
        if entry is None:  # removed since dispatch; finished() still closes the run
            return []
        entry.mark_started(run_id, now)
        return [TaskChanged(self._snapshot(entry))]

    def finished(
        self, run_id: RunId, outcome: RunOutcome, now: datetime, *, crashed: bool = False
    ) -> list[Event]:
        """A run ended. Applies the retry policy and frees its worker and key.

        ``crashed``: an INTERRUPTED run whose process died with the scheduler that ran
        it (a shared schedule's node that stopped answering, its run rescued): it spends
        its attempt as a crash found at a start does (``load``); else an INTERRUPTED run
        was stopped by an orderly stop and spends none (see below).
        """
        ticket = self._runs.pop(run_id, None)
        if ticket is None:
            return []
        self._withdraw.forget(run_id)
        self._queued.discard(run_id)
        self._back_to_back.ended(run_id)
        self._stopping_for.pop(run_id, None)
        events: list[Event] = [RunFinished(ticket, outcome, now)]
        self._release_key(run_id, events)  # also when the task was removed while it ran
        entry = self._tasks.get(ticket.task_id)
        if entry is None:  # removed while it ran
            return events
        entry.end_run(run_id)
        self._ended.add(entry.spec.id)
        self._queues.previous_run_finished(entry.spec.id)
        if entry.terminal is not None or outcome not in _RUN_AGAIN or crashed:
            self._after_run(entry, outcome, now, events)
        else:
            # Not the command's failure, so no attempt is spent. STOPPED: its conditions
            # ended; it waits for them again. INTERRUPTED here: taskgui itself stopped it
            # (a quit, a daemon or node stopped; a crash is found at the next start,
            # Engine.load): the same attempt is retried at once, at the next start, as
            # the quit's dialog says (a one-attempt task was given up on by every quit
            # during its run, and a retry is not a late occurrence a misfire skips).
            entry.last_outcome = outcome
            entry.last_run_at = now
            if outcome is RunOutcome.STOPPED:
                self._run_again_when_conditions_hold(entry, ticket, now, events)
            else:
                self._retry_the_same_attempt(entry, ticket, now, events)
        events.append(TaskChanged(self._snapshot(entry)))
        return events

    # ------------------------------------------------- applying the policies

    def _after_run(
        self, entry: TaskEntry, outcome: RunOutcome, now: datetime, events: list[Event]
    ) -> None:
        entry.last_outcome = outcome
        entry.last_run_at = now
        if entry.terminal is TaskState.CANCELLED:
            return
        verdict = policies.after_run(
            entry.spec,
            attempt=entry.attempt,
            outcome=outcome,
            now=now,
            rng=self._rng,
            idle=entry.slot_kind is None and not entry.runs,
            fixed_delay=entry.uses_fixed_delay,
        )
        if verdict.retry_delay is not None:
            self._schedule_retry(entry, now, verdict.retry_delay, events)
            return
        if verdict.exhausted is not None:
            events.append(verdict.exhausted)
        if verdict.next_at is not None:
            self._set_occurrence(entry, verdict.next_at)
            self._queue(entry)
        elif verdict.terminal is not None and not entry.spec.only_after:
            entry.terminal = verdict.terminal  # one "only after" waits for the next trigger
        self._upstream_ended(entry, outcome, now, events)

    def _retry_the_same_attempt(
        self, entry: TaskEntry, ticket: RunTicket, now: datetime, events: list[Event]
    ) -> None:
        """A retry of the stopped run's own attempt, due now; the occurrence it displaces
        comes back after it, as after any retry (see ``_schedule_retry``)."""
        if entry.slot_kind in (SlotKind.RETRY, SlotKind.MANUAL, SlotKind.TRIGGERED):
            return  # another attempt is already queued
        if entry.slot_kind is SlotKind.OCCURRENCE:
            self._displace_occurrence(entry, events)
        entry.set_slot(SlotKind.RETRY, now, attempt=ticket.attempt)
        self._queue(entry)

    def _schedule_retry(
        self, entry: TaskEntry, now: datetime, delay: timedelta, events: list[Event]
    ) -> None:
        if entry.slot_kind in (SlotKind.RETRY, SlotKind.MANUAL):
            return  # a parallel run already queued the next attempt
        if entry.slot_kind is SlotKind.OCCURRENCE:
            self._displace_occurrence(entry, events)
        elif entry.slot_kind is SlotKind.TRIGGERED:
            # A run its upstream asked for meanwhile coalesces into the retry, as one
            # asked for after it would. (Its slot stayed queued beside the retry's: the
            # task in two queues, "already in the heap" at its next dispatch, its run's
            # result lost; an outsider's trial.)
            events += self._unqueue(entry)
        run_at = now + delay
        attempt = entry.attempt + 1
        # Scheduled for when it is due: history shows whether it ran on time.
        entry.set_slot(SlotKind.RETRY, run_at, attempt=attempt)
        self._queue(entry)
        events.append(
            RetryScheduled(
                task_id=entry.spec.id,
                attempt=attempt,
                max_attempts=entry.spec.max_attempts,
                run_at=run_at,
                delay=delay,
            )
        )

    def _displace_occurrence(self, entry: TaskEntry, events: list[Event]) -> None:
        """A retry takes the place of the task's next occurrence, which comes back after
        it (``deferred_at``). One that waited behind the task's runs waits behind the
        retry's: the retry carries their chain on (it lost it, and the occurrence was
        then skipped as a misfire; a review)."""
        since = self._back_to_back.waiting_since(entry.spec.id)
        events += self._unqueue(entry)
        # The occurrence, unspread: it gets its spread again when it is queued.
        entry.deferred_at = entry.slot_scheduled or entry.slot_at
        if since is not None:
            self._back_to_back.wait(entry.spec.id, since)

    def _misfire(self, entry: TaskEntry, now: datetime, events: list[Event]) -> bool:
        """Apply the misfire policy to a late occurrence; True when it should run now."""
        assert entry.slot_at is not None
        verdict = policies.misfire(entry.spec, entry.slot_at, now, self._run_all_limit)
        if verdict.skipped is not None:
            events.append(verdict.skipped)
        if verdict.run:
            if verdict.slot_at is not None:
                entry.set_slot(SlotKind.OCCURRENCE, verdict.slot_at)
            return True
        entry.last_outcome = RunOutcome.MISSED
        if verdict.slot_at is None:
            entry.clear_slot()
            entry.terminal = TaskState.MISSED
        else:
            self._set_occurrence(entry, verdict.slot_at)
            self._queue(entry)
        events.append(TaskChanged(self._snapshot(entry)))
        return False

    def resume(self, task_id: TaskId) -> list[Event]:
        """A person's change (``Engine.resume``), which a pause for a while ends with."""
        raise NotImplementedError

    def _wake_the_waiting(self, now: datetime, events: list[Event]) -> None:
        """Before anything is dispatched: pauses for a while that are over end, and runs
        that waited for their conditions as long as they may are counted missed."""
        if self._queues.conditions:
            self._give_up_waiting(now, events)
        resumes = self._resumes
        now_ts = now.timestamp()
        while resumes and resumes.peek()[1] <= now_ts:
            task_id, _at = resumes.pop()
            try:
                events += self.resume(task_id)
            except InvalidStateError:
                # It cannot resume (its schedule is refused): it stays paused, for good.
                entry = self._tasks[task_id]
                entry.spec = replace(entry.spec, paused_until=None)
                events.append(TaskChanged(self._snapshot(entry)))


_RUN_AGAIN = frozenset({RunOutcome.STOPPED, RunOutcome.INTERRUPTED})

# A ready key above every real one (-priority is at most -PRIORITY_MIN, far below it):
# ``pop_at_most`` with it pops the head whatever it is, in one call.
_ANY_READY: ReadyKey = (sys.maxsize, 0.0, 0)
