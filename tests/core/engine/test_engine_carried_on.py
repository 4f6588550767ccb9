"""A shared schedule's new leader carries on the runs dispatched before it led
(``Engine.load``'s ``carried_on``): a run still going stays the engine's, holding its
key, and its end meets the task's policy; a run that already ended decides by its own
outcome, never as an interruption (which would retry a run that succeeded)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from taskgui.core.engine.engine import CarriedRun, Engine
from taskgui.core.events import RetryScheduled, RunDispatched, RunFinished
from taskgui.core.recurrence import Every
from taskgui.core.states import RunOutcome, SlotKind, TaskState
from taskgui.core.status import TaskSnapshot
from taskgui.core.task import TaskSpec
from tests.helpers.factories import T0, at, fixed_retry, make_spec


def _dispatched(specs: list[TaskSpec], now_s: float = 0) -> tuple[Engine, list[TaskSnapshot]]:
    engine = Engine()
    engine.load([], T0)
    for spec in specs:
        engine.add(spec)
    events = engine.due(at(now_s), 10)
    assert sum(isinstance(e, RunDispatched) for e in events) == len(specs)
    return engine, [engine.snapshot(spec.id) for spec in specs]


def test_a_run_going_elsewhere_is_carried_on_and_its_end_decides() -> None:
    spec = make_spec(1, recurrence=Every(timedelta(minutes=1)), retry=fixed_retry(3, 10))
    _, [stored] = _dispatched([spec])
    assert stored.status.state is TaskState.RUNNING
    leader = Engine()
    run = CarriedRun(ref=77, attempt=1, kind=SlotKind.OCCURRENCE, scheduled_at=T0,
                     dispatched_at=T0)  # fmt: skip
    leader.load([stored], at(5), carried_on={1: [run]})
    assert leader.snapshot(1).status.state is TaskState.RUNNING
    assert leader.due(at(5), 10) == []  # not dispatched again
    run_id = leader.carried_ids[77]
    leader.finished(run_id, RunOutcome.SUCCEEDED, at(6))
    after = leader.snapshot(1).status
    assert after.state is TaskState.PENDING and after.next_run_at == at(60)


def test_a_carried_run_that_already_succeeded_is_not_retried() -> None:
    spec = make_spec(1, retry=fixed_retry(3, 10))
    _, [stored] = _dispatched([spec])
    leader = Engine()
    ended = CarriedRun(ref=5, attempt=1, kind=SlotKind.OCCURRENCE, scheduled_at=T0,
                       dispatched_at=T0, outcome=RunOutcome.SUCCEEDED)  # fmt: skip
    leader.load([stored], at(5), carried_on={1: [ended]})
    assert leader.snapshot(1).status.state is TaskState.SUCCEEDED
    assert leader.due(at(100), 10) == []


def test_a_carried_run_holds_its_key() -> None:
    first = make_spec(1, concurrency_key="disk")
    _, [stored] = _dispatched([first])
    second = replace(make_spec(2, concurrency_key="disk"), first_run_at=at(1))
    leader = Engine()
    going = CarriedRun(ref=9, attempt=1, kind=SlotKind.OCCURRENCE, scheduled_at=T0,
                       dispatched_at=T0)  # fmt: skip
    leader.load([stored], at(2), carried_on={1: [going]})
    leader.add(second)
    assert not any(isinstance(e, RunDispatched) for e in leader.due(at(2), 10))
    events = leader.finished(leader.carried_ids[9], RunOutcome.SUCCEEDED, at(3))
    events += leader.due(at(3), 10)
    assert [e.run.task_id for e in events if isinstance(e, RunDispatched)] == [2]


def test_without_carried_runs_a_running_task_is_interrupted_as_before() -> None:
    spec = make_spec(1, retry=fixed_retry(3, 10))
    _, [stored] = _dispatched([spec])
    leader = Engine()
    leader.load([stored], at(5))
    assert leader.snapshot(1).status.state is TaskState.RETRYING


def test_a_carried_run_that_ended_unseen_is_told_as_finished_then_decided() -> None:
    spec = make_spec(1, retry=fixed_retry(3, 10))
    _, [stored] = _dispatched([spec])
    leader = Engine()
    ended = CarriedRun(ref=5, attempt=1, kind=SlotKind.OCCURRENCE, scheduled_at=T0,
                       dispatched_at=T0, outcome=RunOutcome.FAILED, finished_at=at(4))  # fmt: skip
    events = leader.load([stored], at(5), carried_on={1: [ended]})
    told = [e for e in events if isinstance(e, RunFinished | RetryScheduled)]
    assert [type(e) for e in told] == [RunFinished, RetryScheduled]  # as finished() tells it
    finished = told[0]
    assert isinstance(finished, RunFinished)
    assert (finished.run.task_id, finished.run.attempt, finished.outcome) == (
        1, 1, RunOutcome.FAILED,
    )  # fmt: skip
    assert finished.finished_at == at(4)
    going = CarriedRun(ref=6, attempt=1, kind=SlotKind.OCCURRENCE, scheduled_at=T0,
                       dispatched_at=T0)  # fmt: skip
    events = Engine().load([stored], at(5), carried_on={1: [going]})
    assert not any(isinstance(e, RunFinished) for e in events)  # still going: told at its end
