"""The window over a schedule that another process runs (as with ``taskgui daemon``)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from taskgui.app import window as app
from taskgui.core.clock import SystemClock
from taskgui.core.retry import RetryPolicy
from taskgui.core.states import TaskState
from taskgui.core.task import Command, TaskSpec
from taskgui.runtime.remote import RemoteScheduler
from taskgui.store.sqlite.lock import holder_pid, is_locked, lock_path_for
from taskgui.store.sqlite.repository import SqliteRepository
from taskgui.ui.desktop.autostart import Autostart
from taskgui.ui.desktop.settings import Settings
from taskgui.ui.desktop.shell import DesktopShell
from taskgui.ui.window.actions import Verb
from taskgui.ui.window.main_window import MainWindow
from tests.helpers.processes import request_server

ROOT = Path(__file__).resolve().parents[3]
CLOCK = SystemClock()
ADD_ARGUMENTS = ("--name", "From the CLI", "--command", "true", "--in", "1h")


def wait_for_state(
    qtbot: QtBot, window: MainWindow, task_id: int, state: TaskState, timeout: int
) -> None:
    def reached() -> None:
        snapshot = window.model.snapshot_of(task_id)
        assert snapshot is not None and snapshot.state is state

    qtbot.waitUntil(reached, timeout=timeout)


def spec_due_now(name: str) -> TaskSpec:
    return TaskSpec(
        name=name,
        command=Command(line="true"),
        first_run_at=CLOCK.now(),
        retry=RetryPolicy.no_retry(),
    )


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
        wait_for_state(qtbot, window, task_id, TaskState.PAUSED, 3_000)
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


def test_when_the_daemon_stops_the_window_offers_to_run_the_schedule_itself(
    db: Path, qtbot: QtBot, tmp_path: Path
) -> None:
    settings = Settings.at(str(tmp_path / "settings.ini"))
    autostart = Autostart(tmp_path / "autostart" / "taskgui.desktop", ("taskgui",))
    repository = SqliteRepository(db)
    with request_server(db) as daemon:
        remote = RemoteScheduler(repository, CLOCK, safety_ms=100)
        remote.start()
        window = MainWindow(remote, CLOCK, location=str(db), schedule_owner=remote.owner)
        qtbot.addWidget(window)
        shell = DesktopShell(
            window, settings, autostart, tray_available=False, quit_app=lambda: None
        )
        takeover = app.Takeover(db, settings, remote)
        window.run_here_requested.connect(lambda: takeover.run_here(shell))
        shell.start()
        try:
            assert not window.no_scheduler.isVisible()
            daemon.terminate()
            daemon.wait(timeout=10)
            qtbot.waitUntil(window.no_scheduler.isVisible, timeout=5_000)
            assert window.no_scheduler.message_label.text().startswith(
                f"It was run by process {daemon.pid}, which has stopped: tasks that come due"
            )
            writer = SqliteRepository(db)  # a task comes due while nothing runs it
            try:
                (due,) = writer.add_tasks([spec_due_now("Waits for a scheduler")], CLOCK.now())
            finally:
                writer.close()
            qtbot.waitUntil(lambda: window.model.snapshot_of(due.id) is not None, timeout=3_000)

            qtbot.mouseClick(window.no_scheduler.run_here_button, Qt.MouseButton.LeftButton)

            assert holder_pid(lock_path_for(db)) == os.getpid()
            assert takeover.local is not None and window.service is takeover.local.service
            assert shell.runs_here
            assert not window.no_scheduler.isVisible()
            assert window.owner_label.text() == "Schedule run by this window"

            wait_for_state(qtbot, window, due.id, TaskState.SUCCEEDED, 10_000)
        finally:
            window.close_for_quit()
            shell.close()
            takeover.close()
            repository.close()
    assert not is_locked(db)  # closing let go of it
