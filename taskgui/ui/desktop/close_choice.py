"""What closing the window means where there is no tray: quit, or keep running headless.

With a tray, closing hides the window and the schedule goes on. Without one there is
nothing to come back to, and closing used to quit (stopping the schedule) without a
word. Now the person is told and chooses: quit (tasks wait for the next start), keep
the schedule running in the background (``taskgui daemon`` takes it over, and the
next start of the window shows it), or stay. The choice can be remembered; Settings
offers it again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import Enum

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QMessageBox, QWidget

from taskgui.ui.plain_text import isolated


class CloseChoice(Enum):
    """What to do when the window closes and nothing could keep the app around."""

    ASK = "ask"  # the remembered answer when there is none: ask each time
    QUIT = "quit"
    BACKGROUND = "background"  # hand the schedule to taskgui daemon, then quit
    CANCEL = "cancel"  # keep the window open


# (parent, names of running tasks) -> (the choice, remember it)
CloseChooser = Callable[[QWidget, Sequence[str]], tuple[CloseChoice, bool]]

TITLE = "Close taskgui?"
KEEP_RUNNING = "Keep Running in Background"


def close_text(running: Sequence[str]) -> str:
    """What the question says: what closing does, and what runs now."""
    lines = [
        "This desktop has no system tray to keep taskgui in, so closing the window "
        "stops the schedule: no task runs until taskgui starts again.",
        "",
        "Keep it running in the background instead: taskgui daemon runs the schedule "
        "without a window, and starting taskgui again shows it.",
    ]
    if running:
        names = ", ".join(f"“{isolated(name)}”" for name in running[:3])
        more = f" and {len(running) - 3} more" if len(running) > 3 else ""
        lines += [
            "",
            f"Running now: {names}{more}. Either way they are stopped and run again, the "
            "same attempt (quit: at the next start; in the background: at once).",
        ]
    return "\n".join(lines)


def ask_close_choice(parent: QWidget, running: Sequence[str]) -> tuple[CloseChoice, bool]:
    """The question as a message box; plain text, since it names tasks."""
    box = QMessageBox(parent)
    box.setIcon(QMessageBox.Icon.Question)
    box.setWindowTitle(TITLE)
    box.setTextFormat(Qt.TextFormat.PlainText)
    box.setText(close_text(running))
    background = box.addButton(KEEP_RUNNING, QMessageBox.ButtonRole.AcceptRole)
    quit_button = box.addButton("Quit", QMessageBox.ButtonRole.DestructiveRole)
    box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(background)
    remember = QCheckBox("Do not ask again (Settings can change it)", box)
    box.setCheckBox(remember)
    box.exec()
    clicked = box.clickedButton()
    if clicked is background:
        return CloseChoice.BACKGROUND, remember.isChecked()
    if clicked is quit_button:
        return CloseChoice.QUIT, remember.isChecked()
    return CloseChoice.CANCEL, False
