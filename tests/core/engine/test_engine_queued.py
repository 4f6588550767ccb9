"""Runs dispatched beyond the free workers (``Engine.due``'s ``queue``): they wait in
the pool for a worker, and their tasks show as waiting for one until they start."""

from __future__ import annotations

from taskgui.core.engine.engine import Engine
from taskgui.core.events import Event, RunDispatched, TaskChanged
from taskgui.core.states import RunOutcome, TaskState, WaitReason
from tests.helpers.factories import at, make_spec


def _dispatched(events: list[Event]) -> list[RunDispatched]:
    return [event for event in events if isinstance(event, RunDispatched)]


def _engine_with(*priorities: int) -> Engine:
    engine = Engine()
    for task_id, priority in enumerate(priorities, start=1):
        engine.add(make_spec(task_id, first_run_at=at(0), priority=priority))
    return engine


def test_the_runs_beyond_the_free_workers_are_queued_in_priority_order() -> None:
    engine = _engine_with(1, 5, 3, 9)
    runs = _dispatched(engine.due(at(1), free_workers=1, queue=2))
    assert [(event.run.task_id, event.queued) for event in runs] == [
        (4, False),  # priority 9: the free worker
        (2, True),
        (3, True),
    ]
    assert engine.snapshot(1).status.waiting is WaitReason.WORKER  # not dispatched


def test_a_task_whose_run_is_queued_shows_as_waiting_until_it_starts() -> None:
    engine = _engine_with(0, 0)
    free, queued = _dispatched(engine.due(at(1), free_workers=1, queue=1))
    assert engine.snapshot(free.run.task_id).state is TaskState.RUNNING
    status = engine.snapshot(queued.run.task_id).status
    assert (status.state, status.waiting, status.running) == (
        TaskState.PENDING,
        WaitReason.WORKER,
        0,
    )

    [changed] = engine.started(queued.run.run_id, at(2))
    assert isinstance(changed, TaskChanged)
    assert changed.task.state is TaskState.RUNNING
    assert changed.task.status.running == 1


def test_a_queued_run_taken_back_leaves_its_task_due_as_before() -> None:
    engine = _engine_with(0)
    [queued] = _dispatched(engine.due(at(1), free_workers=0, queue=1))
    assert queued.queued and engine.withdrawable(queued.run.run_id)
    engine.withdraw(queued.run.run_id)
    assert engine.running_runs == {}
    [again] = _dispatched(engine.due(at(2), free_workers=1))
    assert again.run.task_id == queued.run.task_id and not again.queued
    assert engine.snapshot(again.run.task_id).state is TaskState.RUNNING


def test_a_queued_run_that_ends_without_starting_ends_as_any_run() -> None:
    engine = _engine_with(0)
    [queued] = _dispatched(engine.due(at(1), free_workers=0, queue=1))
    engine.finished(queued.run.run_id, RunOutcome.FAILED, at(2))
    assert engine.snapshot(queued.run.task_id).state is TaskState.EXHAUSTED
