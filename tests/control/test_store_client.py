"""``StoreClient``: lock, recover, perform here, or send a request and wait.

Over the memory store and a real scheduler lock file. The process "running the
schedule" is a second connection that answers requests from inside the client's
``sleep`` (the moment the client waits), so nothing here needs a thread or a sleep.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from taskgui.control.operations import Operations
from taskgui.control.recovery import recover
from taskgui.control.store_client import RequestFailedError, StoreClient
from taskgui.core.clock import FakeClock
from taskgui.core.engine.engine import Engine
from taskgui.core.errors import InvalidTaskError
from taskgui.core.events import TaskRemoved
from taskgui.core.operation import Op
from taskgui.core.states import RunOutcome, TaskState
from taskgui.store.memory import MemoryRepository
from taskgui.store.requests import REQUEST_EXPIRY, Request, answer_request, read_added_ids
from taskgui.store.sqlite.lock import SchedulerLock, is_locked
from tests.helpers.factories import T0, fixed_retry, make_spec


class Scheduler:
    """The other process: its own connection and engine, answering what is open."""

    def __init__(self, store: MemoryRepository) -> None:
        self.store = store.connect()
        self.engine = Engine()
        recover(self.store, self.engine, T0)
        self.operations = Operations(self.engine, self.store)
        self.answered: list[Op] = []

    def perform(self, request: Request, now: datetime) -> str | None:
        events = self.operations.perform(request.op, request.task_id, request.payload, now)
        if request.op is Op.ADDED:
            self.store.apply(events, now)
        self.answered.append(request.op)
        return None

    def answer_open(self, now: datetime) -> None:
        for row in self.store.open_requests():
            self.store.complete_request(row.id, answer_request(row, now, self.perform), now)


def client_for(
    store: MemoryRepository,
    database: Path,
    clock: FakeClock,
    sleep: Callable[[float], None] | None = None,
) -> StoreClient:
    def wait(seconds: float) -> None:
        clock.advance(seconds)
        if sleep is not None:
            sleep(seconds)

    return StoreClient(
        store=store,
        lock=SchedulerLock(database),
        clock=clock,
        running=lambda: is_locked(database),
        holder=lambda: "process 4242",
        place=str(database),
        sleep=wait,
        timeout=1.0,
    )


@pytest.fixture
def database(tmp_path: Path) -> Path:
    return tmp_path / "tasks.sqlite3"  # only its lock file is ever made


def test_with_nobody_running_the_schedule_a_change_is_performed_here(database: Path) -> None:
    store, clock = MemoryRepository(), FakeClock(T0)
    client = client_for(store, database, clock)
    task = client.add_task(make_spec(0, first_run_at=T0 + timedelta(hours=1)))
    assert store.open_requests() == []  # nobody to tell
    assert client.runs_here
    assert client.change(Op.PAUSE, task.id) is True
    assert store.get(task.id).spec.paused
    assert not is_locked(database)  # let go again


def test_performing_here_recovers_the_schedule_first(database: Path) -> None:
    """A run left open by a process that died is interrupted (and retried), as at a
    start, before the change is made."""
    store, clock = MemoryRepository(), FakeClock(T0)
    crashed = store.connect()
    (spec,) = crashed.add_tasks([make_spec(0, retry=fixed_retry(3, delay=15))], T0)
    engine = Engine()
    engine.add(spec)
    crashed.apply(engine.due(T0, 1), T0)  # running when it "crashed"
    client = client_for(store, database, clock)
    client.cancel(spec.id)
    (run,) = store.runs(spec.id)
    assert run.outcome is RunOutcome.INTERRUPTED
    assert store.get(spec.id).state is TaskState.CANCELLED


def test_while_another_process_runs_it_the_change_is_requested_and_waited_for(
    database: Path,
) -> None:
    store, clock = MemoryRepository(), FakeClock(T0)
    with SchedulerLock(database):
        scheduler = Scheduler(store)
        client = client_for(store, database, clock, lambda _: scheduler.answer_open(clock.now()))
        task = client.add_task(make_spec(0, first_run_at=T0 + timedelta(hours=1)))
        assert not client.runs_here
        assert [row.op for row in store.open_requests()] == ["added"]  # announced
        assert client.change(Op.PAUSE, task.id) is False
        assert scheduler.answered == [Op.ADDED, Op.PAUSE]
        assert scheduler.engine.snapshot(task.id).spec.paused


def test_a_refused_request_raises_its_answer(database: Path) -> None:
    store, clock = MemoryRepository(), FakeClock(T0)
    with SchedulerLock(database):
        scheduler = Scheduler(store)
        client = client_for(store, database, clock, lambda _: scheduler.answer_open(clock.now()))
        with pytest.raises(RequestFailedError, match="no task with id 99"):
            client.resume(99)


def test_an_unanswered_request_times_out_naming_who_holds_the_lock(database: Path) -> None:
    store, clock = MemoryRepository(), FakeClock(T0)
    with SchedulerLock(database):
        client = client_for(store, database, clock)  # nobody answers
        with pytest.raises(RequestFailedError) as raised:
            client.pause(3)
    message = str(raised.value)
    assert "did not answer within 1s" in message
    assert "process 4242" in message and str(database) in message
    assert [row.op for row in store.open_requests()] == ["pause"]  # it stays queued


def test_tasks_added_are_told_in_notices_of_many_that_never_expire(database: Path) -> None:
    """A trial: an import beside a running daemon filed a notice a task, and those the
    daemon reached after 30 s had expired, their tasks never scheduled. One notice now
    names up to a thousand tasks, and a notice of added tasks is acted on however late;
    a task deleted before it is read keeps none of the others out."""
    store = MemoryRepository()
    clock = FakeClock(T0)
    scheduler = Scheduler(store)
    with SchedulerLock(database):  # the other process runs the schedule
        client = client_for(store, database, clock)
        stored = client.add_tasks([make_spec(name=f"t{index}") for index in range(2_345)])
    assert len(store.open_requests()) == 3  # 1,000 + 1,000 + 345
    store.apply([TaskRemoved(stored[5].id)], T0)  # deleted before the daemon read it
    scheduler.answer_open(T0 + REQUEST_EXPIRY * 10)  # the daemon got to them late
    assert scheduler.answered == [Op.ADDED] * 3
    assert all(spec.id in scheduler.engine for spec in stored if spec.id != stored[5].id)
    assert store.open_requests() == []


def test_an_added_notice_that_names_no_ids_is_answered_with_why() -> None:
    for payload in (None, "[", '{"ids": "x"}', '{"ids": [0]}', '{"ids": [true]}'):
        with pytest.raises(InvalidTaskError):
            read_added_ids(payload)
    assert read_added_ids('{"ids": [1, 2]}') == [1, 2]


def test_a_scheduler_that_refuses_batched_notices_is_told_of_each_task(database: Path) -> None:
    """A review: a daemon from before batched notices, left running through an upgrade,
    answers one that names no task id "names no task", and the tasks stayed unscheduled."""
    store, clock = MemoryRepository(), FakeClock(T0)

    class OldScheduler(Scheduler):
        def perform(self, request: Request, now: datetime) -> str | None:
            if request.task_id is None:
                return f"request {request.op.value} names no task"
            return super().perform(request, now)

    with SchedulerLock(database):
        old = OldScheduler(store)
        client = client_for(store, database, clock, lambda _: old.answer_open(clock.now()))
        stored = client.add_tasks([make_spec(name=f"t{index}") for index in range(5)])
    old.answer_open(clock.now())
    assert all(spec.id in old.engine for spec in stored)


def test_an_added_notice_of_more_ids_than_any_taskgui_sends_is_refused() -> None:
    """A review: one hand-written row of 300,000 ids held the daemon's inbox for
    minutes; duplicates are read once."""
    with pytest.raises(InvalidTaskError, match="more than"):
        read_added_ids('{"ids": [' + ",".join(["7"] * 1_001) + "]}")
    assert read_added_ids('{"ids": [3, 3, 4, 3]}') == [3, 4]
    with pytest.raises(InvalidTaskError):
        read_added_ids('{"ids": ' + "[" * 100_000 + "]" * 100_000 + "}")
