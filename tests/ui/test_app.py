"""The real composition root, in-process: it opens the window on a database and quits."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from taskgui import app
from taskgui.ui.main_window import MainWindow


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
            visible[0].close()  # the last window: the app quits
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
