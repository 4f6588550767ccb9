"""The scheduler service stops, saying why, when its database file goes away under it.

A real service over a real file, with real threads: the file, its -wal, or the file
replaced by another is removed from under it, and the test waits for ``store_lost``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from taskgui.core.states import TaskState
from taskgui.store.errors import DatabaseReplacedError
from taskgui.store.sqlite.repository import SqliteRepository
from tests.helpers.factories import T0, make_spec
from tests.helpers.service import CLOCK, Harness, spec
from tests.helpers.store import checkpoint, raw_connection

NOTICE_MS = 5_000  # the file watcher sees it at once; the safety poll within 2 s


@pytest.fixture
def harness(tmp_path: Path, qtbot: QtBot) -> Iterator[Harness]:
    h = Harness(tmp_path, qtbot, workers=2)
    yield h
    h.close()


def db_of(harness: Harness) -> Path:
    return harness.repository.path


def names_in(path: Path) -> list[str]:
    with raw_connection(path) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        return [row[0] for row in connection.execute("SELECT name FROM tasks ORDER BY id")]


def later(name: str, seconds: float = 3600) -> Any:
    return spec(name, "true", first_run_at=CLOCK.now() + timedelta(seconds=seconds))


def test_a_deleted_database_stops_the_schedule_and_is_kept(
    harness: Harness, qtbot: QtBot, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    due_soon = harness.service.add_task(
        spec("soon", f"touch {marker}", first_run_at=CLOCK.now() + timedelta(seconds=0.6))
    )
    harness.service.add_task(later("later"))
    errors: list[str] = []
    harness.service.error_occurred.connect(errors.append)

    with qtbot.waitSignal(harness.service.store_lost, timeout=NOTICE_MS) as lost:
        db_of(harness).unlink()

    (message,) = lost.args
    (copy,) = db_of(harness).parent.glob("service.sqlite3.rescued-*")
    assert message.startswith(f"{db_of(harness)} was deleted while taskgui had it open; ")
    assert f"a copy of the schedule it held was saved as {copy}" in message
    assert message.endswith("The schedule has stopped: start taskgui again")
    assert errors == [message]
    assert names_in(copy) == ["soon", "later"]
    # Nothing more runs: the task due in a moment stays pending past its time.
    qtbot.waitUntil(lambda: CLOCK.now() > due_soon.first_run_at + timedelta(seconds=0.5))
    assert harness.state(due_soon.id) is TaskState.PENDING
    assert not marker.exists() and harness.finished == []
    assert not db_of(harness).exists()  # and no fresh file at the path


def test_after_the_loss_changes_are_refused_not_written_where_nobody_reads(
    harness: Harness, qtbot: QtBot
) -> None:
    task = harness.service.add_task(later("kept"))
    with qtbot.waitSignal(harness.service.store_lost, timeout=NOTICE_MS):
        db_of(harness).unlink()

    for change in (
        lambda: harness.service.add_task(later("new")),
        lambda: harness.service.pause(task.id),
        lambda: harness.service.run_now(task.id),
        lambda: harness.service.delete(task.id),
    ):
        with pytest.raises(DatabaseReplacedError, match="was deleted while taskgui had it open"):
            change()
    assert harness.state(task.id) is TaskState.PENDING


def test_a_deleted_wal_stops_the_schedule_with_every_commit_saved(
    harness: Harness, qtbot: QtBot
) -> None:
    db = db_of(harness)
    checkpoint(db)
    for index in range(5):  # the last seconds' work: only in the -wal so far
        harness.service.add_task(later(f"task {index}"))

    with qtbot.waitSignal(harness.service.store_lost, timeout=NOTICE_MS) as lost:
        db.with_name(db.name + "-wal").unlink()

    (message,) = lost.args
    assert f"{db}-wal, the write-ahead log of {db}, was deleted" in message
    assert f"every change committed so far is saved in {db}" in message
    harness.close()  # the process ends
    assert names_in(db) == [f"task {index}" for index in range(5)]


def test_a_replaced_database_stops_the_schedule_and_the_new_file_is_left_alone(
    harness: Harness, qtbot: QtBot, tmp_path: Path
) -> None:
    db = db_of(harness)
    harness.service.add_task(later("ours"))
    other = tmp_path / "restored.sqlite3"
    restored = SqliteRepository(other)
    restored.add_tasks([make_spec(0, name="restored")], T0)
    restored.close()

    with qtbot.waitSignal(harness.service.store_lost, timeout=NOTICE_MS) as lost:
        os.replace(other, db)
    before = db.read_bytes()

    (message,) = lost.args
    assert f"{db} was replaced by another file while taskgui had it open" in message
    (copy,) = db.parent.glob("service.sqlite3.rescued-*")
    assert names_in(copy) == ["ours"]
    harness.close()
    assert db.read_bytes() == before  # nothing written into the file put there
    assert names_in(db) == ["restored"]
