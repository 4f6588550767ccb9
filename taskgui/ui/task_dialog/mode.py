"""What a task dialog is for, apart from the dialog: the window names it at every start
and opens the dialog itself only when asked (``open_task_dialog``), so the dialog's
modules are not imported before the window's first rows are painted (about 50-70 ms
of them, a part of the window's start; issue 16).
"""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from taskgui.ui.task_dialog.dialog import TaskDialog


class DialogMode(Enum):
    """What the dialog is for; decides its title, button text and the result's id."""

    CREATE = "create"
    EDIT = "edit"
    DUPLICATE = "duplicate"


def open_task_dialog(*args: Any, **kwargs: Any) -> TaskDialog:
    """``TaskDialog(*args, **kwargs)``, its modules imported at the first one."""
    from taskgui.ui.task_dialog.dialog import TaskDialog  # noqa: PLC0415 - see the docstring

    return TaskDialog(*args, **kwargs)
