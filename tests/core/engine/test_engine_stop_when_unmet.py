"""A task that stops when its conditions end: the engine asks to stop exactly the runs
whose condition broke, the run ends as stopped, and the same attempt waits for the
condition again, with no attempt spent and no occurrence lost or added."""

from __future__ import annotations

from datetime import timedelta

from taskgui.core.conditions import RunConditions, SystemConditions
from taskgui.core.engine.condition_runs import IDLE_WATCH
from taskgui.core.engine.engine import Engine
from taskgui.core.events import Event, RunCancelRequested, RunDispatched
from taskgui.core.recurrence import Every
from taskgui.core.retry import RetryPolicy
from taskgui.core.states import RunOutcome, SlotKind, TaskState, WaitReason
from taskgui.core.status import RunTicket
from tests.helpers.factories import T0, at, make_spec

ON_AC = SystemConditions(on_battery=False, online=True, metered=False, idle_for=timedelta(0))
ON_BATTERY = SystemConditions(on_battery=True, online=True, metered=False, idle_for=timedelta(0))
UNKNOWN_POWER = SystemConditions(on_battery=None, online=True, metered=False, idle_for=None)
STOP_ON_BATTERY = RunConditions(ac_power=True, stop_when_unmet=True)
HOUR = timedelta(hours=1)


def runs(events: list[Event]) -> list[RunTicket]:
    return [e.run for e in events if isinstance(e, RunDispatched)]


def stops(events: list[Event]) -> list[int]:
    return [e.run.run_id for e in events if isinstance(e, RunCancelRequested)]


def started(engine: Engine, now_s: float = 0) -> RunTicket:
    [run] = runs(engine.due(at(now_s), 4))
    engine.started(run.run_id, at(now_s))
    return run


def test_unplugging_stops_only_the_runs_that_ask_for_it() -> None:
    engine = Engine()
    engine.conditions_changed(ON_AC, T0)
    engine.add(make_spec(1, conditions=STOP_ON_BATTERY))
    engine.add(make_spec(2, conditions=RunConditions(ac_power=True)))  # waits, never stops
    engine.add(make_spec(3))
    dispatched = runs(engine.due(at(0), 4))
    assert sorted(r.task_id for r in dispatched) == [1, 2, 3]
    first = next(r for r in dispatched if r.task_id == 1)

    events = engine.conditions_changed(ON_BATTERY, at(5))
    assert stops(events) == [first.run_id]
    assert engine.stop_reason(first.run_id) == "on battery"
    # A second reading while it is being stopped asks nothing more.
    assert stops(engine.conditions_changed(ON_BATTERY, at(6))) == []


def test_a_stopped_run_runs_again_when_plugged_in_without_spending_an_attempt() -> None:
    engine = Engine()
    engine.conditions_changed(ON_AC, T0)
    engine.add(make_spec(1, conditions=STOP_ON_BATTERY, retry=RetryPolicy(max_attempts=2)))
    run = started(engine)
    engine.conditions_changed(ON_BATTERY, at(5))
    engine.finished(run.run_id, RunOutcome.STOPPED, at(6))

    snapshot = engine.snapshot(1)
    assert snapshot.status.state is not TaskState.EXHAUSTED
    assert runs(engine.due(at(7), 4)) == []  # still on battery: it waits, saying why
    assert engine.snapshot(1).status.waiting is WaitReason.AC_POWER
    assert engine.stop_reason(run.run_id) is None  # the run is over

    engine.conditions_changed(ON_AC, at(60))
    [again] = runs(engine.due(at(60), 4))
    assert again.attempt == run.attempt == 1  # no attempt spent
    assert again.kind is SlotKind.RETRY
    # That attempt fails: the policy's second (last) attempt is still there.
    engine.started(again.run_id, at(60))
    engine.finished(again.run_id, RunOutcome.FAILED, at(61))
    assert engine.snapshot(1).status.state is TaskState.RETRYING


def test_a_recurring_task_keeps_its_schedule_after_a_stop() -> None:
    engine = Engine()
    engine.conditions_changed(ON_AC, T0)
    engine.add(make_spec(1, recurrence=Every(HOUR), conditions=STOP_ON_BATTERY))
    run = started(engine)
    engine.conditions_changed(ON_BATTERY, at(10))
    engine.finished(run.run_id, RunOutcome.STOPPED, at(11))
    engine.conditions_changed(ON_AC, at(20))
    [again] = runs(engine.due(at(20), 4))
    assert again.scheduled_at == at(11)  # the stopped attempt, taken up again
    engine.started(again.run_id, at(20))
    engine.finished(again.run_id, RunOutcome.SUCCEEDED, at(30))
    # The next occurrence is the schedule's, not moved by the stop.
    assert engine.next_deadline() == T0 + HOUR
    [next_run] = runs(engine.due(T0 + HOUR, 4))
    assert next_run.scheduled_at == T0 + HOUR and next_run.kind is SlotKind.OCCURRENCE


def test_a_fact_that_cannot_be_read_any_more_stops_nothing() -> None:
    engine = Engine()
    engine.conditions_changed(ON_AC, T0)
    engine.add(make_spec(1, conditions=STOP_ON_BATTERY))
    started(engine)
    assert stops(engine.conditions_changed(UNKNOWN_POWER, at(5))) == []


def test_a_cancelled_task_is_not_run_again_by_a_stop() -> None:
    engine = Engine()
    engine.conditions_changed(ON_AC, T0)
    engine.add(make_spec(1, conditions=STOP_ON_BATTERY))
    run = started(engine)
    engine.conditions_changed(ON_BATTERY, at(5))
    engine.cancel(1)
    assert engine.stop_reason(run.run_id) is None  # the runtime records it as cancelled
    engine.finished(run.run_id, RunOutcome.CANCELLED, at(6))
    assert engine.snapshot(1).status.state is TaskState.CANCELLED
    engine.conditions_changed(ON_AC, at(7))
    assert runs(engine.due(at(7), 4)) == []


def test_idle_is_watched_only_while_a_run_stops_when_the_user_returns() -> None:
    engine = Engine()
    idle = SystemConditions(on_battery=False, online=True, metered=False, idle_for=HOUR)
    engine.conditions_changed(idle, T0)
    engine.add(make_spec(1, conditions=RunConditions(idle_for=timedelta(minutes=5),
                                                      stop_when_unmet=True)))  # fmt: skip
    assert engine.idle_check_in() is None  # idle holds already: nothing waits on it
    run = started(engine)
    assert engine.idle_check_in() == IDLE_WATCH
    back = SystemConditions(on_battery=False, online=True, metered=False, idle_for=timedelta(0))
    assert stops(engine.conditions_changed(back, at(30))) == [run.run_id]
    engine.finished(run.run_id, RunOutcome.STOPPED, at(31))
    engine.due(at(31), 4)
    # Now it waits for idle again: looked at when 5 minutes of idle could first hold.
    assert engine.idle_check_in() == timedelta(minutes=5)
