"""Opening a schedule's file at a start, and saying why a start failed.

Each ends in a dialog that says what happened and what to do, never a traceback: a
damaged database is moved aside only if the person agrees. Used by the composition
roots of the window (``app.window``, ``app.shared_window``).
"""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtWidgets import QWidget

from taskgui.core.clock import SystemClock
from taskgui.core.errors import TaskguiError
from taskgui.store.errors import DatabaseCorruptError
from taskgui.store.sqlite.opening import open_sqlite
from taskgui.store.sqlite.repository import SqliteRepository
from taskgui.ui.plain_text import ask_yes_no, critical, inform, warn

log = logging.getLogger("taskgui.app.window")


def open_store(path: Path, reset_corrupt: bool) -> SqliteRepository | None:
    """Open the database, asking before a damaged one is moved aside."""
    clock = SystemClock()
    try:
        repository, moved = open_sqlite(path, clock.now(), reset_corrupt=reset_corrupt)
    except DatabaseCorruptError as error:
        log.error("%s", error)
        if not ask_yes_no(
            None,
            "taskgui — damaged database",
            f"{error}\n\nMove the damaged file aside (it is kept, renamed, next to the "
            "original) and start with an empty schedule?",
        ):
            return None
        repository, moved = open_sqlite(path, clock.now(), reset_corrupt=True)
    if moved is not None:
        log.warning("the damaged database was moved to %s; started a fresh one", moved)
        inform(
            None, "taskgui", f"The damaged database was kept as:\n{moved}\n\nA new one was started."
        )
    return repository


def start_failed(error: TaskguiError) -> None:
    """Say why the start failed: in a dialog, in the log file and on stderr alike.

    The dialog alone is lost when nobody looks (autostart at login, a launcher with no
    terminal), and a person asking for help needs the log to say it.
    """
    log.error("taskgui could not start: %s", error)
    critical(None, "taskgui", str(error))


def show_error(parent: QWidget | None, message: str) -> None:
    """An error a person must see, in the log too."""
    log.error("%s", message)
    warn(parent, "taskgui", message)
