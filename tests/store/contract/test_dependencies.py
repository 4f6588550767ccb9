"""Tasks that run after others, against every backend: the trigger and the fan-in marks
are committed with the upstream's result, so a restart right after it (a crash before
the downstream task started) runs the downstream task exactly once."""

from __future__ import annotations

from datetime import datetime, timedelta

from taskgui.core.dependencies import After, Upstream
from taskgui.core.engine.engine import Engine
from taskgui.core.states import RunOutcome, SlotKind, WaitReason
from taskgui.core.status import TaskSnapshot, initial_status
from taskgui.store.protocols import TaskRepository
from tests.helpers.factories import T0, make_spec
from tests.helpers.store import Driver
from tests.store.contract.backends import Backend

SECOND = timedelta(seconds=1)


def _restart(backend: Backend, name: str, now: datetime) -> Driver:
    """A new process over the same store: a fresh engine loaded as the daemon loads it
    (the SQLite store defers what it can; tasks with upstreams come whole)."""
    repository = backend.open(name)
    start = repository.load_for_start(now)
    engine = Engine()
    repository.apply(engine.load(start.tasks, now, start.deferred), now)
    return Driver(repository, engine)


def test_an_only_after_task_is_stored_with_no_slot_and_its_edges(
    repository: TaskRepository,
) -> None:
    [a] = repository.add_tasks([make_spec(0, name="A")], T0)
    spec = make_spec(0, name="B", after=(Upstream(a.id, After.FINISHED),), only_after=True)
    [b] = repository.add_tasks([spec], T0)
    stored = repository.get(b.id)
    assert stored == TaskSnapshot(b, initial_status(b))
    assert stored.status.next_run_at is None and stored.status.slot_kind is None
    assert stored.spec.after == (Upstream(a.id, After.FINISHED),)
    assert [s.spec.after for s in repository.load(T0).tasks] == [(), b.after]


def test_the_trigger_and_the_marks_survive_a_crash_before_the_downstream_starts(
    backend: Backend,
) -> None:
    driver = Driver(backend.open("crash"))
    a = driver.add_one(make_spec(0, name="A"))
    c = driver.add_one(make_spec(0, name="C", first_run_at=T0 + timedelta(hours=1)))
    b = driver.add_one(make_spec(0, name="B", after=(Upstream(a),), only_after=True))
    fan_in = driver.add_one(
        make_spec(0, name="after A and C", after=(Upstream(a), Upstream(c)), only_after=True)
    )
    [ticket] = driver.due(T0)
    assert ticket.task_id == a
    driver.start(ticket, T0)
    driver.finish(ticket, RunOutcome.SUCCEEDED, T0 + SECOND)
    # The process dies here: B was triggered but never dispatched.

    now = T0 + 2 * SECOND
    restarted = _restart(backend, "crash", now)
    assert restarted.snapshot(b).status.slot_kind is SlotKind.TRIGGERED
    assert restarted.snapshot(fan_in).status.after_marks == {a}
    tickets = restarted.due(now, workers=4)
    assert [t.task_id for t in tickets] == [b]
    restarted.start(tickets[0], now)
    restarted.finish(tickets[0], RunOutcome.SUCCEEDED, now + SECOND)

    # Once, not twice: after another restart nothing is owed.
    again = _restart(backend, "crash", now + 2 * SECOND)
    assert again.due(now + 2 * SECOND, workers=4) == []
    assert again.engine.snapshot(b).status.waiting is WaitReason.UPSTREAM
    # The fan-in mark for A is still there; C's completion now starts the fan-in task.
    [c_run] = again.due(T0 + timedelta(hours=1), workers=4)
    assert c_run.task_id == c
    again.start(c_run, T0 + timedelta(hours=1))
    again.finish(c_run, RunOutcome.SUCCEEDED, T0 + timedelta(hours=1, seconds=1))
    later = T0 + timedelta(hours=1, seconds=2)
    assert [t.task_id for t in again.due(later, workers=4)] == [fan_in]
    assert again.snapshot(fan_in).status.after_marks == frozenset()
    assert backend.open("crash").get(fan_in).status.after_marks == frozenset()
