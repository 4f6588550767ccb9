"""Pause for a while: the task resumes by itself at the time it says, and not before."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from taskgui.core.engine.engine import Engine
from taskgui.core.events import OccurrencesSkipped, RunDispatched, TaskChanged
from taskgui.core.recurrence import Every, stored_cron
from taskgui.core.states import MisfirePolicy, TaskState
from tests.helpers.factories import T0, at, make_spec

HOUR = timedelta(hours=1)


def test_a_task_paused_for_an_hour_resumes_by_itself() -> None:
    engine = Engine()
    engine.add(make_spec(1, recurrence=Every(timedelta(minutes=10)), first_run_at=at(60)))
    engine.pause(1, until=T0 + HOUR)
    snapshot = engine.snapshot(1)
    assert snapshot.state is TaskState.PAUSED and snapshot.spec.paused_until == T0 + HOUR
    assert engine.next_deadline() == T0 + HOUR  # its resume, not the skipped runs

    assert not [e for e in engine.due(T0 + HOUR - timedelta(seconds=1), 4)
                if isinstance(e, RunDispatched)]  # fmt: skip
    events = engine.due(T0 + HOUR, 4)

    resumed = engine.snapshot(1)
    assert resumed.state is not TaskState.PAUSED and resumed.spec.paused_until is None
    assert any(isinstance(e, TaskChanged) for e in events)
    # What it missed meanwhile met its misfire policy (run_once: one catch-up run).
    assert [e.run.task_id for e in events if isinstance(e, RunDispatched)] == [1]
    assert [e.count for e in events if isinstance(e, OccurrencesSkipped)] == [5]


def test_resume_by_hand_ends_the_pause_early() -> None:
    engine = Engine()
    engine.add(make_spec(1, recurrence=Every(HOUR)))
    engine.pause(1, until=T0 + HOUR)
    engine.resume(1)
    assert engine.snapshot(1).spec.paused_until is None
    assert engine.next_deadline() == T0


def test_pausing_again_moves_the_end() -> None:
    engine = Engine()
    engine.add(make_spec(1, recurrence=Every(HOUR), misfire=MisfirePolicy.SKIP))
    engine.pause(1, until=T0 + HOUR)
    engine.pause(1, until=T0 + 2 * HOUR)
    assert engine.snapshot(1).spec.paused_until == T0 + 2 * HOUR
    engine.pause(1)  # indefinitely
    assert engine.snapshot(1).spec.paused_until is None
    events = engine.due(T0 + 3 * HOUR, 1)
    assert not [e for e in events if isinstance(e, RunDispatched)]
    assert engine.snapshot(1).state is TaskState.PAUSED


def test_the_end_of_a_pause_survives_a_restart() -> None:
    engine = Engine()
    engine.add(make_spec(1, recurrence=Every(HOUR)))
    engine.pause(1, until=T0 + HOUR)
    revived = Engine()
    revived.load(list(engine.snapshots()), at(1))
    assert revived.next_deadline() == T0 + HOUR
    revived.due(T0 + HOUR, 1)
    assert revived.snapshot(1).state is not TaskState.PAUSED


def test_cancel_and_delete_forget_the_resume() -> None:
    engine = Engine()
    engine.add(make_spec(1, recurrence=Every(HOUR), first_run_at=at(7200)))
    engine.add(make_spec(2, recurrence=Every(HOUR), first_run_at=at(7200)))
    engine.pause(1, until=T0 + HOUR)
    engine.pause(2, until=T0 + HOUR)
    engine.cancel(1)
    engine.remove(2)
    assert engine.next_deadline() is None


def test_a_task_that_cannot_resume_stays_paused_and_nothing_breaks() -> None:
    engine = Engine()
    refused = replace(make_spec(1), recurrence=stored_cron("R * * * *", "UTC"))
    engine.add(refused)
    engine.pause(1, until=T0 + HOUR)
    events = engine.due(T0 + HOUR, 1)
    assert engine.snapshot(1).state is TaskState.PAUSED
    assert engine.snapshot(1).spec.paused_until is None
    assert any(isinstance(e, TaskChanged) for e in events)


def test_a_pause_end_without_a_pause_means_nothing() -> None:
    spec = make_spec(1, paused_until=T0 + HOUR)
    assert spec.paused_until is None
