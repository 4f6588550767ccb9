"""The window says, in its banner, that the schedule stopped because its file went away.

Real windows over a real file: one running the schedule itself, one following a
schedule run elsewhere. The file is deleted under them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from taskgui.core.clock import SystemClock
from taskgui.runtime.remote import RemoteScheduler
from taskgui.runtime.schedule_client import LiveScheduleClient
from taskgui.runtime.service import SchedulerService
from taskgui.store.sqlite.repository import SqliteRepository
from taskgui.ui.window.main_window import MainWindow

CLOCK = SystemClock()
NOTICE_MS = 5_000


@pytest.fixture(params=["runs-it", "follows-it"])
def scheduler(
    request: pytest.FixtureRequest, tmp_path: Path, qtbot: QtBot
) -> Iterator[LiveScheduleClient]:
    """What a window shows: the schedule run here, or one followed from elsewhere."""
    db = tmp_path / "window.sqlite3"
    SqliteRepository(db).close()
    repository = SqliteRepository(db)
    service: LiveScheduleClient
    if request.param == "runs-it":
        service = SchedulerService(repository, CLOCK, workers=1)
    else:
        service = RemoteScheduler(repository, CLOCK, owner=lambda: "taskgui daemon (pid 1)")
    service.start()
    yield service
    with qtbot.waitSignal(service.stopped, timeout=10_000):
        service.shutdown(0.0)
    repository.close()


def test_the_window_says_in_its_banner_that_the_schedule_stopped(
    scheduler: LiveScheduleClient, tmp_path: Path, qtbot: QtBot
) -> None:
    db = tmp_path / "window.sqlite3"
    window = MainWindow(scheduler, CLOCK, location=str(db))
    qtbot.addWidget(window)
    window.show()

    with qtbot.waitSignal(scheduler.store_lost, timeout=NOTICE_MS):
        db.unlink()

    banner = window.banner
    assert banner.isVisible()
    assert banner.title_label.text() == "The schedule has stopped"
    message = banner.message_label.text()
    assert message.startswith(f"{db} was deleted while taskgui had it open")
    assert "start taskgui again" in message
    assert not banner.history_button.isVisible()  # about the schedule, not one task
    window.close()
