"""Loading an engine lazily: tasks known by id and run time, fetched on first use.

Every test compares with what a full load does, or checks what was fetched: a lazy
engine must behave exactly like an eager one and only read what it needs.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from taskgui.core.engine.engine import Engine
from taskgui.core.errors import InvalidTaskError, UnreadableTaskError
from taskgui.core.events import Event, RunDispatched, TaskDropped
from taskgui.core.recurrence import Every
from taskgui.core.states import RunOutcome, TaskState
from taskgui.core.status import TaskSnapshot
from tests.helpers.deferred import UNREADABLE, DictSource, deferred
from tests.helpers.factories import T0, at, make_spec


def stored(*specs_and_times: tuple[int, int, int]) -> list[TaskSnapshot]:
    """Snapshots of tasks (id, priority, due second) as an engine holds them."""
    engine = Engine()
    for task_id, priority, second in specs_and_times:
        engine.add(make_spec(task_id, priority=priority, first_run_at=at(second)))
    return list(engine.snapshots())


def lazy(
    snapshots: list[TaskSnapshot], unreadable: set[int] | None = None
) -> tuple[Engine, DictSource]:
    source = DictSource(snapshots, unreadable or set())
    engine = Engine()
    engine.load([], T0, deferred(snapshots, source))
    return engine, source


def eager(snapshots: list[TaskSnapshot]) -> Engine:
    engine = Engine()
    engine.load(snapshots, T0)
    return engine


def runs(events: list[Event]) -> list[tuple[int, int]]:
    return [(e.run.task_id, e.run.attempt) for e in events if isinstance(e, RunDispatched)]


def test_the_timer_is_armed_without_fetching_anything() -> None:
    snapshots = stored((1, 0, 30), (2, 0, 10), (3, 0, 20))
    engine, source = lazy(snapshots)

    assert engine.next_deadline() == at(10)
    assert len(engine) == 3 and 2 in engine and 4 not in engine
    assert source.fetched == [] and engine.deferred_count == 3


def test_due_fetches_only_the_due_tasks_and_runs_them_as_an_eager_engine_would() -> None:
    # Ties in time and priority break by id, as in a full load.
    snapshots = stored((1, 0, 10), (2, 5, 10), (3, 0, 10), (4, 9, 50), (5, 5, 10))
    engine, source = lazy(snapshots)

    events = engine.due(at(10), free_workers=3)

    assert runs(events) == runs(eager(snapshots).due(at(10), free_workers=3))
    assert runs(events) == [(2, 1), (5, 1), (1, 1)]
    assert sorted(source.fetched) == [1, 2, 3, 5]  # not task 4, due later
    assert engine.deferred_count == 1


def test_a_due_task_that_cannot_be_read_is_dropped_and_the_rest_run() -> None:
    snapshots = stored((1, 0, 10), (2, 0, 10), (3, 0, 20))
    engine, _ = lazy(snapshots, unreadable={1})

    events = engine.due(at(10), free_workers=4)

    assert [e for e in events if isinstance(e, TaskDropped)] == [TaskDropped(1, UNREADABLE)]
    assert runs(events) == [(2, 1)]
    assert 1 not in engine and len(engine) == 2
    assert engine.next_deadline() == at(20)


def test_an_operation_on_an_unreadable_task_fails_cleanly_and_hydrating_drops_it() -> None:
    snapshots = stored((1, 0, 10), (2, 0, 20))
    engine, _ = lazy(snapshots, unreadable={1})

    with pytest.raises(UnreadableTaskError, match="task 1 could not be read"):
        engine.cancel(1)
    assert 1 in engine  # nothing changed: still known, still queued
    assert engine.next_deadline() == at(10)

    assert engine.hydrate() == [TaskDropped(1, UNREADABLE)]
    assert engine.deferred_count == 0 and 1 not in engine
    assert engine.next_deadline() == at(20)


def test_an_operation_loads_the_task_it_touches() -> None:
    snapshots = stored((1, 0, 10), (2, 0, 20))
    engine, source = lazy(snapshots)

    engine.cancel(2)

    assert source.fetched == [2]
    assert engine.snapshot(2).state is TaskState.CANCELLED
    assert engine.next_deadline() == at(10)


def test_hydrate_loads_lowest_ids_first_and_snapshots_match_a_full_load() -> None:
    snapshots = stored(*[(task_id, task_id % 3, 100 - task_id) for task_id in range(1, 11)])
    engine, source = lazy(snapshots)

    assert engine.hydrate(limit=4) == []
    assert source.fetched == [1, 2, 3, 4] and engine.deferred_count == 6
    assert list(engine.snapshots()) != [] and engine.deferred_count == 0
    by_id = {snapshot.id: snapshot for snapshot in eager(snapshots).snapshots()}
    assert {snapshot.id: snapshot for snapshot in engine.snapshots()} == by_id


def test_a_paused_task_is_deferred_unqueued_and_resumes_after_loading() -> None:
    engine = Engine()
    engine.add(make_spec(1, first_run_at=at(10), recurrence=Every(timedelta(minutes=1))))
    engine.pause(1)
    snapshots = list(engine.snapshots())
    lazy_engine, _ = lazy(snapshots)

    assert lazy_engine.next_deadline() is None
    eager_engine = eager(snapshots)

    assert lazy_engine.resume(1) == eager_engine.resume(1)
    assert lazy_engine.snapshot(1).state is TaskState.PENDING
    assert lazy_engine.next_deadline() == eager_engine.next_deadline() == at(10)


def test_ids_must_be_unique_across_whole_and_deferred_tasks() -> None:
    snapshots = stored((1, 0, 10), (2, 0, 20))
    source = DictSource(snapshots)
    with pytest.raises(InvalidTaskError, match="twice"):
        Engine().load(snapshots[:1], T0, deferred(snapshots, source))

    engine, _ = lazy(snapshots)
    with pytest.raises(InvalidTaskError, match="already exists"):
        engine.add(make_spec(2))


def test_reading_ahead_loads_the_earliest_first_and_ties_break_as_a_full_load() -> None:
    # Two equal run times with different priorities, one read ahead and one read at
    # its deadline: the backlog still runs the higher priority first.
    snapshots = stored((1, 0, 10), (2, 9, 10), (3, 5, 40), (4, 0, 30))
    engine, source = lazy(snapshots)

    assert engine.load_due_by(at(10), limit=1) == []
    assert source.fetched == [1] and engine.next_cold_run() == at(10)
    assert engine.load_due_by(at(35)) == []
    assert sorted(source.fetched) == [1, 2, 4] and engine.next_cold_run() == at(40)
    assert engine.next_deadline() == at(10)  # the loaded head and the cold one agree

    events = engine.due(at(45), free_workers=4)
    assert runs(events) == runs(eager(snapshots).due(at(45), free_workers=4))
    assert runs(events) == [(2, 1), (3, 1), (1, 1), (4, 1)]
    assert engine.deferred_count == 0 and engine.next_cold_run() is None


def test_tasks_read_elsewhere_are_taken_and_a_change_made_meanwhile_is_kept() -> None:
    snapshots = stored((1, 0, 10), (2, 0, 20), (3, 0, 30))
    engine, source = lazy(snapshots)
    engine.cancel(2)  # read here, then changed: the batch below has its old row

    events, known = engine.adopt(snapshots[:2], unreadable=[3])

    assert source.fetched == [2, 3]  # 1 was taken from the batch, 3 read again here
    assert events == [] and engine.deferred_count == 0
    assert {s.id: s.state for s in known} == {
        1: TaskState.PENDING,
        2: TaskState.CANCELLED,
        3: TaskState.PENDING,
    }
    assert engine.due(at(30), 4) == eager(snapshots[:1] + snapshots[2:]).due(at(30), 4)


def test_a_row_met_unreadable_when_read_ahead_is_dropped() -> None:
    snapshots = stored((1, 0, 10), (2, 0, 20))
    engine, _ = lazy(snapshots, unreadable={2})

    assert engine.load_due_by(at(25)) == [TaskDropped(2, UNREADABLE)]
    assert 2 not in engine and engine.next_deadline() == at(10)


def finish_all(engine: Engine, events: list[Event], now_s: float, source: DictSource) -> None:
    """End every dispatched run, and commit (``source.store``) what the engine holds."""
    for event in events:
        if isinstance(event, RunDispatched):
            engine.finished(event.run.run_id, RunOutcome.SUCCEEDED, at(now_s))
    source.store(engine.snapshots(load_deferred=False))


def test_a_task_given_back_after_its_run_is_read_again_and_runs_at_its_time() -> None:
    engine = Engine()
    engine.add(make_spec(1, first_run_at=at(10), recurrence=Every(timedelta(seconds=100))))
    engine.add(make_spec(2, first_run_at=at(50)))
    snapshots = list(engine.snapshots())
    lazy_engine, source = lazy(snapshots)
    eager_engine = eager(snapshots)

    events = lazy_engine.due(at(10), 4)
    eager_events = eager_engine.due(at(10), 4)
    assert runs(events) == runs(eager_events) == [(1, 1)]
    finish_all(lazy_engine, events, 11, source)
    finish_all(eager_engine, eager_events, 11, DictSource([]))

    assert lazy_engine.give_back_idle(at(11)) == 1  # next run at 110: not due soon
    assert lazy_engine.deferred_count == 2 and len(lazy_engine) == 2
    assert lazy_engine.next_deadline() == eager_engine.next_deadline() == at(50)
    fetched = len(source.fetched)

    assert runs(lazy_engine.due(at(50), 4)) == runs(eager_engine.due(at(50), 4)) == [(2, 1)]
    assert lazy_engine.next_deadline() == at(110)  # from the kept key: nothing read
    assert lazy_engine.load_due_by(at(60)) == [] and len(source.fetched) == fetched + 1
    assert lazy_engine.load_due_by(at(110)) == [] and lazy_engine.deferred_count == 0
    later = lazy_engine.due(at(110), 4)
    assert runs(later) == runs(eager_engine.due(at(110), 4)) == [(1, 1)]
    [again] = [e.run for e in later if isinstance(e, RunDispatched)]
    assert again.scheduled_at == at(110)  # no drift: from the occurrence


def test_only_idle_tasks_are_given_back_and_a_touched_one_is_read_again() -> None:
    engine = Engine()
    for task_id in (1, 2, 3):
        engine.add(make_spec(task_id, first_run_at=at(10), recurrence=Every(timedelta(hours=1))))
    snapshots = list(engine.snapshots())
    lazy_engine, source = lazy(snapshots)
    events = lazy_engine.due(at(10), 3)
    runs_by_task = {e.run.task_id: e.run for e in events if isinstance(e, RunDispatched)}
    lazy_engine.finished(runs_by_task[1].run_id, RunOutcome.SUCCEEDED, at(11))
    lazy_engine.finished(runs_by_task[2].run_id, RunOutcome.SUCCEEDED, at(11))
    lazy_engine.run_now(2, at(11))  # waits for a worker: not idle
    source.store(lazy_engine.snapshots(load_deferred=False))

    assert lazy_engine.give_back_idle(at(20)) == 1  # 1 only: 2 is queued, 3 still runs
    assert lazy_engine.give_back_idle(at(20)) == 0  # each end is looked at once
    lazy_engine.cancel(1)  # read again to be changed
    assert lazy_engine.snapshot(1).state is TaskState.CANCELLED
    assert lazy_engine.deferred_count == 0


def test_a_row_given_back_that_turns_out_unreadable_is_dropped_when_due() -> None:
    engine = Engine()
    engine.add(make_spec(1, first_run_at=at(10), recurrence=Every(timedelta(seconds=100))))
    engine.add(make_spec(2, first_run_at=at(120)))
    lazy_engine, source = lazy(list(engine.snapshots()))
    finish_all(lazy_engine, lazy_engine.due(at(10), 1), 11, source)
    assert lazy_engine.give_back_idle(at(11)) == 1
    source.unreadable.add(1)  # edited by hand meanwhile

    events = lazy_engine.due(at(130), 4)
    assert [e for e in events if isinstance(e, TaskDropped)] == [TaskDropped(1, UNREADABLE)]
    assert runs(events) == [(2, 1)] and 1 not in lazy_engine
