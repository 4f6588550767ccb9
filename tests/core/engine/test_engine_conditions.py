"""Run conditions in the engine: waiting says why, a change wakes exactly the waiting
tasks (in their old order), and an occurrence that waits too long is counted missed."""

from __future__ import annotations

from datetime import timedelta

from taskgui.core.conditions import RunConditions, SystemConditions
from taskgui.core.engine.engine import Engine
from taskgui.core.events import Event, OccurrencesSkipped, RunDispatched, SkipReason, TaskChanged
from taskgui.core.recurrence import Every
from taskgui.core.states import RunOutcome, TaskState, WaitReason
from taskgui.core.status import RunTicket
from tests.helpers.factories import T0, at, make_spec

ON_AC = SystemConditions(on_battery=False, online=True, metered=False, idle_for=timedelta(0))
ON_BATTERY = ON_AC.__class__(on_battery=True, online=True, metered=False, idle_for=timedelta(0))
AC = RunConditions(ac_power=True)
HOUR = timedelta(hours=1)


def runs(events: list[Event]) -> list[RunTicket]:
    return [e.run for e in events if isinstance(e, RunDispatched)]


def waiting(engine: Engine, task_id: int) -> WaitReason | None:
    return engine.snapshot(task_id).status.waiting


def test_a_task_waits_on_battery_and_starts_when_plugged_in() -> None:
    engine = Engine()
    engine.conditions_changed(ON_BATTERY, T0)
    engine.add(make_spec(1, conditions=AC))

    assert runs(engine.due(at(0), 4)) == []
    assert waiting(engine, 1) is WaitReason.AC_POWER

    changed = engine.conditions_changed(ON_AC, at(30))
    assert [e.task.status.waiting for e in changed if isinstance(e, TaskChanged)] == [
        WaitReason.WORKER
    ]
    [run] = runs(engine.due(at(30), 4))
    assert (run.task_id, run.scheduled_at) == (1, T0)


def test_tasks_without_conditions_never_wait_and_are_not_looked_at() -> None:
    engine = Engine()
    engine.conditions_changed(ON_BATTERY, T0)
    engine.add(make_spec(1))
    engine.add(make_spec(2, conditions=AC))
    assert [r.task_id for r in runs(engine.due(at(0), 4))] == [1]
    # A change looks at the waiting task only.
    events = engine.conditions_changed(ON_AC, at(1))
    assert [e.task.spec.id for e in events if isinstance(e, TaskChanged)] == [2]


def test_released_tasks_keep_their_place_in_line() -> None:
    engine = Engine()
    engine.conditions_changed(ON_BATTERY, T0)
    for task_id, priority in ((1, 0), (2, 5), (3, 1)):
        engine.add(make_spec(task_id, priority=priority, conditions=AC))
    engine.due(at(0), 4)
    engine.conditions_changed(ON_AC, at(1))
    assert [r.task_id for r in runs(engine.due(at(1), 4))] == [2, 3, 1]


def test_before_the_first_reading_a_task_waits() -> None:
    engine = Engine()
    engine.add(make_spec(1, conditions=AC))
    assert runs(engine.due(at(0), 1)) == []
    engine.conditions_changed(ON_AC, at(1))
    assert len(runs(engine.due(at(1), 1))) == 1


def test_a_fact_the_machine_cannot_report_says_so() -> None:
    engine = Engine()
    engine.conditions_changed(SystemConditions(), T0)
    engine.add(make_spec(1, conditions=AC))
    engine.due(at(0), 1)
    assert waiting(engine, 1) is WaitReason.UNCHECKABLE


def test_a_waiting_occurrence_gives_up_when_the_next_one_is_due() -> None:
    engine = Engine()
    engine.conditions_changed(ON_BATTERY, T0)
    engine.add(make_spec(1, recurrence=Every(HOUR), conditions=AC))
    engine.due(at(0), 1)
    assert engine.next_deadline() == T0 + HOUR  # its give-up time, not a poll

    events = engine.due(T0 + HOUR, 1)

    skipped = [e for e in events if isinstance(e, OccurrencesSkipped)]
    assert [(s.count, s.first_at, s.reason) for s in skipped] == [(1, T0, SkipReason.CONDITION)]
    # The next occurrence came due in the same call, and waits in its turn.
    assert engine.snapshot(1).status.scheduled_at == T0 + HOUR
    engine.due(T0 + HOUR, 1)
    assert waiting(engine, 1) is WaitReason.AC_POWER


