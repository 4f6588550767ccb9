"""The task actions shared by the toolbar, the context menu and the keyboard.

One ``QAction`` per verb, enabled only when it makes sense for *every* selected task
(Retry for failed ones, Resume for paused ones, ...), so the toolbar and the context
menu always agree and never offer something that would only produce an error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QWidget

from taskgui.core.states import OverlapPolicy, RunOutcome, TaskState
from taskgui.core.status import TaskSnapshot

_ACTIVE = {TaskState.PENDING, TaskState.RETRYING, TaskState.RUNNING, TaskState.PAUSED}


class Verb(Enum):
    NEW = "New Task…"
    RUN_NOW = "Run Now"
    CANCEL = "Cancel"
    RETRY = "Retry Now"
    PAUSE = "Pause"
    RESUME = "Resume"
    EDIT = "Edit…"
    DUPLICATE = "Duplicate…"
    DELETE = "Delete…"
    HISTORY = "Show History"


@dataclass(frozen=True, slots=True)
class _Look:
    # Plain values: a QKeySequence made at import time, before the QApplication
    # exists, crashes Qt.
    shortcut: QKeySequence.StandardKey | str
    tip: str


_LOOKS = {
    Verb.NEW: _Look(QKeySequence.StandardKey.New, "Create a scheduled task"),
    Verb.RUN_NOW: _Look("Ctrl+R", "Run the selected tasks now"),
    Verb.CANCEL: _Look("Ctrl+.", "Cancel the selected tasks (stops a running one)"),
    Verb.RETRY: _Look("Ctrl+Shift+R", "Retry the selected failed tasks now"),
    Verb.PAUSE: _Look("Ctrl+P", "Stop starting scheduled runs of these tasks"),
    Verb.RESUME: _Look("Ctrl+Shift+P", "Start scheduled runs again"),
    Verb.EDIT: _Look("Return", "Edit the selected task"),
    Verb.DUPLICATE: _Look("Ctrl+D", "Create a copy of the selected task"),
    Verb.DELETE: _Look(QKeySequence.StandardKey.Delete, "Delete the selected tasks"),
    Verb.HISTORY: _Look("Ctrl+H", "Show the runs of the selected task"),
}


def allowed(verb: Verb, task: TaskSnapshot) -> bool:
    """Whether ``verb`` makes sense for one task in its current state."""
    state = task.state
    if verb is Verb.RUN_NOW:
        if state is TaskState.RUNNING:
            return task.spec.overlap is OverlapPolicy.PARALLEL
        return not (state is TaskState.CANCELLED and task.spec.recurrence.is_recurring)
    if verb is Verb.CANCEL:
        return state in _ACTIVE
    if verb is Verb.RETRY:
        last = task.status.last_outcome
        failed_last = last is not None and last.is_failure and state is TaskState.PENDING
        return state in (TaskState.RETRYING, TaskState.EXHAUSTED) or failed_last
    if verb is Verb.PAUSE:
        return state in _ACTIVE and not task.spec.paused
    if verb is Verb.RESUME:
        return task.spec.paused and not state.is_terminal
    return True


_SINGLE = {Verb.EDIT, Verb.DUPLICATE, Verb.HISTORY}


class TaskActions:
    """Owns the QActions and keeps their enabled state in step with the selection."""

    def __init__(self, parent: QWidget) -> None:
        self.by_verb: dict[Verb, QAction] = {}
        for verb in Verb:
            action = QAction(verb.value, parent)
            look = _LOOKS[verb]
            action.setShortcut(QKeySequence(look.shortcut))
            action.setToolTip(f"{look.tip} ({action.shortcut().toString()})")
            action.setStatusTip(look.tip)
            self.by_verb[verb] = action
        self.update([])

    def __getitem__(self, verb: Verb) -> QAction:
        return self.by_verb[verb]

    def update(self, selection: Sequence[TaskSnapshot]) -> None:
        for verb, action in self.by_verb.items():
            if verb is Verb.NEW:
                action.setEnabled(True)
            elif not selection or (verb in _SINGLE and len(selection) != 1):
                action.setEnabled(False)
            else:
                action.setEnabled(all(allowed(verb, task) for task in selection))


def failed(outcome: RunOutcome | None) -> bool:
    return outcome is not None and outcome.is_failure
