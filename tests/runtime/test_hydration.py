"""After a start, the scheduler reads the deferred rest of a big schedule in the background.

Real database file, real event loop: the service must be live at once (a task due
right away runs while the rest loads), every row must have been read in the end, and
a row that cannot be read is reported, set aside and kept.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from taskgui.core.clock import SystemClock
from taskgui.core.recurrence import Every, Once, Recurrence
from taskgui.core.retry import RetryPolicy
from taskgui.core.states import RunOutcome, TaskState
from taskgui.core.task import Command, TaskSpec
from taskgui.runtime.hydration import CHUNK, READ_AHEAD
from taskgui.runtime.service import SchedulerService
from taskgui.store.sqlite.repository import SqliteRepository
from tests.helpers.store import raw_connection

CLOCK = SystemClock()
ONCE = Once()


def later(index: int) -> TaskSpec:
    return TaskSpec(
        name=f"later {index}",
        command=Command(line="true"),
        first_run_at=CLOCK.now() + timedelta(hours=1, seconds=index),
    )


def stored_schedule(
    db: Path, count: int, bad_in: timedelta = timedelta(hours=1)
) -> tuple[int, int]:
    """``count`` tasks an hour ahead, one due now, and one whose row is damaged, due
    in ``bad_in``."""
    repository = SqliteRepository(db)
    repository.add_tasks([later(index) for index in range(count)], CLOCK.now())
    [now, bad] = repository.add_tasks(
        [
            TaskSpec(
                name="now",
                command=Command(line="true"),
                first_run_at=CLOCK.now(),
                retry=RetryPolicy.no_retry(),
            ),
            TaskSpec(
                name="damaged",
                command=Command(line="true"),
                first_run_at=CLOCK.now() + bad_in,
            ),
        ],
        CLOCK.now(),
    )
    repository.close()
    with raw_connection(db) as other:  # its columns as written: only decoding fails
        other.execute("UPDATE tasks SET retry = '[]' WHERE id = ?", (bad.id,))
    return now.id, bad.id


def store_one(
    db: Path, name: str, first_run_at: datetime, recurrence: Recurrence = ONCE
) -> TaskSpec:
    """One task running ``true`` (no retry), stored in ``db``."""
    repository = SqliteRepository(db)
    spec = TaskSpec(
        name=name,
        command=Command(line="true"),
        first_run_at=first_run_at,
        recurrence=recurrence,
        retry=RetryPolicy.no_retry(),
    )
    [task] = repository.add_tasks([spec], CLOCK.now())
    repository.close()
    return task


@contextmanager
def service_on(
    db: Path, qtbot: QtBot, read_ahead: timedelta = READ_AHEAD
) -> Iterator[tuple[SchedulerService, list[str]]]:
    """A service over ``db`` (not started yet) and the errors it reports; stopped after."""
    repository = SqliteRepository(db)
    service = SchedulerService(repository, CLOCK, workers=1, read_ahead=read_ahead)
    errors: list[str] = []
    service.error_occurred.connect(errors.append)
    try:
        yield service, errors
    finally:
        with qtbot.waitSignal(service.stopped, timeout=10_000):
            service.shutdown(grace=0.0)
        service.pool.wait_for_done(5_000)
        repository.close()


def test_a_big_schedule_is_live_at_once_and_keeps_what_is_not_due_soon_unread(
    tmp_path: Path, qtbot: QtBot
) -> None:
    db = tmp_path / "taskgui.sqlite3"
    count = 3 * CHUNK
    due_now, bad = stored_schedule(db, count, bad_in=READ_AHEAD / 2)
    with service_on(db, qtbot) as (service, errors):
        finished: list[tuple[int, RunOutcome]] = []
        service.run_finished.connect(
            lambda ticket, outcome, _: finished.append((ticket.task_id, outcome))
        )
        with qtbot.waitSignal(service.loaded, timeout=10_000):
            recovery = service.start()
            assert recovery.task_count == count + 2
            assert service.engine.deferred_count > 0  # the rest is read after the start
        # The damaged row was due soon, so read ahead (and reported); the tasks an hour
        # ahead are still known by id and run time only.
        assert service.engine.deferred_count == count
        qtbot.waitUntil(lambda: finished == [(due_now, RunOutcome.SUCCEEDED)], timeout=10_000)

        assert len(errors) == 1 and f"task {bad} could not be read" in errors[0]
        assert bad not in service.engine and len(service.engine) == count + 1
        with raw_connection(db) as other:  # set aside and kept on disk
            assert other.execute("SELECT task_id FROM quarantine").fetchall() == [(bad,)]
            assert other.execute("SELECT count(*) FROM tasks").fetchone() == (count + 2,)


def test_a_task_left_unread_is_read_before_its_time_and_runs_then(
    tmp_path: Path, qtbot: QtBot
) -> None:
    db = tmp_path / "taskgui.sqlite3"
    repository = SqliteRepository(db)
    [soon] = repository.add_tasks(
        [
            TaskSpec(
                name="in two seconds",
                command=Command(line="true"),
                first_run_at=CLOCK.now() + timedelta(seconds=2),
                retry=RetryPolicy.no_retry(),
            )
        ],
        CLOCK.now(),
    )
    repository.add_tasks([later(index) for index in range(10)], CLOCK.now())
    repository.close()
    with service_on(db, qtbot, read_ahead=timedelta(milliseconds=500)) as (service, errors):
        with qtbot.waitSignal(service.loaded, timeout=10_000):
            service.start()
        assert service.engine.deferred_count == 11  # "in two seconds" too
        with qtbot.waitSignal(service.run_finished, timeout=10_000) as finished:
            pass
        ticket, outcome, _ = finished.args
        assert (ticket.task_id, outcome) == (soon.id, RunOutcome.SUCCEEDED)
        assert ticket.scheduled_at == soon.first_run_at
        assert service.engine.deferred_count == 10 and errors == []


@pytest.mark.parametrize("ahead_ms", [100, 0], ids=["read ahead", "read when due"])
def test_a_damaged_row_met_late_is_reported_and_the_schedule_goes_on(
    tmp_path: Path, qtbot: QtBot, ahead_ms: int
) -> None:
    db = tmp_path / "taskgui.sqlite3"
    _due_now, bad = stored_schedule(db, 10, bad_in=timedelta(seconds=1))
    ahead = timedelta(milliseconds=ahead_ms)
    with service_on(db, qtbot, read_ahead=ahead) as (service, errors):
        with qtbot.waitSignal(service.loaded, timeout=10_000):
            service.start()
        assert errors == [] and service.engine.deferred_count == 11  # not read yet
        qtbot.waitUntil(lambda: len(errors) == 1, timeout=10_000)
        assert f"task {bad} could not be read" in errors[0]
        assert bad not in service.engine
        # The service still runs: a task added now runs.
        added = service.add_task(
            TaskSpec(name="after", command=Command(line="true"), first_run_at=CLOCK.now())
        )
        qtbot.waitUntil(lambda: service.task(added.id).state is TaskState.SUCCEEDED, timeout=10_000)


def test_a_view_asking_for_every_task_gets_them_all_at_once(tmp_path: Path, qtbot: QtBot) -> None:
    db = tmp_path / "taskgui.sqlite3"
    due_now, bad = stored_schedule(db, 2 * CHUNK)
    with service_on(db, qtbot) as (service, errors):
        service.start()
        snapshots = service.snapshot()  # no event loop turn in between

        assert service.engine.deferred_count == 0
        assert len(snapshots) == 2 * CHUNK + 1 and bad not in {s.id for s in snapshots}
        assert len(errors) == 1 and f"task {bad}" in errors[0]
        assert service.task(due_now).state in (TaskState.RUNNING, TaskState.SUCCEEDED)


def test_a_file_that_cannot_be_read_while_loading_is_reported_and_retried(
    tmp_path: Path, qtbot: QtBot
) -> None:
    """The tasks are not at fault: none is dropped, and all are back once it reads."""
    db = tmp_path / "taskgui.sqlite3"
    stored_schedule(db, CHUNK)
    # Every task within its reach, so that reading goes on after the start.
    with service_on(db, qtbot, read_ahead=timedelta(hours=2)) as (service, errors):
        service.start()
        with raw_connection(db) as other:  # another process takes the table away
            other.execute("ALTER TABLE tasks RENAME TO tasks_elsewhere")
        qtbot.waitUntil(lambda: any("no such table" in error for error in errors), timeout=5_000)
        assert service.engine.deferred_count > 0  # nothing dropped
        with raw_connection(db) as other:
            other.execute("ALTER TABLE tasks_elsewhere RENAME TO tasks")

        # Each retry is 5 s apart, and one waits while a run is still going.
        qtbot.waitUntil(lambda: service.engine.deferred_count == 0, timeout=30_000)
        assert len(service.engine) == CHUNK + 1  # all but the damaged row


def test_an_empty_schedule_is_loaded_at_once(tmp_path: Path, qtbot: QtBot) -> None:
    with service_on(tmp_path / "taskgui.sqlite3", qtbot) as (service, errors):
        with qtbot.waitSignal(service.loaded, timeout=1_000):
            service.start()
        assert errors == [] and len(service.engine) == 0


def test_a_task_whose_stored_row_misleads_the_start_still_runs_on_time(
    tmp_path: Path, qtbot: QtBot
) -> None:
    """A hand-edited run time (a real number) is not guessed queued; once the task is
    read, the timer must be armed for it."""
    db = tmp_path / "taskgui.sqlite3"
    task = store_one(db, "edited", CLOCK.now() + timedelta(seconds=1))
    with raw_connection(db) as other:
        other.execute("UPDATE tasks SET next_run_at = next_run_at + 0.5 WHERE id = ?", (task.id,))
    with service_on(db, qtbot) as (service, _errors):
        service.start()
        with qtbot.waitSignal(service.run_finished, timeout=10_000) as finished:
            pass
        ticket, outcome, _ = finished.args
        assert (ticket.task_id, outcome) == (task.id, RunOutcome.SUCCEEDED)


def test_a_task_that_ran_goes_back_to_id_and_run_time_and_runs_again_on_time(
    tmp_path: Path, qtbot: QtBot
) -> None:
    """What keeps a long-running daemon small: a task that ran and will not run again
    soon is given back (read again before its next run, which is not late or drifted)."""
    db = tmp_path / "taskgui.sqlite3"
    first = CLOCK.now() + timedelta(seconds=1)
    task = store_one(db, "every 4 s", first, Every(timedelta(seconds=4)))
    with service_on(db, qtbot, read_ahead=timedelta(seconds=1)) as (service, errors):
        tickets = []
        service.run_finished.connect(lambda ticket, _outcome, _result: tickets.append(ticket))
        service.start()
        qtbot.waitUntil(lambda: len(tickets) == 1, timeout=10_000)
        # Given back at the next look (within a second or so), then read again.
        qtbot.waitUntil(lambda: service.engine.deferred_count == 1, timeout=5_000)
        qtbot.waitUntil(lambda: len(tickets) == 2, timeout=15_000)
        assert [t.scheduled_at for t in tickets] == [first, first + timedelta(seconds=4)]
        assert errors == [] and service.task(task.id).status.last_outcome is RunOutcome.SUCCEEDED
