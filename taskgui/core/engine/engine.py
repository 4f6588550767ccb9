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

This module holds the queries and the changes a person (or a store load) makes; the
dispatch half is ``dispatch``, the policies are pure functions in ``policies``, the
withdraw record is ``withdraw``, and the shared state and helpers are ``base``.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from taskgui.core.engine import policies
from taskgui.core.engine.base import DEFAULT_RUN_ALL_LIMIT, unspread
from taskgui.core.engine.carry_on import CarriedRun
from taskgui.core.engine.deferred import DeferredTasks
from taskgui.core.engine.entry import TaskEntry as _Entry
from taskgui.core.engine.give_back import GivingBack
from taskgui.core.engine.queues import TimeKey
from taskgui.core.engine.run_by_hand import due_occurrence
from taskgui.core.errors import InvalidStateError, InvalidTaskError
from taskgui.core.events import (
    Event,
    RunCancelRequested,
    TaskAdded,
    TaskChanged,
    TaskRemoved,
)
from taskgui.core.states import RunOutcome, SlotKind, TaskState
from taskgui.core.status import RunId, RunTicket, TaskSnapshot
from taskgui.core.task import TaskId, TaskSpec
from taskgui.core.task_rules import (
    cancel_refusal,
    pause_refusal,
    resume_refusal,
    retry_refusal,
    run_now_refusal,
)

