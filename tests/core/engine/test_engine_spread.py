"""Spread in the engine: late starts inside the width, no drift, kept across restarts."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest

from taskgui.core.engine.engine import Engine
from taskgui.core.errors import InvalidTaskError
from taskgui.core.events import Event, RunDispatched, TaskChanged
from taskgui.core.recurrence import Every
from taskgui.core.spread import Spread
from taskgui.core.states import RunOutcome, SlotKind
from taskgui.core.status import RunTicket, TaskSnapshot, initial_status
from tests.helpers.factories import T0, at, fixed_retry, make_spec

HOUR = timedelta(hours=1)
TEN_MINUTES = timedelta(minutes=10)


def _run(events: list[Event]) -> RunTicket:
    [run] = [e.run for e in events if isinstance(e, RunDispatched)]
    return run


def _drive(engine: Engine, hours: int) -> list[RunTicket]:
    """Run the task at each of its starts for ``hours`` hours; return the tickets."""
    tickets = []
    for _ in range(hours):
        start = engine.next_deadline()
        assert start is not None
        run = _run(engine.due(start, 1))
        engine.started(run.run_id, start)
        engine.finished(run.run_id, RunOutcome.SUCCEEDED, start + timedelta(seconds=1))
        tickets.append(run)
    return tickets


def test_a_fixed_spread_keeps_its_minute_every_hour_without_drift() -> None:
    spec = make_spec(7, recurrence=Every(HOUR), spread=Spread(TEN_MINUTES, fixed=True))
    engine = Engine()
    engine.add(spec)

    tickets = _drive(engine, 100)

    offset = Spread(TEN_MINUTES, fixed=True).offset(7, random.random)
    assert offset > timedelta(0)
    assert [t.scheduled_at for t in tickets] == [T0 + k * HOUR + offset for k in range(100)]
    # The 101st occurrence is still on the hour: the spread never moved the schedule.
    assert engine.snapshot(7).status.scheduled_at == T0 + 100 * HOUR


def test_a_random_spread_draws_from_the_engines_source() -> None:
    spec = make_spec(1, recurrence=Every(HOUR), spread=Spread(TEN_MINUTES))

    def starts(seed: int) -> list[timedelta]:
        engine = Engine(rng=random.Random(seed))
        engine.add(spec)
        return [t.scheduled_at - (T0 + k * HOUR) for k, t in enumerate(_drive(engine, 50))]

    offsets = starts(1)
    assert offsets == starts(1)  # the same source, the same starts
    assert offsets != starts(2)
    assert all(timedelta(0) <= o < TEN_MINUTES for o in offsets)
    assert len(set(offsets)) == 50


def test_the_spread_start_survives_a_restart() -> None:
    spec = make_spec(1, recurrence=Every(HOUR), spread=Spread(TEN_MINUTES))
    engine = Engine(rng=random.Random(3))
    engine.add(spec)
    before = engine.snapshot(1)
    assert before.status.next_run_at != before.status.scheduled_at

    revived = Engine(rng=random.Random(99))  # another draw would give another start
    revived.load([before], at(1))
    assert revived.next_deadline() == before.status.next_run_at
    assert revived.snapshot(1).status.scheduled_at == T0


def test_a_retry_in_front_of_a_spread_occurrence_does_not_drift_it() -> None:
    spec = make_spec(
        1,
        recurrence=Every(HOUR),
        retry=fixed_retry(max_attempts=2, delay=60),
        spread=Spread(TEN_MINUTES, fixed=True),
    )
    engine = Engine()
    engine.add(spec)
    start = engine.next_deadline()
    assert start is not None
    run = _run(engine.due(start, 1))
    engine.started(run.run_id, start)
    engine.finished(run.run_id, RunOutcome.FAILED, start + timedelta(seconds=1))
    retry = _run(engine.due(start + timedelta(seconds=61), 1))
    engine.started(retry.run_id, start + timedelta(seconds=61))
    engine.finished(retry.run_id, RunOutcome.SUCCEEDED, start + timedelta(seconds=62))

    status = engine.snapshot(1).status
    offset = start - T0
    assert (status.scheduled_at, status.next_run_at) == (T0 + HOUR, T0 + HOUR + offset)


def test_a_run_now_keeps_the_next_occurrence_unspread_underneath() -> None:
    spec = make_spec(1, recurrence=Every(HOUR), spread=Spread(TEN_MINUTES, fixed=True))
    engine = Engine()
    engine.add(spec)
    engine.run_now(1, at(-50))  # before the occurrence: it stays, and unspread
    run = _run(engine.due(at(-50), 1))
    engine.started(run.run_id, at(-50))
    engine.finished(run.run_id, RunOutcome.SUCCEEDED, at(-49))
    assert engine.snapshot(1).status.scheduled_at == T0


def test_a_run_now_once_the_occurrence_passed_runs_it_whatever_its_spread() -> None:
    """The spread only delays a start; "run now" at 00:00:05 is that 00:00 run."""
    spec = make_spec(1, recurrence=Every(HOUR), spread=Spread(TEN_MINUTES, fixed=True))
    engine = Engine()
    engine.add(spec)
    engine.run_now(1, at(5))
    run = _run(engine.due(at(5), 1))
    assert (run.kind, run.scheduled_at) == (SlotKind.OCCURRENCE, T0)
    engine.started(run.run_id, at(5))
    engine.finished(run.run_id, RunOutcome.SUCCEEDED, at(6))
    assert engine.snapshot(1).status.scheduled_at == T0 + HOUR


@pytest.mark.parametrize("width", [HOUR, timedelta(hours=2)])
def test_a_spread_as_long_as_the_interval_is_refused(width: timedelta) -> None:
    with pytest.raises(InvalidTaskError, match="shorter than the time between two runs"):
        make_spec(1, recurrence=Every(HOUR), spread=Spread(width))


def test_a_one_off_task_may_be_spread() -> None:
    engine = Engine(rng=random.Random(4))
    engine.add(make_spec(1, spread=Spread(TEN_MINUTES)))
    deadline = engine.next_deadline()
    assert deadline is not None and T0 <= deadline < T0 + TEN_MINUTES


def test_a_task_added_while_no_scheduler_ran_gets_its_spread_at_the_next_start() -> None:
    spec = make_spec(5, recurrence=Every(HOUR), spread=Spread(TEN_MINUTES, fixed=True))
    stored = TaskSnapshot(spec, initial_status(spec))  # what the CLI's insert wrote
    assert stored.status.next_run_at == T0

    engine = Engine()
    events = engine.load([stored], T0 - timedelta(minutes=1))

    offset = Spread(TEN_MINUTES, fixed=True).offset(5, random.random)
    assert engine.next_deadline() == T0 + offset
    [changed] = [e for e in events if isinstance(e, TaskChanged)]  # to be committed
    assert changed.task.status.next_run_at == T0 + offset
    # Loaded again with its start drawn, it keeps it.
    assert engine.load([changed.task], T0) == []
