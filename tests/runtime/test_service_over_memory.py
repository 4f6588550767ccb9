"""The scheduler service over the memory store: it knows the store by its protocols.

Nothing here is SQLite: tasks run, requests from "another process" (a second
connection to the same in-memory store) are performed and answered through its
request queue, woken by its change feed, and a command is told of no database file.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
from pytestqt.qtbot import QtBot

from taskgui.core.operation import Op
from taskgui.core.states import RunOutcome, TaskState
from taskgui.runtime.service import SchedulerService
from taskgui.store.memory import MemoryRepository
from taskgui.store.requests import encode_spec
from tests.helpers.service import CLOCK, spec


@pytest.fixture
def store() -> MemoryRepository:
    return MemoryRepository()


@pytest.fixture
def service(store: MemoryRepository, qtbot: QtBot) -> Iterator[SchedulerService]:
    service = SchedulerService(store, CLOCK, workers=2, kill_grace=0.3)
    errors: list[str] = []
    service.error_occurred.connect(errors.append)
    service.start()
    yield service
    with qtbot.waitSignal(service.stopped, timeout=10_000):
        service.shutdown(grace=0.0)
    service.pool.wait_for_done(5_000)
    assert errors == []


def answered(sender: MemoryRepository, request_id: int) -> bool:
    return sender.request_outcome(request_id)[0]


def test_a_task_runs_and_its_result_is_in_the_memory_store(
    service: SchedulerService, store: MemoryRepository, qtbot: QtBot
) -> None:
    with qtbot.waitSignal(service.run_finished, timeout=10_000) as finished:
        task = service.add_task(spec("hello", "printf '%s' \"${TASKGUI_DB-no database}\""))
    _, outcome, result = finished.args
    assert outcome is RunOutcome.SUCCEEDED
    assert result.output == "no database"  # memory has no location to hand a command
    (run,) = store.runs(task.id)
    assert (run.outcome, run.output) == (RunOutcome.SUCCEEDED, "no database")
    assert store.get(task.id).state is TaskState.SUCCEEDED


def test_a_request_from_another_connection_is_performed_and_answered(
    service: SchedulerService, store: MemoryRepository, qtbot: QtBot
) -> None:
    later = CLOCK.now() + timedelta(hours=1)
    task = service.add_task(spec("later", "true", first_run_at=later))
    sender = store.connect()
    request_id = sender.submit_request(Op.PAUSE, task.id, None, CLOCK.now())
    qtbot.waitUntil(lambda: answered(sender, request_id), timeout=5_000)
    assert sender.request_outcome(request_id) == (True, None)
    assert service.task(task.id).spec.paused
    assert sender.get(task.id).spec.paused  # committed, for every connection


def test_a_refused_request_is_answered_with_the_reason(
    service: SchedulerService, store: MemoryRepository, qtbot: QtBot
) -> None:
    sender = store.connect()
    request_id = sender.submit_request(Op.RESUME, 4242, None, CLOCK.now())
    qtbot.waitUntil(lambda: answered(sender, request_id), timeout=5_000)
    done, error = sender.request_outcome(request_id)
    assert done and error is not None and "4242" in error


def test_a_task_added_by_another_connection_is_scheduled_when_announced(
    service: SchedulerService, store: MemoryRepository, qtbot: QtBot
) -> None:
    sender = store.connect()
    (stored,) = sender.add_tasks([spec("from the cli", "true")], CLOCK.now())
    with qtbot.waitSignal(service.run_finished, timeout=10_000) as finished:
        sender.submit_request(Op.ADDED, stored.id, None, CLOCK.now())
    assert finished.args[0].task_id == stored.id
    assert finished.args[1] is RunOutcome.SUCCEEDED


def test_an_edit_requested_by_another_connection_reaches_the_schedule(
    service: SchedulerService, store: MemoryRepository, qtbot: QtBot
) -> None:
    later = CLOCK.now() + timedelta(hours=1)
    task = service.add_task(spec("before", "true", first_run_at=later))
    sender = store.connect()
    edited = task.with_id(task.id)
    edited = type(task)(
        **{**{f: getattr(task, f) for f in task.__dataclass_fields__}, "name": "after"}
    )
    request_id = sender.submit_request(Op.UPDATE, task.id, encode_spec(edited), CLOCK.now())
    qtbot.waitUntil(lambda: answered(sender, request_id), timeout=5_000)
    assert sender.request_outcome(request_id) == (True, None)
    assert service.task(task.id).spec.name == "after"
    assert sender.get(task.id).spec.name == "after"


def test_its_own_commits_do_not_wake_the_inbox(
    service: SchedulerService, store: MemoryRepository
) -> None:
    later = CLOCK.now() + timedelta(hours=1)
    service.add_task(spec("quiet", "true", first_run_at=later))
    assert store.changed() is False  # the service's connection: nothing from others
