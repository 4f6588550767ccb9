"""RunLog: the lines a failing schedule leaves in the log, from the schedule's signals."""

from __future__ import annotations

import logging

import pytest

from taskgui.core.errors import TaskNotFoundError
from taskgui.core.events import TaskExhausted
from taskgui.core.retry import RetryPolicy
from taskgui.core.states import RunOutcome, SlotKind
from taskgui.core.status import RunResult, RunTicket, TaskSnapshot, TaskStatus
from taskgui.core.task import TaskId
from taskgui.runtime.run_log import RunLog
from taskgui.runtime.schedule_signals import ScheduleSignals
from tests.helpers.factories import T0, make_spec

LOG = logging.getLogger("taskgui.test_run_log")
SPEC = make_spec(4, name="backup", retry=RetryPolicy(max_attempts=3))


def task_of(task_id: TaskId) -> TaskSnapshot:
    if task_id != SPEC.id:
        raise TaskNotFoundError(task_id)
    return TaskSnapshot(SPEC, TaskStatus())


def ticket(task_id: TaskId, attempt: int) -> RunTicket:
    return RunTicket(
        run_id=attempt,
        task_id=task_id,
        attempt=attempt,
        kind=SlotKind.OCCURRENCE if attempt == 1 else SlotKind.RETRY,
        scheduled_at=T0,
        dispatched_at=T0,
    )


@pytest.fixture
def schedule() -> ScheduleSignals:
    return ScheduleSignals()


def lines(caplog: pytest.LogCaptureFixture) -> list[tuple[str, str]]:
    return [(record.levelname, record.getMessage()) for record in caplog.records]


def test_failures_are_info_and_giving_up_is_a_warning(
    schedule: ScheduleSignals, caplog: pytest.LogCaptureFixture
) -> None:
    run_log = RunLog(schedule, task_of, LOG)  # kept: Qt holds its slots weakly
    caplog.set_level(logging.INFO, LOG.name)
    timed_out = RunResult(exit_code=-15, error="timed out after 5s")

    schedule.run_finished.emit(ticket(4, 1), RunOutcome.SUCCEEDED, RunResult(exit_code=0))
    schedule.run_finished.emit(ticket(4, 2), RunOutcome.TIMED_OUT, timed_out)
    schedule.task_exhausted.emit(TaskExhausted(4, "backup", 2, RunOutcome.TIMED_OUT), "")

    assert lines(caplog) == [
        ("INFO", "task 4 'backup': attempt 2 of 3 timed out (exit -15): timed out after 5s"),
        (
            "WARNING",
            "task 4 'backup' gave up after 2 attempts; the last timed out (exit -15): "
            "timed out after 5s",
        ),
    ]
    del run_log


def test_a_task_deleted_meanwhile_is_still_logged(
    schedule: ScheduleSignals, caplog: pytest.LogCaptureFixture
) -> None:
    run_log = RunLog(schedule, task_of, LOG)
    caplog.set_level(logging.INFO, LOG.name)

    schedule.run_finished.emit(ticket(9, 1), RunOutcome.FAILED, RunResult(error="exit status 1"))

    assert lines(caplog) == [
        ("INFO", "task 9 (deleted): attempt 1 failed (exit none): exit status 1")
    ]
    del run_log


def test_a_task_that_gave_up_at_start_is_logged(
    schedule: ScheduleSignals, caplog: pytest.LogCaptureFixture
) -> None:
    run_log = RunLog(schedule, task_of, LOG)
    caplog.set_level(logging.INFO, LOG.name)

    run_log.recovered([TaskExhausted(4, "backup", 1, RunOutcome.INTERRUPTED)])

    assert lines(caplog) == [
        (
            "WARNING",
            "task 4 'backup' gave up after 1 attempt; the last was interrupted (exit none): "
            "taskgui stopped during the run",
        )
    ]
