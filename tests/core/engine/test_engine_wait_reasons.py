"""What a waiting task says it waits for is always what holds it up.

Views know a task only from the snapshots in the engine's events (``TaskAdded``,
``TaskChanged``). A state machine drives the engine through adds, time, dispatches,
starts, finishes, pauses, edits of the concurrency key, cancels, deletes, manual runs
and restarts. After every step, for each task, the snapshot last reported must be the
engine's current one, and its wait reason must be true of the engine's structure:

- ``worker``: due and held up by workers only: right after ``due`` no worker is free;
- ``concurrency_key``: a run holding its key is going, or the task first in line for
  the key is ready and waits for a worker;
- ``previous_run``: its own previous run is going;
- paused: no wait reason (it waits for a person);
- due and not running: waiting for something, never for nothing.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from taskgui.core.engine.engine import Engine
from taskgui.core.errors import InvalidStateError
from taskgui.core.events import Event, RunDispatched, TaskAdded, TaskChanged, TaskRemoved
from taskgui.core.recurrence import Every, Once
from taskgui.core.states import OverlapPolicy, RunOutcome, SlotKind, TaskState, WaitReason
from taskgui.core.status import RunId, RunTicket, TaskSnapshot
from taskgui.core.task import TaskId
from tests.helpers.factories import at, fixed_retry, make_spec

KEYS = st.sampled_from([None, "a", "b"])
LONG_GRACE = timedelta(days=1)  # misfires have tests of their own; here they add noise


class WaitReasonsAreTrue(RuleBasedStateMachine):
    time_queue = "heap"  # the wheel runs the same machine below

    @initialize(workers=st.integers(1, 3))
    def start(self, workers: int) -> None:
        self.engine = Engine(time_queue=self.time_queue)
        self.workers = workers
        self.now = 0.0
        self.ids = itertools.count(1)
        self.running: dict[RunId, RunTicket] = {}
        self.run_keys: dict[RunId, str | None] = {}
        self.reported: dict[TaskId, TaskSnapshot] = {}
        self.free_after_due: int | None = None  # set only right after a due step

    # ----------------------------------------------------------- plumbing

    def take(self, events: list[Event], *, after_due: int | None = None) -> None:
        self.free_after_due = after_due
        for event in events:
            if isinstance(event, TaskAdded | TaskChanged):
                self.reported[event.task.id] = event.task
            elif isinstance(event, TaskRemoved):
                self.reported.pop(event.task_id, None)
            elif isinstance(event, RunDispatched):
                ticket = event.run
                self.running[ticket.run_id] = ticket
                spec = self.engine.snapshot(ticket.task_id).spec
                self.run_keys[ticket.run_id] = spec.concurrency_key

    def try_take(self, call: Callable[[], list[Event]]) -> None:
        try:
            events = call()
        except InvalidStateError:
            self.free_after_due = None
            return
        self.take(events)

    def pick(self, data: st.DataObject) -> TaskId:
        return data.draw(st.sampled_from(sorted(self.reported)))

    # -------------------------------------------------------------- rules

    @rule(
        key=KEYS,
        priority=st.integers(-1, 1),
        overlap=st.sampled_from(list(OverlapPolicy)),
        every=st.sampled_from([None, 10.0, 30.0]),
        offset=st.integers(0, 20),
        retries=st.booleans(),
    )
    def add(
        self,
        *,
        key: str | None,
        priority: int,
        overlap: OverlapPolicy,
        every: float | None,
        offset: int,
        retries: bool,
    ) -> None:
        spec = make_spec(
            next(self.ids),
            first_run_at=at(self.now + offset),
            recurrence=Once() if every is None else Every(timedelta(seconds=every)),
            concurrency_key=key,
            priority=priority,
            overlap=overlap,
            misfire_grace=LONG_GRACE,
            retry=fixed_retry(2, delay=5) if retries else make_spec().retry,
        )
        self.take(self.engine.add(spec))

    @rule(seconds=st.sampled_from([1.0, 5.0, 15.0]))
    def time_passes(self, seconds: float) -> None:
        self.now += seconds
        self.free_after_due = None

    @rule()
    def due(self) -> None:
        """As the service does: again while a deadline has passed (a dispatch can queue
        a task's next run in the past)."""
        for _ in range(100):
            free = self.workers - len(self.running)
            events = self.engine.due(at(self.now), free)
            started = sum(isinstance(event, RunDispatched) for event in events)
            self.take(events, after_due=free - started)
            deadline = self.engine.next_deadline()
            if deadline is None or deadline > at(self.now):
                return
        raise AssertionError("due() keeps finding work at the same moment")

    @precondition(lambda self: bool(self.running))
    @rule(data=st.data())
    def started(self, data: st.DataObject) -> None:
        run_id = data.draw(st.sampled_from(sorted(self.running)))
        self.take(self.engine.started(run_id, at(self.now)))

    @precondition(lambda self: bool(self.running))
    @rule(data=st.data(), ok=st.booleans())
    def finish(self, data: st.DataObject, ok: bool) -> None:
        run_id = data.draw(st.sampled_from(sorted(self.running)))
        del self.running[run_id]
        del self.run_keys[run_id]
        outcome = RunOutcome.SUCCEEDED if ok else RunOutcome.FAILED
        self.take(self.engine.finished(run_id, outcome, at(self.now)))

    @precondition(lambda self: bool(self.reported))
    @rule(data=st.data(), verb=st.sampled_from(["pause", "resume", "cancel", "remove"]))
    def person(self, data: st.DataObject, verb: str) -> None:
        task_id = self.pick(data)
        method = getattr(self.engine, verb)
        self.try_take(lambda: method(task_id))

    @precondition(lambda self: bool(self.reported))
    @rule(data=st.data(), verb=st.sampled_from(["run_now", "retry_now"]))
    def asks_for_a_run(self, data: st.DataObject, verb: str) -> None:
        task_id = self.pick(data)
        method = getattr(self.engine, verb)
        self.try_take(lambda: method(task_id, at(self.now)))

    @precondition(lambda self: bool(self.reported))
    @rule(data=st.data(), key=KEYS, priority=st.integers(-1, 1))
    def edit(self, data: st.DataObject, key: str | None, priority: int) -> None:
        task_id = self.pick(data)
        spec = replace(self.engine.snapshot(task_id).spec, concurrency_key=key, priority=priority)
        self.take(self.engine.update(spec, at(self.now)))

    @precondition(lambda self: not self.running)
    @rule()
    def restart(self) -> None:
        stored = list(self.engine.snapshots())
        self.engine = Engine(time_queue=self.time_queue)
        self.engine.load(stored, at(self.now))
        # A view starts from the snapshots, then follows the events.
        self.reported = {snapshot.id: snapshot for snapshot in self.engine.snapshots()}
        self.free_after_due = None

    # --------------------------------------------------------- invariants

    @invariant()
    def what_was_reported_is_current(self) -> None:
        for task_id, reported in self.reported.items():
            current = self.engine.snapshot(task_id)
            assert reported.status == current.status, (task_id, reported.status, current.status)

    @invariant()
    def each_wait_reason_is_true(self) -> None:
        held = {key for key in self.run_keys.values() if key is not None}
        reserved = {
            snapshot.spec.concurrency_key
            for snapshot in self.reported.values()
            if snapshot.status.waiting is WaitReason.WORKER
        }
        running_tasks = {ticket.task_id for ticket in self.running.values()}
        for task_id, snapshot in self.reported.items():
            waiting = snapshot.status.waiting
            if waiting is WaitReason.WORKER:
                assert not self.free_after_due, f"task {task_id} waits for a worker; one is free"
            elif waiting is WaitReason.CONCURRENCY_KEY:
                key = snapshot.spec.concurrency_key
                assert key in held or key in reserved, f"task {task_id} waits for free key {key}"
            elif waiting is WaitReason.PREVIOUS_RUN:
                assert task_id in running_tasks, f"task {task_id} waits for no run"
            if snapshot.state is TaskState.PAUSED:
                assert waiting is None, f"paused task {task_id} says it waits for {waiting}"

    @invariant()
    def a_due_task_waits_for_something(self) -> None:
        if self.free_after_due is None:
            return
        for task_id, snapshot in self.reported.items():
            status = snapshot.status
            if snapshot.spec.paused and status.slot_kind is not SlotKind.MANUAL:
                continue  # waits for a person (it may still be running)
            due = status.next_run_at is not None and status.next_run_at <= at(self.now)
            if due and status.state in (TaskState.PENDING, TaskState.RETRYING, TaskState.RUNNING):
                assert status.waiting is not None, f"task {task_id} is due and waits for nothing"


WaitReasonsAreTrue.TestCase.settings = settings(
    max_examples=200, stateful_step_count=50, deadline=None
)
TestWaitReasonsAreTrue = WaitReasonsAreTrue.TestCase


class WaitReasonsAreTrueOnTheWheel(WaitReasonsAreTrue):
    time_queue = "wheel"


WaitReasonsAreTrueOnTheWheel.TestCase.settings = WaitReasonsAreTrue.TestCase.settings
TestWaitReasonsAreTrueOnTheWheel = WaitReasonsAreTrueOnTheWheel.TestCase
