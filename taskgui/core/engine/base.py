"""The engine's state and the small moves every operation makes on it.

``Engine`` is split by what its methods do, not by what they touch: this base holds
the tables and queues and the helpers (queue, unqueue, snapshot, release a key) that
both the changes a person makes (``engine``) and dispatching (``dispatch``) use.
"""

from __future__ import annotations

import itertools
import random
from datetime import datetime

from taskgui.core.conditions import SystemConditions
from taskgui.core.dependencies import Dependencies
from taskgui.core.engine.back_to_back import BackToBack
from taskgui.core.engine.deferred import TaskTable
from taskgui.core.engine.entry import TaskEntry
from taskgui.core.engine.heap import IndexedHeap
from taskgui.core.engine.queues import DispatchQueues
from taskgui.core.engine.time_queue import new_time_queue, resolve
from taskgui.core.engine.withdraw import WithdrawRecords
from taskgui.core.errors import TaskNotFoundError, UnreadableTaskError
from taskgui.core.events import Event, TaskChanged, TaskDropped
from taskgui.core.states import SlotKind, TaskState, WaitReason
from taskgui.core.status import RunId, RunTicket, TaskSnapshot
from taskgui.core.task import TaskId

DEFAULT_RUN_ALL_LIMIT = 100


class EngineBase:
    """The engine's state; see ``taskgui.core.engine.engine.Engine``."""

    def __init__(
        self,
        *,
        rng: random.Random | None = None,
        run_all_limit: int = DEFAULT_RUN_ALL_LIMIT,
        time_queue: str | None = None,
    ) -> None:
        """``time_queue`` names the structure of tasks not yet due (see
        ``taskgui.core.engine.time_queue``); None takes the default, and ``"auto"``
        picks again by size at every ``load``."""
        if run_all_limit < 1:
            raise ValueError("run_all_limit must be at least 1")
        self._rng = rng or random.Random()
        self._run_all_limit = run_all_limit
        self._tasks = TaskTable(self._on_deferred_loaded)
        self._time_queue_name = time_queue
        self._time_queue_kind = resolve(time_queue, 0)
        self._queues = DispatchQueues(new_time_queue(self._time_queue_kind))
        self._time = self._queues.time
        self._ready = self._queues.ready
        self._runs: dict[RunId, RunTicket] = {}
        self._withdraw = WithdrawRecords()
        # Runs dispatched beyond the free workers (``due``'s ``queue``) whose start has
        # not been heard of: a task whose every run is one shows as waiting for a worker.
        self._queued: set[RunId] = set()
        # The concurrency key each run holds: the one it took, whatever the task's
        # definition says by the time the run ends (a person may edit the key).
        self._run_keys: dict[RunId, str] = {}
        # Where each chain of runs waiting one behind the other began (overlap queue).
        self._back_to_back = BackToBack()
        # Tasks whose run ended since the last ``give_back_idle`` (engine/give_back.py).
        self._ended: set[TaskId] = set()
        # Tasks paused for a while, by when they resume by themselves. Only a task
        # whose spec has a ``paused_until`` is here (``_follow_pause`` sees to it on
        # every change of the spec): cancel and remove look here only for those.
        self._resumes: IndexedHeap[TaskId, float] = IndexedHeap()
        # Catch-ups held after a wake-up for a person's answer (engine/wake.py).
        self._held: dict[TaskId, None] = {}
        # Runs asked to stop because a run condition ended, with the condition's words
        # ("on battery"): they end as stopped, and run again when it holds.
        self._stopping_for: dict[RunId, str] = {}
        # What the machine last reported for run conditions; None until it has.
        self._system: SystemConditions | None = None
        # Tasks read from the store with their spread drawn just then (added while no
        # scheduler ran): their start is reported by the next ``_drawn_on_read``.
        self._spread_on_read: list[TaskId] = []
        # Who runs after whom, indexed by upstream (see ``triggers``).
        self._deps = Dependencies()
        self._seq = itertools.count(1)
        self._run_ids = itertools.count(1)
        # After a load that carried runs on (a shared schedule's new leader): the
        # caller's name for each such run -> its run id here.
        self.carried_ids: dict[int, RunId] = {}

    @property
    def time_queue_kind(self) -> str:
        """Which time queue holds the tasks not yet due: ``"heap"`` or ``"wheel"``."""
        return self._time_queue_kind

    def _choose_time_queue(self, size: int) -> None:
        """Switch to the queue the name stands for at ``size`` (an empty one: called
        before a load fills it)."""
        kind = resolve(self._time_queue_name, size)
        if kind != self._time_queue_kind:
            self._time_queue_kind = kind
            self._time = self._queues.time = new_time_queue(kind)

    def _on_deferred_loaded(self, entry: TaskEntry) -> None:
        """Queue a task just read from the store. A cold one is in no queue until
        then; a returned one kept its time-queue key, which gives it its seq back.
        (The store's run time came from raw columns: the decoded task decides.)"""
        task_id = entry.spec.id
        self._follow_pause(entry)
        if entry.spec.after:  # the store loads these whole; a hand-edited row may not be
            self._deps.set(task_id, entry.spec.after)
        kept = self._time.key_of(task_id) if task_id in self._time else None
        if kept is not None:
            entry.seq = kept[1]
        if not self._should_queue(entry):
            if kept is not None:
                self._time.discard(task_id)
            return
        assert entry.slot_at is not None
        if entry.spec.spread is not None and unspread(entry):
            # Added while no scheduler ran: the store wrote its first start without
            # the spread. A full load draws it (``Engine.load``); so does this read,
            # and the change is among the events of the call that read it (``due``'s
            # are committed; a read ahead's are published, and the dispatch commits
            # the start). SQLite reads such rows whole at the start, so this is for
            # a row it could not tell (see ``store/sqlite/deferred_source.py``).
            self._set_occurrence(entry, entry.slot_at)
            self._spread_on_read.append(task_id)
        key = (entry.slot_at.timestamp(), entry.seq)
        if kept is None:
            self._time.push(task_id, key)
        elif kept != key:
            self._time.update(task_id, key)

    def _drawn_on_read(self) -> list[Event]:
        """The changes of the tasks whose spread was drawn as they were read."""
        drawn, self._spread_on_read = self._spread_on_read, []
        tasks = self._tasks
        return [TaskChanged(self._snapshot(tasks[t])) for t in drawn if t in tasks]

    def _follow_pause(self, entry: TaskEntry) -> None:
        """Keep the resume heap in step with the task's pause (for a while, or not)."""
        task_id, until = entry.spec.id, entry.spec.paused_until
        if until is None or entry.terminal is not None:
            self._resumes.discard(task_id)
        elif task_id in self._resumes:
            self._resumes.update(task_id, until.timestamp())
        else:
            self._resumes.push(task_id, until.timestamp())

    def _drop(self, error: UnreadableTaskError) -> TaskDropped:
        self._tasks.drop_deferred(error.task_id)
        self._time.discard(error.task_id)
        return TaskDropped(error.task_id, error.reason)

    def _release_key(self, run_id: RunId, events: list[Event]) -> None:
        """Free the key the run took; a task waiting for it now waits for a worker."""
        key = self._run_keys.pop(run_id, None)
        if key is None:
            return
        unblocked = self._queues.release_key(key)
        if unblocked is not None:
            events.append(TaskChanged(self._snapshot(self._tasks[unblocked])))

    def _entry(self, task_id: TaskId) -> TaskEntry:
        try:
            return self._tasks[task_id]
        except KeyError:
            raise TaskNotFoundError(task_id) from None

    @staticmethod
    def _should_queue(entry: TaskEntry) -> bool:
        return (
            entry.slot_at is not None
            and entry.terminal is None
            and (not entry.spec.paused or entry.slot_kind is SlotKind.MANUAL)
        )

    def _set_occurrence(self, entry: TaskEntry, occurrence: datetime) -> None:
        """Give the task its next scheduled occurrence, started late by its spread.

        The slot remembers the occurrence itself (``slot_scheduled``): the next one is
        computed from it, so a spread never drifts the schedule.
        """
        spread = entry.spec.spread
        start = occurrence
        if spread is not None:
            try:
                start = occurrence + spread.offset(entry.spec.id, self._rng.random)
            except OverflowError:  # an occurrence at the very end of the calendar
                start = occurrence
        entry.set_slot(SlotKind.OCCURRENCE, start, scheduled=occurrence)

    def _queue(self, entry: TaskEntry) -> None:
        """Put the task's slot in the time queue, if it has one and may run."""
        if self._should_queue(entry):
            assert entry.slot_at is not None
            entry.seq = next(self._seq)
            self._time.push(entry.spec.id, (entry.slot_at.timestamp(), entry.seq))

    def _unqueue(self, entry: TaskEntry) -> list[Event]:
        """Take the task out of whichever queue holds it. O(log n).

        Returns the change of a task that this one was in front of for a free
        concurrency key: it now waits for a worker instead (see ``discard``).
        """
        if self._held:  # a person's change takes it out of a wake-up's hold
            self._held.pop(entry.spec.id, None)
        self._back_to_back.left(entry.spec.id)
        unblocked = self._queues.discard(entry.spec.id, entry.spec.concurrency_key)
        if unblocked is None:
            return []
        return [TaskChanged(self._snapshot(self._tasks[unblocked]))]

    def _forget_everything(self) -> None:
        """Empty every structure (before ``Engine.load`` fills them again)."""
        self._tasks.clear()
        self._queues.clear()
        self._resumes.clear()
        self._held.clear()
        self._runs.clear()
        self._withdraw.clear()
        self._queued.clear()
        self._run_keys.clear()
        self._back_to_back.clear()
        self._ended.clear()
        self._spread_on_read.clear()
        self._deps = type(self._deps)()

    def _snapshot(self, entry: TaskEntry) -> TaskSnapshot:
        spec = entry.spec
        marks = self._deps.satisfied(spec.id) if spec.after else _NO_MARKS
        if entry.terminal is not None:  # a finished task waits for nothing
            return entry.snapshot(None, marks)
        waiting = self._queues.waiting_reason(spec.id, spec.concurrency_key)
        if waiting is None and self._held and spec.id in self._held:
            waiting = WaitReason.WAKE_ANSWER
        if waiting is None and spec.after and entry.slot_kind is None and not entry.runs:
            waiting = WaitReason.UPSTREAM  # nothing queued: the next run is a trigger
        if entry.runs and self._queued and self._queued.issuperset(entry.runs):
            # Its runs wait in the pool for a worker: not running yet, whatever the
            # entry's bookkeeping says (a window must not show them as running).
            snapshot = entry.snapshot(WaitReason.WORKER, marks)
            status = snapshot.status._replace(state=TaskState.PENDING, running=0)
            return snapshot._replace(status=status)
        return entry.snapshot(waiting, marks)


_NO_MARKS: frozenset[TaskId] = frozenset()


def unspread(entry: TaskEntry) -> bool:
    """A pending occurrence whose start is its occurrence time: no spread drawn yet."""
    return (
        entry.slot_kind is SlotKind.OCCURRENCE
        and entry.slot_at is not None
        and entry.slot_at == entry.slot_scheduled
    )
