"""The real composition root, in-process: it opens the window on a database and quits."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMessageBox
from pytestqt.qtbot import QtBot

from taskgui.app import window as app
from taskgui.core.clock import SystemClock
from taskgui.core.retry import RetryPolicy
from taskgui.core.task import Command, TaskSpec
from taskgui.runtime.remote import describe_owner
from taskgui.store.sqlite.lock import holder_pid, lock_path_for
from taskgui.ui.desktop.close_choice import KEEP_RUNNING, TITLE
from taskgui.ui.window.main_window import MainWindow


@pytest.fixture(autouse=True)
def private_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    yield
    logger = logging.getLogger("taskgui")
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
        handler.close()


def _quit_when_window_shows(seen: list[MainWindow]) -> None:
    def attempt() -> None:
        windows = [w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow)]
        visible = [w for w in windows if w.isVisible()]
        if visible:
            seen.extend(visible)
            visible[0].window_actions["quit"].trigger()  # File > Quit
        else:
            QTimer.singleShot(20, attempt)

    QTimer.singleShot(0, attempt)


def test_the_app_opens_its_window_on_the_database_and_quits_cleanly(
    qtbot: QtBot, tmp_path: Path
) -> None:
    database = tmp_path / "app.sqlite3"
    seen: list[MainWindow] = []
    _quit_when_window_shows(seen)
    assert app.main(["--db", str(database)]) == 0
    assert seen and seen[0].location_label.text() == str(database)
    assert database.exists()
    # The lock was released: the schedule can be opened again at once.
    _quit_when_window_shows(seen)
    assert app.main(["--db", str(database)]) == 0


def test_a_db_in_a_folder_that_does_not_exist_is_refused_in_a_dialog_not_made(
    qtbot: QtBot, tmp_path: Path
) -> None:
    """As the command line refuses it (a trial: the folders were made, and a schedule)."""
    folder = tmp_path / "typo" / "dir"
    seen: list[MainWindow] = []
    said: list[str] = []
    returned = False

    def quit_a_window() -> None:  # one opened on it (as before): quit, to fail below
        windows = [w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow)]
        if returned:
            return  # (not left polling into the next test)
        if windows and windows[0].isVisible():
            seen.append(windows[0])
            windows[0].window_actions["quit"].trigger()
        else:
            QTimer.singleShot(20, quit_a_window)

    QTimer.singleShot(0, quit_a_window)
    _click_when_shown("taskgui", "OK", said)
    code = app.main(["--db", str(folder / "x.sqlite3")])
    returned = True
    assert code == 1
    assert not seen
    assert said and f"the folder {folder} does not exist" in said[0]
    assert not (tmp_path / "typo").exists()


def _click_when_shown(title: str, button_text: str, texts: list[str]) -> None:
    """Press a button of the message box titled ``title`` once it is up (it may be
    modal, in a loop of its own); keep its text."""

    def attempt() -> None:
        boxes = [w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox)]
        for widget in boxes:
            if widget.isVisible() and widget.windowTitle() == title:
                buttons = [b for b in widget.buttons() if b.text() == button_text]
                if buttons:
                    texts.append(widget.text())
                    buttons[0].click()
                    return
        QTimer.singleShot(20, attempt)

    QTimer.singleShot(0, attempt)


def _program(database: Path, *args: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "taskgui", "--db", str(database), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    if "--json" not in args:
        return {"out": done.stdout}
    value = json.loads(done.stdout)
    return value if isinstance(value, dict) else {"runs": value}


def test_keep_running_in_background_hands_the_schedule_to_a_real_daemon(
    qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    database = tmp_path / "handover.sqlite3"
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))  # where commands run, for the daemon too
    asked: list[str] = []
    waited_for: list[str] = []
    started: list[int] = []

    def start_long_task_then_close() -> None:
        windows = [w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow)]
        visible = [w for w in windows if w.isVisible()]
        if not visible:
            QTimer.singleShot(20, start_long_task_then_close)
            return
        window = visible[0]
        if not started:
            retry = RetryPolicy(max_attempts=2, base_delay=timedelta(seconds=1))
            task = window.service.add_task(
                TaskSpec(
                    name="Long",
                    command=Command(line="sleep 30"),
                    first_run_at=SystemClock().now(),
                    retry=retry,
                )
            )
            started.append(task.id)
        if not window.service.busy_workers:
            QTimer.singleShot(20, start_long_task_then_close)
            return
        _click_when_shown(TITLE, KEEP_RUNNING, asked)
        _click_when_shown("taskgui is stopping", "Stop Now", waited_for)
        window.close()  # no tray offscreen: "Close taskgui?"

    QTimer.singleShot(0, start_long_task_then_close)
    assert app.main(["--db", str(database)]) == 0
    daemon = holder_pid(lock_path_for(database))
    assert daemon is not None and daemon != os.getpid()
    try:
        assert describe_owner(daemon).startswith("taskgui daemon")
        assert "“Long”" in asked[0] and "stops the schedule" in asked[0]
        assert waited_for and "Waiting for “Long” to finish" in waited_for[0]
        # The schedule goes on without the window: a task added now runs.
        added = int(_program(database, "add", "--name", "later", "--command", "true")["out"])
        deadline = time.monotonic() + 30
        while _program(database, "show", str(added), "--json")["state"] != "succeeded":
            assert time.monotonic() < deadline, "the daemon did not run the new task"
            time.sleep(0.1)
    finally:
        os.kill(daemon, signal.SIGTERM)
        os.waitpid(daemon, 0)  # started by this process: reap it
    history = _program(database, "history", str(started[0]), "--json")
    # Oldest first: the window's run, stopped by the handover, spent no attempt, so the
    # daemon ran attempt 1 again (and the test's SIGTERM stopped that one).
    runs = list(reversed(history["runs"]))
    assert runs[0]["outcome"] == "interrupted"
    assert runs[0]["error"] == "stopped because taskgui handed its schedule to taskgui daemon"
    assert [run["attempt"] for run in runs] == [1] * len(runs)
