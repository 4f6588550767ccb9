"""The scheduling engine: a state machine over a time heap and a ready heap.

Tasks not yet due wait in the **time heap**, keyed ``(run_at, seq)``. Each ``due(now)``
moves everything due into the **ready heap**, keyed ``(-priority, run_at, seq)``, and
then dispatches from it while workers are free. Two heaps, because "the highest
priority among the due tasks runs first" must hold when a backlog builds up (busy
workers, a laptop waking from sleep); one heap ordered by ``(run_at, priority)`` would
run whatever became due first.

A due task whose concurrency key is busy is parked in a per-key heap and comes back
when the key frees (or when the task first in line for it leaves); one whose previous
run is still going (overlap ``queue``, or an occurrence a ``run_all`` catch-up owes)
waits for that run. Both heaps are indexed, so cancel, pause and priority changes are
O(log n). Whenever what a task waits for changes, a ``TaskChanged`` says so.

A late occurrence meets its misfire policy; every occurrence that passed either runs
or is counted in an ``OccurrencesSkipped``, across clock jumps, pauses and restarts.

Every task holds at most one queued run, its *slot* (see ``TaskStatus``). The engine
never reads a clock and never touches disk: callers pass ``now`` and persist the
events it returns.
"""

from __future__ import annotations

import itertools
import random
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from operator import attrgetter

from taskgui.core.engine.deferred import DeferredTasks, TaskTable
from taskgui.core.engine.entry import TaskEntry as _Entry
from taskgui.core.engine.queues import DispatchQueues, TimeKey
from taskgui.core.errors import (
    InvalidStateError,
    InvalidTaskError,
    TaskNotFoundError,
    UnreadableTaskError,
)
from taskgui.core.events import (
    Event,
    OccurrencesSkipped,
    RetryScheduled,
    RunCancelRequested,
    RunDispatched,
    RunFinished,
    RunWithdrawn,
    SkipReason,
    TaskAdded,
    TaskChanged,
    TaskDropped,
    TaskExhausted,
    TaskRemoved,
)
from taskgui.core.recurrence import CatchUp
from taskgui.core.states import (
    MisfirePolicy,
    OverlapPolicy,
    RunOutcome,
    SlotKind,
    TaskState,
)
from taskgui.core.status import RunId, RunTicket, TaskSnapshot
from taskgui.core.task import TaskId, TaskSpec
from taskgui.core.task_rules import (
    cancel_refusal,
    pause_refusal,
    resume_refusal,
    retry_refusal,
    run_now_refusal,
)

