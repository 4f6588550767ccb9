"""The window's own commands and its menu bar, beside the per-task verbs of ``actions``.

Settings, Close Window, Quit and Pause/Resume All act on the app or the whole schedule,
so they are not enabled by the selection like the task verbs. The menus hold both
kinds, so every command is reachable from the keyboard (Alt+F, Alt+T) and shows its
shortcut. The File menu is where app-wide entries go (import and export, for one).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import timedelta

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu, QMenuBar, QToolBar, QWidget

from taskgui.ui.icons import action_icon
from taskgui.ui.window.actions import TaskActions, Verb
from taskgui.ui.window.task_commands import TaskCommands

VERB_ICONS = {
    Verb.NEW: "new",
    Verb.RUN_NOW: "run",
    Verb.CANCEL: "cancel",
    Verb.RETRY: "retry",
    Verb.PAUSE: "pause",
    Verb.RESUME: "resume",
    Verb.EDIT: "edit",
    Verb.DUPLICATE: "duplicate",
    Verb.DELETE: "delete",
    Verb.HISTORY: "history",
}

# The task verbs in the order of the Tasks menu and the context menu, by group.
VERB_GROUPS = (
    (Verb.RUN_NOW, Verb.CANCEL, Verb.RETRY),
    (Verb.PAUSE, Verb.RESUME),
    (Verb.EDIT, Verb.DUPLICATE, Verb.DELETE),
    (Verb.HISTORY,),
)

_STANDARD = QKeySequence.StandardKey
# key -> text, icon, standard shortcut (None: none), status tip
_LOOKS: dict[str, tuple[str, str, QKeySequence.StandardKey | None, str]] = {
    "settings": ("Settings…", "settings", _STANDARD.Preferences, "Workers, notifications, startup"),
    "close": ("Close Window", "window", _STANDARD.Close, "Close the window"),
    "quit": ("Quit", "quit", _STANDARD.Quit, "Stop the scheduler and quit"),
    "pause_all": ("Pause All Tasks", "pause", None, "Pause every active task"),
    "resume_all": ("Resume All Tasks", "resume", None, "Resume every paused task"),
    "about": ("About taskgui", "", None, "The version, and where the database and log are"),
}


def add_verb_icons(verbs: TaskActions) -> None:
    for verb, name in VERB_ICONS.items():
        verbs[verb].setIcon(action_icon(name))


def build_window_actions(
    parent: QWidget, handlers: Mapping[str, Callable[[], object]]
) -> dict[str, QAction]:
    """One QAction per app-wide command; ``handlers`` maps each key to what it does."""
    actions: dict[str, QAction] = {}
    for key, (text, icon, shortcut, tip) in _LOOKS.items():
        action = QAction(action_icon(icon), text, parent) if icon else QAction(text, parent)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        action.setStatusTip(tip)
        action.triggered.connect(lambda _=False, handler=handlers[key]: handler())
        actions[key] = action
    # Some desktops define no Preferences shortcut; Ctrl+, is the common one.
    if actions["settings"].shortcut().isEmpty():
        actions["settings"].setShortcut(QKeySequence("Ctrl+,"))
    return actions


def add_verb_groups(menu: QMenu, verbs: TaskActions) -> None:
    for number, group in enumerate(VERB_GROUPS):
        if number:
            menu.addSeparator()
        for verb in group:
            menu.addAction(verbs[verb])


def build_menus(
    bar: QMenuBar, verbs: TaskActions, actions: Mapping[str, QAction]
) -> tuple[QMenu, QMenu]:
    """The File, Tasks and Help menus; returns the first two (others add to File)."""
    file_menu = bar.addMenu("&File")
    file_menu.addAction(verbs[Verb.NEW])
    file_menu.addSeparator()
    file_menu.addAction(actions["settings"])
    file_menu.addSeparator()
    file_menu.addAction(actions["close"])
    file_menu.addAction(actions["quit"])
    tasks_menu = bar.addMenu("&Tasks")
    add_verb_groups(tasks_menu, verbs)
    tasks_menu.addSeparator()
    tasks_menu.addAction(actions["pause_all"])
    tasks_menu.addAction(actions["resume_all"])
    help_menu = bar.addMenu("&Help")
    help_menu.addAction(actions["about"])
    return file_menu, tasks_menu


def build_toolbar(parent: QWidget, verbs: TaskActions) -> QToolBar:
    """The task verbs a person reaches for most, with their text beside the icon."""
    toolbar = QToolBar("Tasks", parent)
    toolbar.setObjectName("tasks-toolbar")
    toolbar.setAccessibleName("Task actions")
    toolbar.setMovable(False)
    toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
    toolbar.addAction(verbs[Verb.NEW])
    toolbar.addSeparator()
    for verb in (Verb.RUN_NOW, Verb.PAUSE, Verb.RESUME, Verb.RETRY, Verb.CANCEL):
        toolbar.addAction(verbs[verb])
    toolbar.addSeparator()
    for verb in (Verb.EDIT, Verb.HISTORY, Verb.DELETE):
        toolbar.addAction(verbs[verb])
    return toolbar


def pause_for_menu(
    parent: QWidget, commands: TaskCommands, safely: Callable[[Callable[[], None]], None]
) -> QMenu:
    """Pause for a while: the selected tasks resume by themselves then."""
    menu = QMenu("Pause &For", parent)
    menu.setObjectName("pause_for")
    choices: tuple[tuple[str, Callable[[], None]], ...] = (
        ("1 &Hour", lambda: commands.pause_for(timedelta(hours=1))),
        ("&4 Hours", lambda: commands.pause_for(timedelta(hours=4))),
        ("Until &Tomorrow 09:00", commands.pause_until_tomorrow_morning),
    )
    for text, handler in choices:
        action = menu.addAction(text)
        action.triggered.connect(lambda _=False, chosen=handler: safely(chosen))
    return menu
