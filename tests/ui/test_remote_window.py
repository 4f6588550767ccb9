"""The window over a schedule that another process runs (as with ``taskgui daemon``)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from taskgui import app
from taskgui.core.clock import SystemClock
from taskgui.core.states import TaskState
from taskgui.runtime.remote import RemoteScheduler
from taskgui.store.sqlite import SqliteRepository
from taskgui.ui.actions import Verb
from taskgui.ui.main_window import MainWindow
from tests.helpers.processes import request_server

ROOT = Path(__file__).resolve().parents[2]
CLOCK = SystemClock()
ADD_ARGUMENTS = ("--name", "From the CLI", "--command", "true", "--in", "1h")


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "daemon.sqlite3"
    SqliteRepository(path).close()
    return path


@pytest.fixture
def daemon(db: Path) -> Iterator[subprocess.Popen[str]]:
    """Stands in for ``taskgui daemon``: holds the lock and answers requests."""
    with request_server(db) as child:
        yield child


def test_the_window_shows_and_steers_a_schedule_run_elsewhere(
    db: Path, daemon: subprocess.Popen[str], qtbot: QtBot
) -> None:
    repository = SqliteRepository(db)
    remote = RemoteScheduler(repository, CLOCK)
    remote.start()
    window = MainWindow(remote, CLOCK, location=str(db), schedule_owner=remote.owner)
    qtbot.addWidget(window)
    window.show()
    try:
        assert window.owner_label.text() == f"Schedule run by process {daemon.pid}"
        assert not window.workers_label.isVisible()  # the daemon's pool size is unknown
        added = subprocess.run(
            [sys.executable, "-m", "taskgui", "--db", str(db), "add", *ADD_ARGUMENTS],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            timeout=30,
            check=True,
        )
        task_id = int(added.stdout)
        qtbot.waitUntil(lambda: window.select_task(task_id), timeout=3_000)
        window.actions_[Verb.PAUSE].trigger()

        def paused() -> None:
            snapshot = window.model.snapshot_of(task_id)
            assert snapshot is not None and snapshot.state is TaskState.PAUSED

        qtbot.waitUntil(paused, timeout=3_000)
    finally:
        window.close()
        remote.shutdown()
        repository.close()


@pytest.fixture
def private_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ("XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_RUNTIME_DIR"):
        folder = tmp_path / name.lower()
        folder.mkdir(mode=0o700)
        monkeypatch.setenv(name, str(folder))
    yield
    logger = logging.getLogger("taskgui")
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
        handler.close()


def test_the_app_follows_a_daemon_instead_of_starting_a_second_scheduler(
    db: Path, daemon: subprocess.Popen[str], qtbot: QtBot, private_dirs: None
) -> None:
    seen: list[tuple[str, type]] = []

    def look_and_close() -> None:
        windows = [w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow)]
        visible = [w for w in windows if w.isVisible()]
        if not visible:
            QTimer.singleShot(20, look_and_close)
            return
        seen.append((visible[0].owner_label.text(), type(visible[0].service)))
        visible[0].close()  # no tray offscreen: closing quits

    QTimer.singleShot(0, look_and_close)
    assert app.main(["--db", str(db)]) == 0
    assert seen == [(f"Schedule run by process {daemon.pid}", RemoteScheduler)]
    assert daemon.poll() is None  # the daemon runs on