__all__ = ["DEFAULT_RUN_ALL_LIMIT", "CarriedRun", "Engine"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class Engine(GivingBack):
    """Decides what runs when. See the module docstring for the design."""

    # ----------------------------------------------------------------- queries

    def __len__(self) -> int:
        return self._tasks.total()

    def __contains__(self, task_id: object) -> bool:
        return self._tasks.knows(task_id)

    def snapshot(self, task_id: TaskId) -> TaskSnapshot:
        return self._snapshot(self._entry(task_id))

    def spec(self, task_id: TaskId) -> TaskSpec:
        """The task's definition alone: no snapshot made (a run's hand-over needs only
        this, for every run)."""
        return self._entry(task_id).spec

    def snapshots(self, *, load_deferred: bool = True) -> Iterator[TaskSnapshot]:
        """Every task: deferred ones are loaded first (call ``hydrate`` before to learn
        of any that cannot be read). With ``load_deferred=False``, loaded ones only."""
        if load_deferred:
            self.hydrate()
        return (self._snapshot(entry) for entry in self._tasks.values())

    def next_deadline(self) -> datetime | None:
        """When the earliest queued task becomes due, or a task waiting for its run
        conditions gives up; None when nothing is queued."""
        give_up_ts = self._queues.conditions.next_give_up()
        if self._resumes:
            resume_ts = self._resumes.peek()[1]
            give_up_ts = resume_ts if give_up_ts is None else min(give_up_ts, resume_ts)
        give_up = None if give_up_ts is None else _EPOCH + timedelta(seconds=give_up_ts)
        due: datetime | None = None
        if self._time:
            task_id, _ = self._time.peek()
            entry = self._tasks.get(task_id)
            if entry is not None:
                due = entry.slot_at
            else:  # given back after a run: known from its key, no need to read it
                at_us = self._tasks.returned_run_at_us(task_id)
                due = None if at_us is None else _EPOCH + timedelta(microseconds=at_us)
        cold_us = self._tasks.next_cold_us()
        if cold_us is not None:  # known from the arrays alone: no need to read the task
            cold = _EPOCH + timedelta(microseconds=cold_us)
            due = cold if due is None else min(due, cold)
        if due is None:
            return give_up
        if give_up is None or due <= give_up:
            return due
        return give_up

    @property
    def deferred_count(self) -> int:
        """How many tasks are known only by id and run time so far (see ``load``)."""
        return self._tasks.deferred_count

    def hydrate(self, limit: int | None = None) -> list[Event]:
        """Load up to ``limit`` deferred tasks (all when None).

        Returns a ``TaskDropped`` for each one that could not be read: the store set
        its row aside, and the engine forgets it.
        """
        events: list[Event] = [self._drop(e) for e in self._tasks.load_deferred(limit)]
        return events + self._drawn_on_read()

    def adopt(
        self, snapshots: Sequence[TaskSnapshot], unreadable: Iterable[TaskId] = ()
    ) -> tuple[list[Event], list[TaskSnapshot]]:
        """Take stored tasks read elsewhere (a window's start, on a thread of its own):
        each one still known by id and run time only becomes whole, as if read here;
        ``unreadable`` (rows that could not be decoded there) are read again here, to
        be reported and set aside. Returns a ``TaskDropped`` for each of those, and
        each task of the batch as the engine has it now (a task changed or read since
        is newer here than in the batch; one deleted since is left out)."""
        tasks = self._tasks
        tasks.adopt(snapshots)
        again = list(unreadable)
        events: list[Event] = [self._drop(error) for error in tasks.load_these(again)]
        events += self._drawn_on_read()
        ids = [snapshot.spec.id for snapshot in snapshots] + again
        known = (tasks.get(task_id) for task_id in ids)
        return events, [self._snapshot(entry) for entry in known if entry is not None]

    def next_cold_run(self) -> datetime | None:
        """When the earliest task known by id and run time only is due; None if none."""
        at_us = self._tasks.next_cold_us()
        return None if at_us is None else _EPOCH + timedelta(microseconds=at_us)

    def load_due_by(self, until: datetime, limit: int | None = None) -> list[Event]:
        """Read up to ``limit`` cold tasks due by ``until``, earliest first, so that
        none is read from disk at its deadline. Returns a ``TaskDropped`` for each one
        that could not be read (as ``hydrate``)."""
        until_ts = until.timestamp()
        errors = self._tasks.load_due(until_ts, limit)
        errors += self._load_returned_due(until_ts)  # few: those that ran meanwhile
        return [self._drop(error) for error in errors] + self._drawn_on_read()

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
        *,
        carried_on: Mapping[TaskId, Sequence[CarriedRun]] | None = None,
    ) -> list[Event]:
        """Replace the engine's contents with stored tasks, in O(n).

        Tasks stored as running were interrupted (the app stopped or crashed while
        they ran): each counts as a failed attempt with outcome ``interrupted`` and
        goes to its retry policy, so a crash loses at most the runs in flight and
        those are retried (at-least-once).

        ``deferred`` tasks are known by id and run time only and are fetched from
        their source when first needed (see ``taskgui.core.engine.deferred``): a cold start
        then builds the heaps without decoding every task.

        ``carried_on``: on a shared schedule, a new leader takes over tasks whose runs
        go on elsewhere (another node runs them, or will claim them): those runs are
        the engine's again, as if it had dispatched them, and their ends reach it with
        ``finished``; a carried run that already ended (``outcome``) meets its task's
        policy now, as that outcome, not as an interruption. ``carried_ids`` then maps
        each carried run's ``ref`` to the run id it has here.
        """
        self._forget_everything()
        events: list[Event] = []
        interrupted: list[_Entry] = []
        carried: list[_Entry] = []  # their runs go on elsewhere (see carried_on)
        spread: list[_Entry] = []
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
            if snapshot.spec.after:
                self._follow_upstreams(entry, snapshot.status.after_marks)
            if snapshot.spec.paused_until is not None:
                self._follow_pause(entry)
            if snapshot.status.state is TaskState.RUNNING:
                (carried if carried_on and task_id in carried_on else interrupted).append(entry)
            elif should_queue(entry):
                if entry.spec.spread is not None and unspread(entry):
                    # Added while no scheduler ran: the store wrote its first start
                    # without the spread, which is drawn now (and committed).
                    self._set_occurrence(entry, entry.slot_at)  # type: ignore[arg-type]
                    spread.append(entry)
                assert entry.slot_at is not None
                seq += 1
                entry.seq = seq
                time_items.append((task_id, (entry.slot_at.timestamp(), seq)))
        cold = 0
        if deferred is not None:
            seq = tasks.defer(deferred, seq + 1)
            cold = tasks.deferred_count
        self._seq = itertools.count(seq + 1)
        # Sized for the whole schedule: the cold tasks join the queue as they are read.
        self._choose_time_queue(len(time_items) + cold)
        self._time.heapify(time_items)
        events.extend(TaskChanged(self._snapshot(entry)) for entry in spread)
        self._carry_all_on(carried, carried_on or {}, now, events)
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
        if not spec.only_after:  # one that is waits for its upstream, with no slot
            self._set_occurrence(entry, spec.recurrence.first_at_or_after(spec.first_run_at))
        self._tasks[spec.id] = entry
        if spec.after or self._deps.upstreams(spec.id):
            self._follow_upstreams(entry)
        self._queue(entry)
        # New, so in no queue but the time queue and held by no wake-up: without
        # upstreams, ``_snapshot`` would find it waiting for nothing.
        snapshot = self._snapshot(entry) if spec.after else entry.snapshot(None)
        if spec.spread is None:
            return [TaskAdded(snapshot)]
        # The store wrote the unspread first occurrence with the task (initial_status);
        # the start the spread drew must be committed too, or a restart loses it.
        return [TaskAdded(snapshot), TaskChanged(snapshot)]

    def update(self, spec: TaskSpec, now: datetime) -> list[Event]:
        """Replace a task's definition, keeping its history and place where it can.

        A new first run time or recurrence re-plans the next run (and re-arms a
        finished one-off task); a new priority or key re-orders it in place.
        """
        entry = self._entry(spec.id)
        old = entry.spec
        reschedule = (
            spec.first_run_at != old.first_run_at
            or spec.recurrence != old.recurrence
            or spec.only_after != old.only_after
        ) and entry.terminal is not TaskState.CANCELLED
        behind = self._behind_runs(spec.id)  # before _unqueue forgets it
        unblocked = self._unqueue(entry)
        entry.spec = spec
        self._follow_pause(entry)
        self._follow_upstreams(entry)
        if reschedule:
            entry.terminal = None
            entry.deferred_at = None
            if not spec.only_after:
                self._set_occurrence(entry, policies.first_occurrence_from(spec, now))
            elif entry.slot_kind is SlotKind.OCCURRENCE:
                entry.clear_slot()  # no schedule of its own any more
        if reschedule or not self._wait_behind_runs_again(entry, behind):
            self._queue(entry)
        return [TaskChanged(self._snapshot(entry)), *unblocked]

    def remove(self, task_id: TaskId) -> list[Event]:
        """Forget a task; any run still going is asked to stop."""
        entry = self._entry(task_id)
        unblocked = self._unqueue(entry)
        self._resumes.discard(task_id)
        del self._tasks[task_id]
        events: list[Event] = [RunCancelRequested(ticket) for ticket in entry.runs.values()]
        events.append(TaskRemoved(task_id))
        self._forget_upstreams(task_id, events)
        return events + unblocked

    def cancel(self, task_id: TaskId) -> list[Event]:
        """Stop a task for good: unqueue it and stop any run in progress (no retry)."""
        entry = self._entry(task_id)
        terminal = entry.terminal
        if terminal is TaskState.CANCELLED:
            return []
        # Only a finished task is refused, and its state is then its terminal one:
        # the rule is asked only then, as the derived state costs more than the rest.
        if terminal is not None and (refusal := cancel_refusal(entry.spec, terminal)):
            raise InvalidStateError(refusal)
        unblocked = self._unqueue(entry)
        entry.clear_slot()
        entry.deferred_at = None
        entry.terminal = TaskState.CANCELLED
        if entry.spec.paused_until is not None:  # only such a task can be in the heap
            self._resumes.discard(task_id)
        events: list[Event] = (
            [RunCancelRequested(ticket) for ticket in entry.runs.values()] if entry.runs else []
        )
        events.append(TaskChanged(self._snapshot(entry)))
        return events + unblocked if unblocked else events

    def pause(self, task_id: TaskId, until: datetime | None = None) -> list[Event]:
        """Stop starting scheduled runs of a task; a run in progress finishes.

        ``until``: a pause for a while; the task resumes by itself then (``due``). A
        paused task paused again gets the new end (or none).
        """
        entry = self._entry(task_id)
        if entry.spec.paused:
            if until == entry.spec.paused_until:
                return []
            entry.spec = replace(entry.spec, paused_until=until)
            self._follow_pause(entry)
            return [TaskChanged(self._snapshot(entry))]
        if (refusal := pause_refusal(entry.spec, entry.state)) is not None:
            raise InvalidStateError(refusal)
        unblocked = self._unqueue(entry)
        entry.spec = replace(entry.spec, paused=True, paused_until=until)
        self._follow_pause(entry)
        self._queue(entry)  # a run a person asked for still runs (see run_now)
        return [TaskChanged(self._snapshot(entry)), *unblocked]

    def resume(self, task_id: TaskId) -> list[Event]:
        """Undo ``pause``. A run missed meanwhile meets the task's misfire policy."""
        entry = self._entry(task_id)
        if not entry.spec.paused:
            return []
        if (refusal := resume_refusal(entry.spec)) is not None:
            raise InvalidStateError(refusal)
        entry.spec = replace(entry.spec, paused=False, paused_until=None)
        self._resumes.discard(task_id)
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
        # Before it leaves its queue: whether it waits there is part of the answer.
        stands_for, missed = due_occurrence(entry, now, self._queues, self._run_all_limit)
        unblocked = self._unqueue(entry)
        if entry.slot_kind is SlotKind.OCCURRENCE:
            # Unspread; for a catch-up, the occurrence it stands for (those before it
            # are the missed ones): the schedule goes on from there.
            entry.deferred_at = stands_for or entry.slot_scheduled or entry.slot_at
        entry.terminal = None
        entry.set_slot(SlotKind.MANUAL, now, scheduled=stands_for)
        self._queue(entry)
        changed: list[Event] = [TaskChanged(self._snapshot(entry))]
        return [*([missed] if missed is not None else []), *changed, *unblocked]

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
                f"task {entry.spec.name!r} {entry.terminal.ended_as}; edit it to schedule again"
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
