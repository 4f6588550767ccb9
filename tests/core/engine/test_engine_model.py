"""The engine against a naive model: a plain list, scanned and sorted on every call.

For any sequence of add / cancel / reschedule / time passing / due / finish, the engine
(two indexed heaps) must dispatch the same runs in the same order as the model, whose
correctness is obvious because it does the simplest thing.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import timedelta

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from taskgui.core.engine.engine import Engine
from taskgui.core.errors import InvalidStateError
from taskgui.core.events import RunDispatched
from taskgui.core.states import RunOutcome, TaskState
from tests.helpers.deferred import DictSource, deferred
from tests.helpers.factories import T0, fixed_retry, make_spec

RETRY_DELAY = 5.0
MAX_ATTEMPTS = 3
NO_MISFIRE = timedelta(days=3650)


@dataclass
class ModelTask:
    run_at: float
    priority: int
    seq: int
    state: TaskState = TaskState.PENDING
    attempt: int = 0


class EngineMatchesNaiveModel(RuleBasedStateMachine):
    time_queue = "heap"  # the wheel runs the same machine below

    @initialize(workers=st.integers(min_value=1, max_value=3))
    def start(self, workers: int) -> None:
        self.engine = Engine(time_queue=self.time_queue)
        self.workers = workers
        self.now = 0.0
        self.ids = itertools.count(1)
        self.seq = itertools.count(1)
        self.model: dict[int, ModelTask] = {}
        self.running: dict[int, int] = {}  # run id -> task id
        self.source = DictSource([])

    # -------------------------------------------------------------- rules

    @rule(priority=st.integers(-3, 3), offset=st.integers(0, 60))
    def add(self, priority: int, offset: int) -> None:
        task_id = next(self.ids)
        run_at = self.now + offset
        self.engine.add(
            make_spec(
                task_id,
                priority=priority,
                first_run_at=T0 + timedelta(seconds=run_at),
                retry=fixed_retry(MAX_ATTEMPTS, RETRY_DELAY),
                misfire_grace=NO_MISFIRE,
            )
        )
        self.model[task_id] = ModelTask(run_at, priority, next(self.seq))

    @precondition(lambda self: bool(self.model))
    @rule(data=st.data())
    def cancel(self, data: st.DataObject) -> None:
        task_id = data.draw(st.sampled_from(sorted(self.model)))
        task = self.model[task_id]
        if task.state.is_terminal and task.state is not TaskState.CANCELLED:
            try:
                self.engine.cancel(task_id)
            except InvalidStateError:
                return
            raise AssertionError("cancelling a finished task must be refused")
        self.engine.cancel(task_id)
        task.state = TaskState.CANCELLED

    @precondition(lambda self: bool(self.model))
    @rule(data=st.data(), offset=st.integers(0, 60))
    def reschedule(self, data: st.DataObject, offset: int) -> None:
        task_id = data.draw(st.sampled_from(sorted(self.model)))
        task = self.model[task_id]
        at = T0 + timedelta(seconds=self.now + offset)
        if task.state in (TaskState.PENDING, TaskState.RETRYING):
            self.engine.reschedule(task_id, at)
            task.run_at = self.now + offset
            task.seq = next(self.seq)
            task.state = TaskState.PENDING
            task.attempt = 0
            return
        try:
            self.engine.reschedule(task_id, at)
        except InvalidStateError:
            return
        raise AssertionError(f"rescheduling a {task.state} task must be refused")

    @precondition(lambda self: not self.running)
    @rule(data=st.data())
    def restart(self, data: st.DataObject) -> None:
        """Reload from the engine's own state, some tasks whole and the rest deferred
        (known by id and run time, fetched on first use): nothing may change."""
        stored = list(self.engine.snapshots())
        whole_ids = data.draw(
            st.sets(st.sampled_from([s.id for s in stored])) if stored else st.just(set())
        )
        whole = [s for s in stored if s.id in whole_ids]
        rest = [s for s in stored if s.id not in whole_ids]
        self.source = DictSource(rest)
        self.engine = Engine(time_queue=self.time_queue)
        self.engine.load(whole, T0 + timedelta(seconds=self.now), deferred(rest, self.source))
        # The reload numbers queued tasks afresh: whole ones first, then deferred by id.
        for snapshot in [*whole, *sorted(rest, key=lambda s: s.id)]:
            self.model[snapshot.id].seq = next(self.seq)

    @rule(data=st.data())
    def give_back(self, data: st.DataObject) -> None:
        """What a daemon does once the ends of runs are committed: the tasks that ran
        and are idle go back to id and run time (after a restart gave it a store to
        read them from again): nothing may change. Either those whose runs ended, or
        every idle task (what it does with the first, it must be able to do with any)."""
        loaded = list(self.engine.snapshots(load_deferred=False))
        self.source.store(loaded)
        among = None if data.draw(st.booleans()) else [s.id for s in loaded]
        self.engine.give_back_idle(T0 + timedelta(seconds=self.now), among)

    @rule(seconds=st.sampled_from([0.5, 1.0, 5.0, 20.0]))
    def time_passes(self, seconds: float) -> None:
        self.now += seconds

    @rule()
    def due(self) -> None:
        free = self.workers - len(self.running)
        events = self.engine.due(T0 + timedelta(seconds=self.now), free)
        got = [(e.run.task_id, e.run.attempt) for e in events if isinstance(e, RunDispatched)]
        candidates = sorted(
            (
                (-task.priority, task.run_at, task.seq, task_id)
                for task_id, task in self.model.items()
                if task.state in (TaskState.PENDING, TaskState.RETRYING) and task.run_at <= self.now
            ),
        )[: max(free, 0)]
        expected = []
        for *_, task_id in candidates:
            task = self.model[task_id]
            task.state = TaskState.RUNNING
            task.attempt += 1
            expected.append((task_id, task.attempt))
        assert got == expected
        runs = [e.run for e in events if isinstance(e, RunDispatched)]
        self.running.update({run.run_id: run.task_id for run in runs})

    @precondition(lambda self: bool(self.running))
    @rule(data=st.data(), ok=st.booleans())
    def finish(self, data: st.DataObject, ok: bool) -> None:
        run_id = data.draw(st.sampled_from(sorted(self.running)))
        task_id = self.running.pop(run_id)
        outcome = RunOutcome.SUCCEEDED if ok else RunOutcome.FAILED
        self.engine.finished(run_id, outcome, T0 + timedelta(seconds=self.now))
        task = self.model[task_id]
        if task.state is TaskState.CANCELLED:
            return
        if ok:
            task.state = TaskState.SUCCEEDED
        elif task.attempt < MAX_ATTEMPTS:
            task.state = TaskState.RETRYING
            task.run_at = self.now + RETRY_DELAY
            task.seq = next(self.seq)
        else:
            task.state = TaskState.EXHAUSTED

    # --------------------------------------------------------- invariants

    @invariant()
    def states_agree(self) -> None:
        # Deferred tasks not yet fetched are checked once something fetches them:
        # asking for their state here would load them all and test nothing lazy.
        deferred = (
            set(self.model) - set(self.source.fetched) if self.engine.deferred_count else set()
        )
        for task_id, task in self.model.items():
            if task_id not in deferred:
                assert self.engine.snapshot(task_id).state is task.state, task_id
        assert len(self.engine) == len(self.model)

    @invariant()
    def next_deadline_is_the_earliest_queued_run(self) -> None:
        queued = [
            task.run_at
            for task in self.model.values()
            if task.state in (TaskState.PENDING, TaskState.RETRYING) and task.run_at > self.now
        ]
        deadline = self.engine.next_deadline()
        if not queued:
            # Tasks already due may still sit in the time heap until the next due().
            assert deadline is None or deadline <= T0 + timedelta(seconds=self.now)
        else:
            assert deadline is not None
            assert deadline <= T0 + timedelta(seconds=min(queued))


EngineMatchesNaiveModel.TestCase.settings = settings(
    max_examples=150, stateful_step_count=60, deadline=None
)
TestEngineMatchesNaiveModel = EngineMatchesNaiveModel.TestCase


class EngineMatchesNaiveModelOnTheWheel(EngineMatchesNaiveModel):
    time_queue = "wheel"


EngineMatchesNaiveModelOnTheWheel.TestCase.settings = EngineMatchesNaiveModel.TestCase.settings
TestEngineMatchesNaiveModelOnTheWheel = EngineMatchesNaiveModelOnTheWheel.TestCase
