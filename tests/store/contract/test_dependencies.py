"""Tasks that run after others, against every backend: the trigger and the fan-in marks
are committed with the upstream's result, so a restart right after it (a crash before
the downstream task started) runs the downstream task exactly once."""

from __future__ import annotations

from datetime import datetime, timedelta

from taskgui.core.dependencies import After, Upstream
from taskgui.core.engine.engine import Engine
from taskgui.core.events import TaskChanged, TaskDropped
from taskgui.core.states import RunOutcome, SlotKind, WaitReason
from taskgui.core.status import TaskSnapshot, initial_status
from taskgui.core.task import TaskSpec
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


def test_linked_tasks_are_those_a_task_runs_after_and_those_that_run_after_it(
    repository: TaskRepository,
) -> None:
    """What ``show`` names, read without the other tasks (a trial: every task was)."""
    a, b, lone = repository.add_tasks([make_spec(0, name=n) for n in ("A", "B", "lone")], T0)
    [c] = repository.add_tasks([make_spec(0, name="C", after=(Upstream(a.id), Upstream(b.id)))], T0)
    d, e, dropped = repository.add_tasks(
        [
            make_spec(0, name="D", after=(Upstream(c.id, After.FAILED),)),
            make_spec(0, name="E after B", after=(Upstream(b.id),)),
            make_spec(0, name="set aside", after=(Upstream(c.id),)),
        ],
        T0,
    )
    repository.apply([TaskDropped(dropped.id, "its row cannot be read")], T0)

    def linked(spec: TaskSpec) -> list[str]:
        return [task.spec.name for task in repository.linked_tasks(spec)]

    assert linked(c) == ["A", "B", "D"]  # in id order; what is set aside is left out
    assert linked(b) == ["C", "E after B"]
    assert linked(d) == ["C"]
    assert linked(lone) == []
    assert repository.linked_tasks(c)[0] == repository.get(a.id)
    # A task gone: its upstreams' ids still say whom it ran after.
    assert linked(make_spec(99, after=(Upstream(e.id), Upstream(98)))) == ["E after B"]


def test_the_wait_reasons_of_some_tasks_are_those_tasks_only(repository: TaskRepository) -> None:
    a, b, c = repository.add_tasks([make_spec(0, name=n) for n in "abc"], T0)
    for spec, reason in ((a, WaitReason.WORKER), (b, WaitReason.CONCURRENCY_KEY)):
        snapshot = repository.get(spec.id)
        waits = snapshot._replace(status=snapshot.status._replace(waiting=reason))
        repository.apply([TaskChanged(waits)], T0)

    assert repository.wait_reasons() == {a.id: WaitReason.WORKER, b.id: WaitReason.CONCURRENCY_KEY}
    assert repository.wait_reasons([b.id]) == {b.id: WaitReason.CONCURRENCY_KEY}
    assert repository.wait_reasons([c.id, 404]) == {}
    assert repository.wait_reasons([]) == {}
