"""Where the main window's commands appear: the menu bar, the toolbar, the context menu.

The actions themselves (``actions`` for the task verbs, ``window_actions`` for the
app-wide commands) are made elsewhere; this module puts them in their places on a
window: File (with the transfer entries after New Task), Tasks and Help; the toolbar;
the shortcuts, which work wherever the focus is in the window; and the table's context
menu (with Pause For), built afresh each time it opens so its enabled entries follow
the selection.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMainWindow, QMenu, QTableView, QWidget

from taskgui.ui.window.actions import TaskActions, Verb
from taskgui.ui.window.task_commands import TaskCommands
from taskgui.ui.window.window_actions import (
    add_verb_groups,
    build_menus,
    build_toolbar,
    pause_for_menu,
)


def install_menus(
    window: QMainWindow,
    verbs: TaskActions,
    actions: Mapping[str, QAction],
    transfer: Iterable[QAction],
) -> tuple[QMenu, QMenu]:
    """The menu bar and the toolbar of ``window``; returns the File and Tasks menus."""
    file_menu, tasks_menu = build_menus(window.menuBar(), verbs, actions)
    # File > Import…, Import Crontab…, Export…: after New Task and its separator.
    first_after_new = file_menu.actions()[1]
    file_menu.insertActions(first_after_new, list(transfer))
    file_menu.insertSeparator(first_after_new)
    window.addToolBar(build_toolbar(window, verbs))
    # Shortcuts work wherever focus is in the window, not only in the toolbar.
    for action in (*verbs.by_verb.values(), *actions.values()):
        window.addAction(action)
    return file_menu, tasks_menu


def install_table_actions(table: QTableView, verbs: TaskActions) -> None:
    """Edit (Enter) and Delete (Del) on the table only: in the search field those keys
    mean what they mean in a text field."""
    for verb in (Verb.EDIT, Verb.DELETE):
        verbs[verb].setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        table.addAction(verbs[verb])


def context_menu(
    parent: QWidget,
    verbs: TaskActions,
    commands: TaskCommands,
    safely: Callable[[Callable[[], None]], None],
    *,
    on_a_task: bool = True,
) -> QMenu:
    """The table's context menu: the task verbs and Pause For on a task, New Task on
    the empty space below the rows."""
    menu = QMenu(parent)
    if not on_a_task:
        menu.addAction(verbs[Verb.NEW])
        return menu
    add_verb_groups(menu, verbs)
    pause_for = pause_for_menu(menu, commands, safely)
    pause_for.setEnabled(verbs[Verb.PAUSE].isEnabled())
    menu.insertMenu(verbs[Verb.RESUME], pause_for)
    return menu