def test_give_up_after_ends_a_one_off_task_as_missed() -> None:
    engine = Engine()
    engine.conditions_changed(ON_BATTERY, T0)
    conditions = RunConditions(ac_power=True, give_up_after=timedelta(minutes=10))
    engine.add(make_spec(1, conditions=conditions))
    engine.due(at(0), 1)
    assert engine.next_deadline() == at(600)

    events = engine.due(at(600), 1)

    assert [e.reason for e in events if isinstance(e, OccurrencesSkipped)] == [SkipReason.CONDITION]
    assert engine.snapshot(1).state is TaskState.MISSED
    assert engine.next_deadline() is None


def test_a_task_in_line_is_parked_if_the_machine_changes_before_a_worker_frees() -> None:
    engine = Engine()
    engine.conditions_changed(ON_AC, T0)
    engine.add(make_spec(1))
    engine.add(make_spec(2, conditions=AC))
    [first] = runs(engine.due(at(0), 1))  # one worker: task 2 waits for it
    assert waiting(engine, 2) is WaitReason.WORKER
    engine.conditions_changed(ON_BATTERY, at(1))
    engine.started(first.run_id, at(0))
    engine.finished(first.run_id, RunOutcome.SUCCEEDED, at(2))

    assert runs(engine.due(at(2), 1)) == []
    assert waiting(engine, 2) is WaitReason.AC_POWER


def test_cancel_and_pause_take_a_task_out_of_the_wait() -> None:
    engine = Engine()
    engine.conditions_changed(ON_BATTERY, T0)
    engine.add(make_spec(1, recurrence=Every(HOUR), conditions=AC))
    engine.add(make_spec(2, recurrence=Every(HOUR), conditions=AC))
    engine.due(at(0), 1)
    engine.cancel(1)
    engine.pause(2)
    assert engine.next_deadline() is None  # no give-up left for either
    assert engine.conditions_changed(ON_AC, at(1)) == []


def test_it_waits_on_the_condition_that_still_fails() -> None:
    engine = Engine()
    offline_on_battery = SystemConditions(on_battery=True, online=False)
    engine.conditions_changed(offline_on_battery, T0)
    engine.add(make_spec(1, conditions=RunConditions(ac_power=True, network=True)))
    engine.due(at(0), 1)
    assert waiting(engine, 1) is WaitReason.AC_POWER
    engine.conditions_changed(SystemConditions(on_battery=False, online=False), at(1))
    assert waiting(engine, 1) is WaitReason.NETWORK


def test_idle_is_looked_at_when_it_would_first_hold() -> None:
    engine = Engine()
    engine.conditions_changed(SystemConditions(idle_for=timedelta(minutes=2)), T0)
    engine.add(make_spec(1, conditions=RunConditions(idle_for=timedelta(minutes=10))))
    engine.add(make_spec(2, conditions=RunConditions(idle_for=timedelta(minutes=5))))
    assert engine.idle_check_in() is None  # nothing waits yet
    engine.due(at(0), 2)
    assert engine.idle_check_in() == timedelta(minutes=3)
    engine.conditions_changed(SystemConditions(idle_for=timedelta(minutes=5)), at(180))
    assert [r.task_id for r in runs(engine.due(at(180), 2))] == [2]
    assert engine.idle_check_in() == timedelta(minutes=5)


def test_the_next_occurrence_ends_the_wait_before_a_longer_limit() -> None:
    engine = Engine()
    engine.conditions_changed(ON_BATTERY, T0)
    conditions = RunConditions(ac_power=True, give_up_after=timedelta(hours=3))
    engine.add(make_spec(1, recurrence=Every(HOUR), conditions=conditions))
    engine.due(at(0), 1)
    assert engine.next_deadline() == T0 + HOUR
