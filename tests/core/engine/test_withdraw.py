"""Engine.withdraw: taking back a dispatch whose command never started.

The service does this when a run dispatched ahead of its time must give its worker
to a more urgent task, and at shutdown. The task must end up exactly as if the
dispatch had never been made.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from taskgui.core.engine.engine import Engine
from taskgui.core.errors import InvalidStateError
from taskgui.core.events import (
    Event,
    OccurrencesSkipped,
    RunDispatched,
    RunWithdrawn,
    TaskChanged,
)
from taskgui.core.recurrence import Every
from taskgui.core.states import MisfirePolicy, OverlapPolicy, RunOutcome, TaskState
from taskgui.core.status import RunTicket
from tests.helpers.factories import at, fixed_retry, make_spec


def dispatched(events: list[Event]) -> list[RunTicket]:
    return [event.run for event in events if isinstance(event, RunDispatched)]


def test_a_withdrawn_one_off_is_as_it_was_and_runs_again_the_same_way() -> None:
    engine = Engine()
    engine.add(make_spec(1, first_run_at=at(10)))
    before = engine.snapshot(1)
    [run] = dispatched(engine.due(at(10), 1))

    withdrawn, changed = engine.withdraw(run.run_id)

    assert withdrawn == RunWithdrawn(run)
    assert engine.snapshot(1) == before
    assert isinstance(changed, TaskChanged) and changed.task == before
    assert engine.running_runs == {} and engine.next_deadline() == at(10)
    [again] = dispatched(engine.due(at(10), 1))
    assert (again.attempt, again.scheduled_at) == (run.attempt, run.scheduled_at)


def test_a_withdrawn_recurring_run_keeps_its_cadence() -> None:
    engine = Engine()
    engine.add(make_spec(1, first_run_at=at(60), recurrence=Every(timedelta(minutes=1))))
    before = engine.snapshot(1)
    [run] = dispatched(engine.due(at(60), 1))
    assert engine.next_deadline() == at(120)  # the next occurrence took the slot

    engine.withdraw(run.run_id)

    assert engine.snapshot(1) == before and engine.next_deadline() == at(60)
    [again] = dispatched(engine.due(at(60), 1))
    assert again.scheduled_at == at(60) and engine.next_deadline() == at(120)


def test_a_withdrawn_retry_keeps_its_attempt_number() -> None:
    engine = Engine()
    engine.add(make_spec(1, first_run_at=at(0), retry=fixed_retry(3, delay=10)))
    [first] = dispatched(engine.due(at(0), 1))
    engine.finished(first.run_id, RunOutcome.FAILED, at(1))
    before = engine.snapshot(1)
    [retry] = dispatched(engine.due(at(11), 1))
    assert retry.attempt == 2

    engine.withdraw(retry.run_id)

    assert engine.snapshot(1) == before and before.state is TaskState.RETRYING
    assert dispatched(engine.due(at(11), 1))[0].attempt == 2


def test_withdrawing_lets_a_more_urgent_task_take_the_worker_and_the_key() -> None:
    engine = Engine()
    engine.add(make_spec(1, first_run_at=at(10), priority=0, concurrency_key="db"))
    [low] = dispatched(engine.due(at(10), 1))
    engine.add(make_spec(2, first_run_at=at(9), priority=9, concurrency_key="db"))
    assert dispatched(engine.due(at(10), 0)) == []  # due, but no worker

    engine.withdraw(low.run_id)
    order = dispatched(engine.due(at(10), 1))

    assert [run.task_id for run in order] == [2]
    assert engine.snapshot(1).state is TaskState.PENDING  # and runs after it
    engine.finished(order[0].run_id, RunOutcome.SUCCEEDED, at(11))
    assert [run.task_id for run in dispatched(engine.due(at(11), 1))] == [1]


def test_a_run_that_started_or_whose_task_changed_cannot_be_withdrawn() -> None:
    engine = Engine()
    for task_id in (1, 2, 3):
        engine.add(make_spec(task_id, first_run_at=at(10)))
    runs = {run.task_id: run.run_id for run in dispatched(engine.due(at(10), 3))}
    engine.started(runs[1], at(10))
    engine.cancel(2)
    engine.update(make_spec(3, first_run_at=at(50)), at(10))

    for run_id in runs.values():
        assert not engine.withdrawable(run_id)
        with pytest.raises(InvalidStateError):
            engine.withdraw(run_id)
    assert not engine.withdrawable(999)


@pytest.mark.parametrize("new_key", ["B", None])
def test_an_edited_key_neither_breaks_a_withdraw_nor_leaks_the_key_taken(
    new_key: str | None,
) -> None:
    engine = Engine()
    spec = make_spec(1, first_run_at=at(10), concurrency_key="A")
    engine.add(spec)
    [run] = dispatched(engine.due(at(10), 1))

    engine.update(replace(spec, concurrency_key=new_key), at(10))

    assert not engine.withdrawable(run.run_id)  # edited since: it runs as dispatched
    engine.finished(run.run_id, RunOutcome.SUCCEEDED, at(11))
    engine.add(make_spec(2, first_run_at=at(11), concurrency_key="A"))
    assert [r.task_id for r in dispatched(engine.due(at(11), 4))] == [2]  # A was let go


def test_a_task_deleted_while_it_runs_lets_go_of_its_key() -> None:
    engine = Engine()
    engine.add(make_spec(1, first_run_at=at(0), concurrency_key="A"))
    [run] = dispatched(engine.due(at(0), 1))
    engine.remove(1)
    engine.finished(run.run_id, RunOutcome.CANCELLED, at(1))

    engine.add(make_spec(2, first_run_at=at(1), concurrency_key="A"))
    assert [r.task_id for r in dispatched(engine.due(at(1), 1))] == [2]


def test_withdrawing_never_strands_a_task_parked_on_the_same_key() -> None:
    engine = Engine()
    engine.add(
        make_spec(
            1,
            first_run_at=at(0),
            recurrence=Every(timedelta(seconds=1)),
            overlap=OverlapPolicy.PARALLEL,
            concurrency_key="K",
            priority=9,
        )
    )
    engine.add(make_spec(2, first_run_at=at(0.5), concurrency_key="K", priority=1))
    [first] = dispatched(engine.due(at(0), 2))
    assert dispatched(engine.due(at(1), 2)) == []  # task 2 and task 1's next wait on K

    engine.withdraw(first.run_id)
    engine.cancel(1)

    assert [r.task_id for r in dispatched(engine.due(at(5), 2))] == [2]


def test_a_withdrawn_catch_up_run_reports_its_missed_runs_once() -> None:
    engine = Engine()
    engine.add(
        make_spec(
            1,
            first_run_at=at(0),
            recurrence=Every(timedelta(seconds=10)),
            misfire=MisfirePolicy.RUN_ONCE,
            misfire_grace=timedelta(seconds=1),
        )
    )
    first = engine.due(at(55), 1)
    [run] = dispatched(first)
    assert [e.count for e in first if isinstance(e, OccurrencesSkipped)] == [5]

    engine.withdraw(run.run_id)
    again = engine.due(at(55), 1)

    assert [e for e in again if isinstance(e, OccurrencesSkipped)] == []
    assert [r.scheduled_at for r in dispatched(again)] == [run.scheduled_at]
