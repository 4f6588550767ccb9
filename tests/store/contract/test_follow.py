"""The FollowedStore contract: a follower reads what changed, and nothing it saw.

Run for every backend that offers it (PostgreSQL may follow later); each answer is
held to a full read of the same store, so "only what changed" never means "less".
"""

from __future__ import annotations

from typing import cast

import pytest

from taskgui.core.engine.engine import Engine
from taskgui.core.states import RunOutcome, WaitReason
from taskgui.core.status import RunResult, TaskSnapshot
from taskgui.store.protocols import FollowedStore, ScheduleStore, TaskChanges
from tests.helpers.factories import T0, at, make_spec
from tests.helpers.store import stored


@pytest.fixture
def follower(sender: ScheduleStore) -> FollowedStore:
    if not hasattr(sender, "task_changes"):
        pytest.skip(f"{type(sender).__name__} offers no follower reads")
    return cast(FollowedStore, sender)


def shown(task: TaskSnapshot) -> TaskSnapshot:
    return stored(task)


def test_the_first_look_gives_every_task(store: ScheduleStore, follower: FollowedStore) -> None:
    specs = store.add_tasks([make_spec(0), make_spec(0), make_spec(0)], T0)
    changes = follower.task_changes({})
    assert [task.id for task in changes.changed] == [spec.id for spec in specs]
    assert [shown(task) for task in changes.changed] == store.list_tasks()
    assert changes.removed == []


def test_nothing_changed_nothing_read(store: ScheduleStore, follower: FollowedStore) -> None:
    store.add_tasks([make_spec(0), make_spec(0)], T0)
    first = follower.task_changes({})
    again = follower.task_changes(first.marks)
    assert (again.changed, again.removed) == ([], [])


def test_only_the_changed_task_is_given_with_its_new_state(
    store: ScheduleStore, follower: FollowedStore
) -> None:
    engine = Engine()
    specs = store.add_tasks([make_spec(0), make_spec(0), make_spec(0)], T0)
    for spec in specs:
        engine.add(spec)
    marks = follower.task_changes({}).marks
    store.apply(engine.pause(specs[1].id), T0)
    changes = follower.task_changes(marks)
    assert [task.id for task in changes.changed] == [specs[1].id]
    assert changes.changed[0].spec.paused
    assert changes.removed == []


def test_a_removed_task_is_named(store: ScheduleStore, follower: FollowedStore) -> None:
    engine = Engine()
    specs = store.add_tasks([make_spec(0), make_spec(0)], T0)
    for spec in specs:
        engine.add(spec)
    marks = follower.task_changes({}).marks
    store.apply(engine.remove(specs[0].id), T0)
    changes = follower.task_changes(marks)
    assert (changes.changed, changes.removed) == ([], [specs[0].id])
    assert list(changes.marks) == [specs[1].id]


def test_a_new_wait_reason_is_a_change_and_is_laid_over(
    store: ScheduleStore, follower: FollowedStore
) -> None:
    engine = Engine()
    spec_a, spec_b = store.add_tasks(
        [make_spec(0, concurrency_key="k"), make_spec(0, concurrency_key="k")], T0
    )
    engine.add(spec_a)
    engine.add(spec_b)
    marks = follower.task_changes({}).marks
    store.apply(engine.due(T0, 2), T0)  # one runs, the other waits for the key
    changes: TaskChanges = follower.task_changes(marks)
    waiting = {task.id: task.status.waiting for task in changes.changed}
    assert waiting[spec_b.id] is WaitReason.CONCURRENCY_KEY
    assert waiting == {task_id: store.wait_reasons().get(task_id) for task_id in waiting}


def test_last_run_ids_and_runs_by_id_agree_with_last_runs(
    store: ScheduleStore, follower: FollowedStore
) -> None:
    engine = Engine()
    specs = store.add_tasks([make_spec(0), make_spec(0), make_spec(0)], T0)
    for spec in specs:
        engine.add(spec)
    store.apply(engine.due(T0, 3), T0)
    first, second, _ = sorted(engine.running_runs)
    store.apply(
        engine.finished(first, RunOutcome.FAILED, at(1)), at(1), {first: RunResult(exit_code=1)}
    )
    store.apply(engine.finished(second, RunOutcome.SUCCEEDED, at(2)), at(2))
    ids = follower.last_run_ids()
    latest = store.last_runs()
    assert ids == {task_id: record.id for task_id, record in latest.items()}
    assert follower.runs_by_id(ids.values()) == sorted(latest.values(), key=lambda r: r.id)
    assert follower.runs_by_id([999_999]) == []
    (opened,) = follower.open_runs()
    assert opened.outcome is None and opened.task_id == specs[2].id
