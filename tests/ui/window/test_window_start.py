"""The window's start over a big schedule it runs: the first rows are shown before the
rest is read, and then every task is there, with its latest result (a real database
file, the real worker thread that streams the rest in: runtime/view_start.py)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from pytestqt.qtbot import QtBot

from taskgui.core.states import RunOutcome
from taskgui.core.task import Command, TaskSpec
from taskgui.runtime.service import SchedulerService
from taskgui.store.sqlite.repository import SqliteRepository
from taskgui.store.sqlite.task_stream import BATCH
from taskgui.ui.window.main_window import MainWindow
from tests.helpers.service import CLOCK


def test_the_window_shows_rows_before_every_task_is_read_and_then_all_of_them(
    tmp_path: Path, qtbot: QtBot
) -> None:
    db = tmp_path / "window.sqlite3"
    count = 2 * BATCH
    repository = SqliteRepository(db)
    specs = repository.add_tasks(
        [
            TaskSpec(
                name=f"task {index}",
                command=Command(line="true"),
                first_run_at=CLOCK.now() + timedelta(hours=1, seconds=index),
            )
            for index in range(count)
        ],
        CLOCK.now(),
    )
    # One task with a finished run: its "Last result" must reach its streamed row.
    [ran] = repository.add_tasks(
        [TaskSpec(name="ran", command=Command(line="true"), first_run_at=CLOCK.now())],
        CLOCK.now(),
    )
    first = SchedulerService(repository, CLOCK, workers=1)
    with qtbot.waitSignal(first.run_finished, timeout=10_000):
        first.start()
    with qtbot.waitSignal(first.stopped, timeout=10_000):
        first.shutdown(grace=0.0)
    first.pool.wait_for_done(5_000)
    repository.close()

    repository = SqliteRepository(db)
    service = SchedulerService(repository, CLOCK, workers=1)
    service.start()
    window = MainWindow(service, CLOCK, location=str(tmp_path))
    qtbot.addWidget(window)
    try:
        assert window.model.rowCount() < count  # shown before the rest is read
        window.show()
        qtbot.waitUntil(lambda: window.proxy.rowCount() == count + 1, timeout=20_000)
        assert window.stack.currentWidget() is window.table
        assert service.engine.deferred_count == 0
        shown = {window.model.id_at(row) for row in range(count + 1)}
        assert shown == {s.id for s in specs} | {ran.id}
        last_run = window.model.last_run_of(ran.id)
        assert last_run is not None and last_run.outcome is RunOutcome.SUCCEEDED
    finally:
        window.close()
        with qtbot.waitSignal(service.stopped, timeout=10_000):
            service.shutdown(grace=0.0)
        service.pool.wait_for_done(5_000)
        repository.close()
