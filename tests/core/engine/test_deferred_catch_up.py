"""Tasks due while no scheduler ran, held cold (by id and run time only), meet the same
rules at the next start as tasks loaded whole: their spread, their misfire policy, and
at a wake-up the wake-up policy.

Each test loads the same stored tasks twice, whole and cold, and compares what the
two engines do (``tests/core/engine/test_deferred.py`` does so for plain dispatch).
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta

import pytest

from taskgui.core.engine.engine import Engine
from taskgui.core.events import Event, OccurrencesSkipped, RunDispatched, TaskChanged
from taskgui.core.recurrence import Every
from taskgui.core.spread import Spread
from taskgui.core.states import MisfirePolicy
from taskgui.core.status import TaskSnapshot, initial_status
from taskgui.core.task import TaskSpec
from taskgui.core.wake import WakeKind, WakePolicy
from tests.helpers.deferred import DictSource, deferred
from tests.helpers.factories import T0, make_spec

HOUR = timedelta(hours=1)
TEN = timedelta(minutes=10)
FIXED = Spread(TEN, fixed=True)


def written_by_the_cli(*specs: TaskSpec) -> list[TaskSnapshot]:
    """What the CLI's insert wrote with no scheduler running: no spread drawn yet."""
    return [TaskSnapshot(spec, initial_status(spec)) for spec in specs]


def whole(snapshots: list[TaskSnapshot], now: datetime) -> tuple[Engine, list[Event]]:
    engine = Engine(rng=random.Random(7))
    return engine, engine.load(snapshots, now)


def cold(snapshots: list[TaskSnapshot], now: datetime) -> tuple[Engine, list[Event]]:
    engine = Engine(rng=random.Random(7))
    events = engine.load([], now, deferred(snapshots, DictSource(snapshots)))
    assert engine.deferred_count == len(snapshots)
    return engine, events


def starts(events: list[Event]) -> dict[int, datetime | None]:
    """The start each changed task was committed with (the last change counts)."""
    return {e.task.id: e.task.status.next_run_at for e in events if isinstance(e, TaskChanged)}


def dispatched(events: list[Event]) -> list[tuple[int, datetime]]:
    return [(e.run.task_id, e.run.scheduled_at) for e in events if isinstance(e, RunDispatched)]


def test_a_cold_task_added_while_no_scheduler_ran_runs_at_its_spread_start() -> None:
    stored = written_by_the_cli(
        make_spec(5, recurrence=Every(HOUR), spread=FIXED, first_run_at=T0 + HOUR)
    )
    offset = FIXED.offset(5, random.random)
    assert offset > timedelta(0)
    eager, _ = whole(stored, T0)
    assert eager.next_deadline() == T0 + HOUR + offset

    lazy, _ = cold(stored, T0)
    # Read a minute before its (unspread) time, as the daemon reads ahead: it is read
    # as a whole load reads it, its spread drawn, and that start is to be committed.
    events = lazy.load_due_by(T0 + HOUR)
    assert starts(events) == {5: T0 + HOUR + offset}
    assert lazy.next_deadline() == T0 + HOUR + offset
    assert dispatched(lazy.due(T0 + HOUR, 4)) == []
    assert [task for task, _ in dispatched(lazy.due(T0 + HOUR + offset, 4))] == [5]


def test_a_cold_task_first_read_by_due_after_a_downtime_is_spread_then_caught_up() -> None:
    """Due during the downtime, read only by the first ``due``: its spread is drawn
    and committed, and its misfire policy decides, as for a task loaded whole."""
    stored = written_by_the_cli(
        make_spec(5, recurrence=Every(HOUR), spread=FIXED, first_run_at=T0),
        make_spec(6, recurrence=Every(HOUR), first_run_at=T0, misfire=MisfirePolicy.SKIP),
    )
    later = T0 + 5 * HOUR + timedelta(minutes=30)
    eager, loaded = whole(stored, later)
    lazy, _ = cold(stored, later)

    eager_events = loaded + eager.due(later, 4)
    lazy_events = lazy.due(later, 4)

    assert dispatched(lazy_events) == dispatched(eager_events)
    assert [task for task, _ in dispatched(lazy_events)] == [5]  # run_once; 6 skips
    assert starts(lazy_events) == starts(eager_events)
    skipped = [(e.task_id, e.count) for e in lazy_events if isinstance(e, OccurrencesSkipped)]
    assert sorted(skipped) == [(5, 5), (6, 6)]
    for task_id in (5, 6):
        assert lazy.snapshot(task_id) == eager.snapshot(task_id)


@pytest.mark.parametrize("policy", [WakeKind.SPREAD, WakeKind.NOW])
def test_a_wake_up_treats_cold_tasks_as_tasks_loaded_whole(policy: WakeKind) -> None:
    stored = written_by_the_cli(
        *(
            make_spec(task_id, recurrence=Every(HOUR), first_run_at=T0 + TEN * task_id,
                      priority=task_id % 3)
            for task_id in range(1, 8)
        )
    )  # fmt: skip
    woke = T0 + 8 * HOUR
    wake = WakePolicy(kind=policy, spread=TEN)
    eager, _ = whole(stored, T0)
    lazy, _ = cold(stored, T0)

    eager_events, eager_question = eager.calm_wake(woke, wake, can_ask=False)
    lazy_events, lazy_question = lazy.calm_wake(woke, wake, can_ask=False)

    assert lazy_question == eager_question is None
    assert starts(lazy_events) == starts(eager_events)
    assert len(starts(lazy_events)) == 7
    assert dispatched(lazy.due(woke, 8)) == dispatched(eager.due(woke, 8))
