"""The questions the window asks before it does something that cannot be undone.

Plain text, every one: they name tasks, and a task named ``<img src=...>`` must read
as exactly that. ``Confirm`` is the shape the window takes them in, so tests answer
without a dialog.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QWidget

from taskgui.core.status import TaskSnapshot

# (parent, title, question) -> True for yes
Confirm = Callable[[QWidget, str, str], bool]


def ask_yes_no(parent: QWidget, title: str, text: str) -> bool:
    """A yes/no question, No by default; plain text, since it may name tasks."""
    box = QMessageBox(
        QMessageBox.Icon.Question,
        title,
        text,
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
        parent,
    )
    box.setTextFormat(Qt.TextFormat.PlainText)
    box.setDefaultButton(QMessageBox.StandardButton.No)
    return box.exec() == QMessageBox.StandardButton.Yes


MAX_NAMES_ASKED = 10


def delete_question(tasks: Sequence[TaskSnapshot]) -> str:
    """What Delete asks: the tasks by name (the first few), and what happens to runs."""
    if len(tasks) == 1:
        text = f"Delete the task “{tasks[0].spec.name}” and its history?"
    else:
        names = "\n".join(f"  • {task.spec.name}" for task in tasks[:MAX_NAMES_ASKED])
        more = len(tasks) - MAX_NAMES_ASKED
        text = f"Delete these {len(tasks)} tasks and their history?\n\n{names}"
        if more > 0:
            text += f"\n  … and {more} more"
    running = sum(1 for task in tasks if task.status.running)
    if running:
        text += (
            "\n\nA running task is stopped first."
            if running == 1
            else f"\n\n{running} running tasks are stopped first."
        )
    return text
