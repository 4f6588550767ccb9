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

from taskgui.core.states import RunOutcome
from taskgui.core.status import TaskSnapshot
from taskgui.core.task_rules import (
    cancel_refusal,
    pause_refusal,
    resume_refusal,
    retry_refusal,
    run_now_refusal,
)


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
    """Whether ``verb`` makes sense for one task now: the engine's own rules
    (``core.task_rules``), so an enabled action is never refused."""
    state, spec = task.state, task.spec
    running = task.status.running > 0  # also a cancelled run still being stopped
    if verb is Verb.RUN_NOW:
        return run_now_refusal(spec, state, running=running) is None
    if verb is Verb.CANCEL:
        return cancel_refusal(spec, state) is None
    if verb is Verb.RETRY:
        return retry_refusal(spec, state, task.status.last_outcome, running=running) is None
    if verb is Verb.PAUSE:
        return pause_refusal(spec, state) is None
    if verb is Verb.RESUME:
        return resume_refusal(spec) is None
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
