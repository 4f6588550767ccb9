"""The questions the window asks before it does something that cannot be undone.

Plain text, every one: they name tasks, and a task named ``<img src=...>`` must read
as exactly that (they are asked with ``plain_text.ask_yes_no``; a name is isolated so
a bidi override in it cannot reorder the question). ``Confirm`` is the shape the
window takes them in, so tests answer without a dialog.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtWidgets import QWidget

from taskgui.core.status import TaskSnapshot
from taskgui.ui.plain_text import isolated

# (parent, title, question) -> True for yes
Confirm = Callable[[QWidget, str, str], bool]


MAX_NAMES_ASKED = 10


def delete_question(tasks: Sequence[TaskSnapshot]) -> str:
    """What Delete asks: the tasks by name (the first few), and what happens to runs."""
    if len(tasks) == 1:
        text = f"Delete the task “{isolated(tasks[0].spec.name)}” and its history?"
    else:
        names = "\n".join(f"  • {isolated(task.spec.name)}" for task in tasks[:MAX_NAMES_ASKED])
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


def cancel_question(tasks: Sequence[TaskSnapshot]) -> str:
    """What Cancel asks when it would stop a command in the middle of its work (a
    cancel of tasks that are only waiting is undone by Retry, and is not asked about);
    "" when none of ``tasks`` is running."""
    running = [task for task in tasks if task.status.running]
    if not running:
        return ""
    if len(tasks) == 1:
        return f"Cancel “{isolated(tasks[0].spec.name)}”? It is running: its command is stopped."
    if len(running) == 1:
        name = isolated(running[0].spec.name)
        return f"Cancel these {len(tasks)} tasks? “{name}” is running: its command is stopped."
    return (
        f"Cancel these {len(tasks)} tasks? {len(running)} of them are running: "
        "their commands are stopped."
    )


def dependents_note(
    tasks: Sequence[TaskSnapshot], everything: Sequence[TaskSnapshot], verb: str
) -> str:
    """What a delete or cancel of ``tasks`` leaves waiting: the tasks (not among them)
    that run after one of them, by name; "" when none does."""
    chosen = {task.id for task in tasks}
    waiting = [
        task
        for task in everything
        if task.id not in chosen and any(edge.task_id in chosen for edge in task.spec.after)
    ]
    if not waiting:
        return ""
    names = "\n".join(f"  • {isolated(task.spec.name)}" for task in waiting[:MAX_NAMES_ASKED])
    more = len(waiting) - MAX_NAMES_ASKED
    if more > 0:
        names += f"\n  … and {more} more"
    what = "they would wait for it for ever" if verb == "delete" else "they would wait"
    return f"\n\nThese tasks run after it, and {what}:\n{names}\n\n{verb.capitalize()} anyway?"