DEFAULT_RUN_ALL_LIMIT = 100
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class Engine:
    """Decides what runs when. See the module docstring for the design."""

    def __init__(
        self, *, rng: random.Random | None = None, run_all_limit: int = DEFAULT_RUN_ALL_LIMIT
    ) -> None:
        if run_all_limit < 1:
            raise ValueError("run_all_limit must be at least 1")
        self._rng = rng or random.Random()
        self._run_all_limit = run_all_limit
        self._tasks = TaskTable(self._on_deferred_loaded)
        self._queues = DispatchQueues()
        self._time = self._queues.time
        self._ready = self._queues.ready
        self._runs: dict[RunId, RunTicket] = {}
        # For each run dispatched but not started: how to take the dispatch back.
        self._undo: dict[RunId, tuple[tuple[object, ...], tuple[object, ...], TaskSpec]] = {}
        # The concurrency key each run holds: the one it took, whatever the task's
        # definition says by the time the run ends (a person may edit the key).
        self._run_keys: dict[RunId, str] = {}
        self._seq = itertools.count(1)
        self._run_ids = itertools.count(1)

    # ----------------------------------------------------------------- queries

    def __len__(self) -> int:
        return self._tasks.total()

    def __contains__(self, task_id: object) -> bool:
        return self._tasks.knows(task_id)

    def snapshot(self, task_id: TaskId) -> TaskSnapshot:
        return self._snapshot(self._entry(task_id))

    def snapshots(self, *, load_deferred: bool = True) -> Iterator[TaskSnapshot]:
        """Every task: deferred ones are loaded first (call ``hydrate`` before to learn
        of any that cannot be read). With ``load_deferred=False``, loaded ones only."""
        if load_deferred:
            self.hydrate()
        return (self._snapshot(entry) for entry in self._tasks.values())

    def next_deadline(self) -> datetime | None:
        """When the earliest queued task becomes due; None when nothing is queued."""
        if not self._time:
            return None
        task_id, _ = self._time.peek()
        at_us = self._tasks.deferred_run_at_us(task_id)
        if at_us is not None:  # known from the heap alone: no need to load the task
            return _EPOCH + timedelta(microseconds=at_us)
        return self._tasks[task_id].slot_at

    @property
    def deferred_count(self) -> int:
        """How many tasks are known only by id and run time so far (see ``load``)."""
        return self._tasks.deferred_count

    def hydrate(self, limit: int | None = None) -> list[Event]:
        """Load up to ``limit`` deferred tasks (all when None).

        Returns a ``TaskDropped`` for each one that could not be read: the store set
        its row aside, and the engine forgets it.
        """
        return [self._drop(error) for error in self._tasks.load_deferred(limit)]

    def _on_deferred_loaded(self, entry: _Entry, guessed_queued: bool) -> None:
        """Put the time heap right for a task just loaded: the store's guess came from
        raw columns, and a hand-edited row can decode to something else."""
        task_id = entry.spec.id
        if not self._should_queue(entry):
            if guessed_queued:
                self._time.discard(task_id)
            return
        assert entry.slot_at is not None
        key = (entry.slot_at.timestamp(), entry.seq)
        if not guessed_queued:
            self._time.push(task_id, key)
        elif self._time.key_of(task_id) != key:
            self._time.update(task_id, key)

    def _drop(self, error: UnreadableTaskError) -> TaskDropped:
        self._tasks.drop_deferred(error.task_id)
        self._time.discard(error.task_id)
        return TaskDropped(error.task_id, error.reason)

    def has_ready(self) -> bool:
        """True when a due task waits only for a free worker."""
        return bool(self._ready)

    @property
    def running_runs(self) -> dict[RunId, RunTicket]:
        return dict(self._runs)

    def ready_count(self) -> int:
        return len(self._ready)

    def ready_priority(self) -> int | None:
        """The priority of the most urgent due task waiting for a worker, if any."""
        if not self._ready:
            return None
        _, key = self._ready.peek()
        return -key[0]

    # ---------------------------------------------------------- bulk loading

    def load(
        self,
        snapshots: Iterable[TaskSnapshot],
        now: datetime,
        deferred: DeferredTasks | None = None,
    ) -> list[Event]:
        """Replace the engine's contents with stored tasks, in O(n).

        Tasks stored as running were interrupted (the app stopped or crashed while
        they ran): each counts as a failed attempt with outcome ``interrupted`` and
        goes to its retry policy, so a crash loses at most the runs in flight and
        those are retried (at-least-once).

        ``deferred`` tasks are known by id and run time only and are fetched from
        their source when first needed (see ``taskgui.core.engine.deferred``): a cold start
        then builds the heaps without decoding every task.
        """
        self._tasks.clear()
        self._queues.clear()
        self._runs.clear()
        self._undo.clear()
        self._run_keys.clear()
        events: list[Event] = []
        interrupted: list[_Entry] = []
        time_items: list[tuple[TaskId, TimeKey]] = []
        tasks = self._tasks
        seq = next(self._seq)
        restored = _Entry.restored
        should_queue = self._should_queue
        for snapshot in snapshots:
            task_id = snapshot.spec.id
            if task_id in tasks:
                raise InvalidTaskError(f"task id {task_id} appears twice")
            entry = tasks[task_id] = restored(snapshot)
            if snapshot.status.state is TaskState.RUNNING:
                interrupted.append(entry)
            elif should_queue(entry):
                assert entry.slot_at is not None
                seq += 1
                entry.seq = seq
                time_items.append((task_id, (entry.slot_at.timestamp(), seq)))
        if deferred is not None:
            deferred_items, seq = tasks.defer(deferred, seq + 1)
            time_items += deferred_items
        self._seq = itertools.count(seq + 1)
        self._time.heapify(time_items)
        for entry in interrupted:
            entry.attempt = max(entry.attempt, 1)
            self._after_run(entry, RunOutcome.INTERRUPTED, now, events)
            # Its next occurrence was planned when the run was dispatched, but a task
            # stored as running was not queued above; a retry queues itself.
            if self._should_queue(entry) and entry.spec.id not in self._time:
                self._queue(entry)
            events.append(TaskChanged(self._snapshot(entry)))
        return events

    # ------------------------------------------------------ changing the set

    def add(self, spec: TaskSpec) -> list[Event]:
        """Queue a new task for its first run time. The id must be set and unused."""
        if spec.id <= 0:
            raise InvalidTaskError("a task needs an id before the engine can schedule it")
        if self._tasks.knows(spec.id):
            raise InvalidTaskError(f"a task with id {spec.id} already exists")
        entry = _Entry(spec)
        entry.set_slot(SlotKind.OCCURRENCE, spec.recurrence.first_at_or_after(spec.first_run_at))
        self._tasks[spec.id] = entry
        self._queue(entry)
        return [TaskAdded(self._snapshot(entry))]

    def update(self, spec: TaskSpec, now: datetime) -> list[Event]:
        """Replace a task's definition, keeping its history and place where it can.

        A new first run time or recurrence re-plans the next run (and re-arms a
        finished one-off task); a new priority or key re-orders it in place.
        """
        entry = self._entry(spec.id)
        old = entry.spec
        reschedule = (
            spec.first_run_at != old.first_run_at or spec.recurrence != old.recurrence
        ) and entry.terminal is not TaskState.CANCELLED
        unblocked = self._unqueue(entry)
        entry.spec = spec
        if reschedule:
            entry.terminal = None
            entry.deferred_at = None
            entry.set_slot(SlotKind.OCCURRENCE, self._first_occurrence_from(spec, now))
        self._queue(entry)
        return [TaskChanged(self._snapshot(entry)), *unblocked]

    @staticmethod
    def _first_occurrence_from(spec: TaskSpec, now: datetime) -> datetime:
        if spec.first_run_at >= now or not spec.recurrence.is_recurring:
            return spec.recurrence.first_at_or_after(spec.first_run_at)
        next_at = spec.recurrence.catch_up(spec.first_run_at, now).next_at
        return next_at if next_at is not None else spec.first_run_at

    def remove(self, task_id: TaskId) -> list[Event]:
        """Forget a task; any run still going is asked to stop."""
        entry = self._entry(task_id)
        unblocked = self._unqueue(entry)
        del self._tasks[task_id]
        events: list[Event] = [RunCancelRequested(ticket) for ticket in entry.runs.values()]
        events.append(TaskRemoved(task_id))
        return events + unblocked

    def cancel(self, task_id: TaskId) -> list[Event]:
        """Stop a task for good: unqueue it and stop any run in progress (no retry)."""
        entry = self._entry(task_id)
        if entry.terminal is TaskState.CANCELLED:
            return []
        if (refusal := cancel_refusal(entry.spec, entry.state)) is not None:
            raise InvalidStateError(refusal)
        unblocked = self._unqueue(entry)
        entry.clear_slot()
        entry.deferred_at = None
        entry.terminal = TaskState.CANCELLED
        events: list[Event] = [RunCancelRequested(ticket) for ticket in entry.runs.values()]
        events.append(TaskChanged(self._snapshot(entry)))
        return events + unblocked

    def pause(self, task_id: TaskId) -> list[Event]:
        """Stop starting scheduled runs of a task; a run in progress finishes."""
        entry = self._entry(task_id)
        if entry.spec.paused:
            return []
        if (refusal := pause_refusal(entry.spec, entry.state)) is not None:
            raise InvalidStateError(refusal)
        unblocked = self._unqueue(entry)
        entry.spec = replace(entry.spec, paused=True)
        self._queue(entry)  # a run a person asked for still runs (see run_now)
        return [TaskChanged(self._snapshot(entry)), *unblocked]

    def resume(self, task_id: TaskId) -> list[Event]:
        """Undo ``pause``. A run missed meanwhile meets the task's misfire policy."""
        entry = self._entry(task_id)
        if not entry.spec.paused:
            return []
        if (refusal := resume_refusal(entry.spec)) is not None:
            raise InvalidStateError(refusal)
        entry.spec = replace(entry.spec, paused=False)
        unblocked = self._unqueue(entry)  # a run asked for while paused may be queued
        self._queue(entry)
        return [TaskChanged(self._snapshot(entry)), *unblocked]

    def run_now(self, task_id: TaskId, now: datetime) -> list[Event]:
        """Run a task at once, outside its schedule; the schedule then goes on as before.

        Allowed for a paused task (it stays paused) and for a finished one-off task
        (it runs once more). A task that is failing gets its next attempt now.
        """
        entry = self._entry(task_id)
        refusal = run_now_refusal(entry.spec, entry.state, running=bool(entry.runs))
        if refusal is not None:
            raise InvalidStateError(refusal)
        if entry.slot_kind is SlotKind.RETRY:
            return self._retry_now(entry, now)
        unblocked = self._unqueue(entry)
        if entry.slot_kind is SlotKind.OCCURRENCE:
            entry.deferred_at = entry.slot_at
        entry.terminal = None
        entry.set_slot(SlotKind.MANUAL, now)
        self._queue(entry)
        return [TaskChanged(self._snapshot(entry)), *unblocked]

    def retry_now(self, task_id: TaskId, now: datetime) -> list[Event]:
        """Run the next attempt of a failing task now, or start over an exhausted one."""
        entry = self._entry(task_id)
        if entry.slot_kind is SlotKind.RETRY:
            return self._retry_now(entry, now)
        refusal = retry_refusal(
            entry.spec, entry.state, entry.last_outcome, running=bool(entry.runs)
        )
        if refusal is not None:
            raise InvalidStateError(refusal)
        return self.run_now(task_id, now)

    def _retry_now(self, entry: _Entry, now: datetime) -> list[Event]:
        unblocked = self._unqueue(entry)
        entry.set_slot(SlotKind.RETRY, now, attempt=entry.slot_attempt)  # due now
        self._queue(entry)
        return [TaskChanged(self._snapshot(entry)), *unblocked]

    def reschedule(self, task_id: TaskId, at: datetime) -> list[Event]:
        """Move a task's next run to ``at``; a recurring schedule continues from there."""
        entry = self._entry(task_id)
        if entry.terminal is not None:
            raise InvalidStateError(
                f"task {entry.spec.name!r} has {entry.terminal.value}; edit it to schedule again"
            )
        if at.utcoffset() is None:
            raise InvalidTaskError("the new run time must carry a time zone")
        if entry.runs and not entry.spec.recurrence.is_recurring:
            raise InvalidStateError(
                f"task {entry.spec.name!r} is running; wait for it to finish or cancel it"
            )
        unblocked = self._unqueue(entry)
        entry.set_slot(SlotKind.OCCURRENCE, at.astimezone(UTC))
        self._queue(entry)
        return [TaskChanged(self._snapshot(entry)), *unblocked]

    # ------------------------------------------------------------ dispatching

    def due(self, now: datetime, free_workers: int) -> list[Event]:
        """Move due tasks to the ready heap and dispatch up to ``free_workers`` of them.

        Returns ``RunDispatched`` for each run to start (in priority order) plus the
        changes: skipped occurrences, tasks now waiting for a worker or a key.
        """
        events: list[Event] = []
        now_ts = now.timestamp()
        time_heap = self._time
        ready = self._ready
        tasks = self._tasks
        arrived: list[TaskId] = []
        if tasks.deferred_count:
            self._load_due(now_ts, events)
        while time_heap and time_heap.peek()[1][0] <= now_ts:
            task_id, (_at_ts, seq) = time_heap.pop()
            entry = tasks[task_id]
            late = (
                entry.slot_kind is SlotKind.OCCURRENCE
                and now - entry.slot_at > entry.spec.misfire_grace  # type: ignore[operator]
            )
            if late and not self._misfire(entry, now, events):
                continue
            assert entry.slot_at is not None
            key = (-entry.spec.priority, entry.slot_at.timestamp(), seq)
            if entry.runs and entry.spec.overlap is not OverlapPolicy.PARALLEL:
                # A run_all backlog is owed in full: each missed occurrence waits for
                # the one before it rather than being skipped as an overlap.
                owed = late and entry.spec.misfire is MisfirePolicy.RUN_ALL
                if entry.spec.overlap is OverlapPolicy.SKIP and not owed:
                    self._skip_for_overlap(entry, now, events)
                else:
                    self._queues.wait_for_previous_run(task_id, key)
                    arrived.append(task_id)
                continue
            ready.push(task_id, key)
            arrived.append(task_id)
        started: set[TaskId] = set()
        while free_workers > 0 and ready:
            task_id, key = ready.pop()
            entry = tasks[task_id]
            concurrency_key = entry.spec.concurrency_key
            if concurrency_key is not None and self._queues.key_busy(concurrency_key):
                # It may have said "waiting for a worker" since an earlier call.
                self._queues.park_on_key(task_id, concurrency_key, key)
                arrived.append(task_id)
                continue
            self._dispatch(entry, now, events)
            started.add(task_id)
            free_workers -= 1
        # What each task that moved now waits for; a started one was reported as such.
        for task_id in dict.fromkeys(arrived):
            if task_id not in started:
                events.append(TaskChanged(self._snapshot(tasks[task_id])))
        return events

    def _load_due(self, now_ts: float, events: list[Event]) -> None:
        """Load every deferred task that is due, before ``due`` changes anything, and
        drop those that cannot be read (so one bad row cannot stop a dispatch half-way)."""
        due = self._time.ids_with_key_at_most((now_ts, sys.maxsize))
        # In batches: a backlog (a laptop waking, a long downtime) can make thousands due.
        events.extend(self._drop(error) for error in self._tasks.load_these(due))

    def _dispatch(self, entry: _Entry, now: datetime, events: list[Event]) -> None:
        assert entry.slot_kind is not None and entry.slot_at is not None
        before = _undo_fields(entry)
        ticket = RunTicket(
            run_id=next(self._run_ids),
            task_id=entry.spec.id,
            attempt=entry.slot_attempt,
            kind=entry.slot_kind,
            # When the run was due. (A retry stored by an older taskgui has the moment
            # it was decided as its scheduled time; its due time is the slot's.)
            scheduled_at=entry.slot_at,
            dispatched_at=now,
        )
        entry.runs[ticket.run_id] = ticket
        self._runs[ticket.run_id] = ticket
        entry.attempt = ticket.attempt
        if entry.spec.concurrency_key is not None:
            self._queues.acquire_key(entry.spec.concurrency_key)
            self._run_keys[ticket.run_id] = entry.spec.concurrency_key
        # The slot is used; the next scheduled occurrence takes its place now (not at
        # the end of the run), so overlap policies see it come due while this runs.
        next_at: datetime | None
        if ticket.kind is SlotKind.OCCURRENCE:
            next_at = (
                None
                if entry.uses_fixed_delay
                else entry.spec.recurrence.next_after(ticket.scheduled_at)
            )
        else:
            next_at = entry.deferred_at
        entry.deferred_at = None
        if next_at is not None:
            entry.set_slot(SlotKind.OCCURRENCE, next_at)
            self._queue(entry)
        else:
            entry.clear_slot()
        self._undo[ticket.run_id] = (before, _undo_fields(entry), entry.spec)
        events.append(RunDispatched(ticket))
        events.append(TaskChanged(self._snapshot(entry)))

    def withdrawable(self, run_id: RunId) -> bool:
        """Whether ``withdraw`` can take this run back: dispatched, not started, and
        its task unchanged since (not cancelled, edited or rescheduled)."""
        undo = self._undo.get(run_id)
        ticket = self._runs.get(run_id)
        if undo is None or ticket is None:
            return False
        entry = self._tasks.get(ticket.task_id)
        return (
            entry is not None
            and entry.terminal is None
            and entry.spec is undo[2]  # not edited, paused or resumed since
            and _undo_fields(entry) == undo[1]
        )

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
        before, _after, _spec = self._undo.pop(run_id)
        entry = self._tasks[ticket.task_id]
        del entry.runs[run_id]
        # Out of its queues first: releasing the key may make a task parked on it
        # ready, and that must not be this task's own slot, about to be replaced.
        events: list[Event] = [RunWithdrawn(ticket), *self._unqueue(entry)]
        self._release_key(run_id, events)
        for name, value in zip(_UNDO_NAMES, before, strict=True):
            setattr(entry, name, value)
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
        self._undo.pop(run_id, None)
        entry = self._tasks.get(ticket.task_id)
        if entry is None:  # removed since dispatch; finished() still closes the run
            return []
        entry.started[run_id] = now
        return [TaskChanged(self._snapshot(entry))]

    def finished(self, run_id: RunId, outcome: RunOutcome, now: datetime) -> list[Event]:
        """A run ended. Applies the retry policy and frees its worker and key."""
        ticket = self._runs.pop(run_id, None)
        if ticket is None:
            return []
        self._undo.pop(run_id, None)
        events: list[Event] = [RunFinished(ticket, outcome, now)]
        self._release_key(run_id, events)  # also when the task was removed while it ran
        entry = self._tasks.get(ticket.task_id)
        if entry is None:  # removed while it ran
            return events
        del entry.runs[run_id]
        entry.started.pop(run_id, None)
        self._queues.previous_run_finished(entry.spec.id)
        self._after_run(entry, outcome, now, events)
        events.append(TaskChanged(self._snapshot(entry)))
        return events

    # --------------------------------------------------------------- policies

    def _after_run(
        self, entry: _Entry, outcome: RunOutcome, now: datetime, events: list[Event]
    ) -> None:
        entry.last_outcome = outcome
        entry.last_run_at = now
        if entry.terminal is TaskState.CANCELLED:
            return
        if outcome.is_failure:
            delay = entry.spec.retry.next_delay(entry.attempt, self._rng)
            if delay is not None:
                self._schedule_retry(entry, now, delay, events)
                return
            events.append(
                TaskExhausted(
                    task_id=entry.spec.id,
                    name=entry.spec.name,
                    attempts=entry.attempt,
                    outcome=outcome,
                )
            )
        if entry.slot_kind is None and not entry.runs:
            if entry.uses_fixed_delay:
                entry.set_slot(SlotKind.OCCURRENCE, now + entry.spec.recurrence.interval)  # type: ignore[union-attr]
                self._queue(entry)
            elif not entry.spec.recurrence.is_recurring:
                entry.terminal = _TERMINAL_FOR[outcome]

    def _schedule_retry(
        self, entry: _Entry, now: datetime, delay: timedelta, events: list[Event]
    ) -> None:
        if entry.slot_kind in (SlotKind.RETRY, SlotKind.MANUAL):
            return  # a parallel run already queued the next attempt
        if entry.slot_kind is SlotKind.OCCURRENCE:
            events += self._unqueue(entry)
            entry.deferred_at = entry.slot_at
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

    def _misfire(self, entry: _Entry, now: datetime, events: list[Event]) -> bool:
        """Apply the misfire policy to a late occurrence; True when it should run now.

        Whatever it decides, every occurrence from the late one up to now is either
        left to run or counted in an ``OccurrencesSkipped``, and the slot says which
        occurrence runs next, so nothing is counted twice: not when the slot comes
        back through ``due`` (a restart, a withdrawn run, a key that was busy) and is
        judged late again, because only occurrences after the slot are counted.
        """
        assert entry.slot_at is not None
        recurrence = entry.spec.recurrence
        late_at = entry.slot_at
        policy = entry.spec.misfire
        catch = recurrence.catch_up(late_at, now)
        if policy is MisfirePolicy.RUN_ONCE:
            if catch.missed:
                # The catch-up run stands for the most recent occurrence that passed,
                # and the ones before it are the missed ones (as APScheduler
                # coalesces); the schedule goes on from it as from any run.
                events.append(
                    OccurrencesSkipped(
                        entry.spec.id, catch.missed, catch.exact, late_at, SkipReason.MISFIRE
                    )
                )
                entry.set_slot(SlotKind.OCCURRENCE, self._latest_passed(entry, catch, now))
            return True
        if policy is MisfirePolicy.SKIP:
            events.append(
                OccurrencesSkipped(
                    entry.spec.id, catch.missed + 1, catch.exact, late_at, SkipReason.MISFIRE
                )
            )
            entry.last_outcome = RunOutcome.MISSED
            if catch.next_at is None:
                entry.clear_slot()
                entry.terminal = TaskState.MISSED
            else:
                entry.set_slot(SlotKind.OCCURRENCE, catch.next_at)
                self._queue(entry)
            events.append(TaskChanged(self._snapshot(entry)))
            return False
        total = catch.missed + 1
        if total > self._run_all_limit:
            dropped = total - self._run_all_limit
            events.append(
                OccurrencesSkipped(entry.spec.id, dropped, catch.exact, late_at, SkipReason.MISFIRE)
            )
            start = recurrence.advance(late_at, dropped) or late_at
            entry.set_slot(SlotKind.OCCURRENCE, start)
        return True

    @staticmethod
    def _latest_passed(entry: _Entry, catch: CatchUp, now: datetime) -> datetime:
        """The last occurrence at or before ``now``, ``catch.missed`` after the slot.

        When the count stopped at its cap (a minutely cron after weeks of downtime),
        that occurrence is not known without counting on; ``now`` stands in for it,
        which cron's arithmetic continues from as well (only cron counts with a cap).
        """
        assert entry.slot_at is not None
        if not catch.exact:
            return now
        return entry.spec.recurrence.advance(entry.slot_at, catch.missed) or entry.slot_at

    def _skip_for_overlap(self, entry: _Entry, now: datetime, events: list[Event]) -> None:
        """Skip the due occurrence, and every later one already past, while the previous
        run goes; the record counts them all."""
        assert entry.slot_at is not None
        catch = entry.spec.recurrence.catch_up(entry.slot_at, now)
        count, exact, next_at = catch.missed + 1, catch.exact, catch.next_at
        events.append(
            OccurrencesSkipped(entry.spec.id, count, exact, entry.slot_at, SkipReason.OVERLAP)
        )
        if next_at is None:
            entry.clear_slot()
        else:
            entry.set_slot(SlotKind.OCCURRENCE, next_at)
            self._queue(entry)
        events.append(TaskChanged(self._snapshot(entry)))

    # ---------------------------------------------------------------- helpers

    def _release_key(self, run_id: RunId, events: list[Event]) -> None:
        """Free the key the run took; a task waiting for it now waits for a worker."""
        key = self._run_keys.pop(run_id, None)
        if key is None:
            return
        unblocked = self._queues.release_key(key)
        if unblocked is not None:
            events.append(TaskChanged(self._snapshot(self._tasks[unblocked])))

    def _entry(self, task_id: TaskId) -> _Entry:
        try:
            return self._tasks[task_id]
        except KeyError:
            raise TaskNotFoundError(task_id) from None

    @staticmethod
    def _should_queue(entry: _Entry) -> bool:
        return (
            entry.slot_at is not None
            and entry.terminal is None
            and (not entry.spec.paused or entry.slot_kind is SlotKind.MANUAL)
        )

    def _queue(self, entry: _Entry) -> None:
        """Put the task's slot in the time heap, if it has one and may run."""
        if self._should_queue(entry):
            assert entry.slot_at is not None
            entry.seq = next(self._seq)
            self._time.push(entry.spec.id, (entry.slot_at.timestamp(), entry.seq))

    def _unqueue(self, entry: _Entry) -> list[Event]:
        """Take the task out of whichever queue holds it. O(log n).

        Returns the change of a task that this one was in front of for a free
        concurrency key: it now waits for a worker instead (see ``discard``).
        """
        unblocked = self._queues.discard(entry.spec.id, entry.spec.concurrency_key)
        if unblocked is None:
            return []
        return [TaskChanged(self._snapshot(self._tasks[unblocked]))]

    def _snapshot(self, entry: _Entry) -> TaskSnapshot:
        if entry.terminal is not None:  # a finished task waits for nothing
            return entry.snapshot(None)
        waiting = self._queues.waiting_reason(entry.spec.id, entry.spec.concurrency_key)
        return entry.snapshot(waiting)


# What a dispatch changes in an entry, to restore it (``Engine.withdraw``).
_UNDO_NAMES = (
    "attempt",
    "slot_kind",
    "slot_at",
    "slot_scheduled",
    "slot_attempt",
    "seq",
    "deferred_at",
)
_undo_fields: Callable[[_Entry], tuple[object, ...]] = attrgetter(*_UNDO_NAMES)


_TERMINAL_STATES = frozenset(state for state in TaskState if state.is_terminal)

_TERMINAL_FOR = {
    RunOutcome.SUCCEEDED: TaskState.SUCCEEDED,
    RunOutcome.FAILED: TaskState.EXHAUSTED,
    RunOutcome.TIMED_OUT: TaskState.EXHAUSTED,
    RunOutcome.INTERRUPTED: TaskState.EXHAUSTED,
    RunOutcome.CANCELLED: TaskState.CANCELLED,
    RunOutcome.MISSED: TaskState.MISSED,
}
