"""The history dialog over a real SQLite history, written by the real engine."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from taskgui.core.states import RunOutcome, SlotKind
from taskgui.store.sqlite import SqliteRepository
from taskgui.ui.formatting import local_time_text
from taskgui.ui.history_view import HistoryDialog, RunColumn
from tests.helpers.factories import T0, at, fixed_retry, make_spec
from tests.helpers.store import Driver


def test_a_retry_shows_as_scheduled_when_it_was_due(tmp_path: Path, qtbot: QtBot) -> None:
    repository = SqliteRepository(tmp_path / "history.sqlite3")
    driver = Driver(repository)
    task_id = driver.add_one(make_spec(0, retry=fixed_retry(3, delay=30)))
    [first] = driver.due(T0)
    driver.finish(first, RunOutcome.FAILED, at(5))  # the retry is decided at 00:05 ...
    [second] = driver.due(at(35))  # ... and is due, and runs, at 00:35
    driver.finish(second, RunOutcome.SUCCEEDED, at(36))

    dialog = HistoryDialog(driver.engine.snapshot(task_id), lambda: repository.runs(task_id))
    qtbot.addWidget(dialog)
    dialog.refresh()

    model = dialog.runs
    retry = model.run_at(0)
    assert retry is not None and retry.kind is SlotKind.RETRY
    scheduled = model.data(model.index(0, RunColumn.SCHEDULED))
    assert scheduled == local_time_text(at(35)) == model.data(model.index(0, RunColumn.STARTED))
    assert scheduled != local_time_text(at(5))
    repository.close()
