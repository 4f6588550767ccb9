"""After a start, the scheduler reads the deferred rest of a big schedule in the background.

Real database file, real event loop: the service must be live at once (a task due
right away runs while the rest loads), every row must have been read in the end, and
a row that cannot be read is reported, set aside and kept.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from pytestqt.qtbot import QtBot

from taskgui.core.clock import SystemClock
from taskgui.core.retry import RetryPolicy
from taskgui.core.states import RunOutcome, TaskState
from taskgui.core.task import Command, TaskSpec
from taskgui.runtime.hydration import CHUNK
from taskgui.runtime.service import SchedulerService
from taskgui.store.sqlite import SqliteRepository
from tests.helpers.store import raw_connection

CLOCK = SystemClock()


def later(index: int) -> TaskSpec:
    return TaskSpec(
        name=f"later {index}",
        command=Command(line="true"),
        first_run_at=CLOCK.now() + timedelta(hours=1, seconds=index),
    )


def stored_schedule(db: Path, count: int) -> tuple[int, int]:
    """``count`` tasks an hour ahead, one due now, and one whose row is damaged."""
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
            later(count),
        ],
        CLOCK.now(),
    )
    repository.close()
    with raw_connection(db) as other:
        other.execute("UPDATE tasks SET retry = '[]' WHERE id = ?", (bad.id,))
    return now.id, bad.id


def test_a_big_schedule_is_live_at_once_and_fully_read_soon_after(
    tmp_path: Path, qtbot: QtBot
) -> None:
    db = tmp_path / "taskgui.sqlite3"
    count = 3 * CHUNK
    due_now, bad = stored_schedule(db, count)
    repository = SqliteRepository(db)
    service = SchedulerService(repository, CLOCK, workers=1)
    errors: list[str] = []
    service.error_occurred.connect(errors.append)
    finished: list[tuple[int, RunOutcome]] = []
    service.run_finished.connect(
        lambda ticket, outcome, _: finished.append((ticket.task_id, outcome))
    )
    try:
        recovery = service.start()
        assert recovery.task_count == count + 2
        assert service.engine.deferred_count > 0  # the rest is read after the start

        qtbot.waitUntil(lambda: service.engine.deferred_count == 0, timeout=10_000)
        qtbot.waitUntil(lambda: finished == [(due_now, RunOutcome.SUCCEEDED)], timeout=10_000)

        assert len(errors) == 1 and f"task {bad} could not be read" in errors[0]
        assert bad not in service.engine and len(service.engine) == count + 1
        assert [entry.task_id for entry in repository.quarantined()] == [bad]
        with raw_connection(db) as other:  # kept on disk
            assert other.execute("SELECT count(*) FROM tasks").fetchone() == (count + 2,)
    finally:
        with qtbot.waitSignal(service.stopped, timeout=10_000):
            service.shutdown(grace=0.0)
        service.pool.wait_for_done(5_000)
        repository.close()


def test_a_view_asking_for_every_task_gets_them_all_at_once(tmp_path: Path, qtbot: QtBot) -> None:
    db = tmp_path / "taskgui.sqlite3"
    due_now, bad = stored_schedule(db, 2 * CHUNK)
    repository = SqliteRepository(db)
    service = SchedulerService(repository, CLOCK, workers=1)
    errors: list[str] = []
    service.error_occurred.connect(errors.append)
    try:
        service.start()
        snapshots = service.snapshot()  # no event loop turn in between

        assert service.engine.deferred_count == 0
        assert len(snapshots) == 2 * CHUNK + 1 and bad not in {s.id for s in snapshots}
        assert len(errors) == 1 and f"task {bad}" in errors[0]
        assert service.task(due_now).state in (TaskState.RUNNING, TaskState.SUCCEEDED)
    finally:
        with qtbot.waitSignal(service.stopped, timeout=10_000):
            service.shutdown(grace=0.0)
        service.pool.wait_for_done(5_000)
        repository.close()
