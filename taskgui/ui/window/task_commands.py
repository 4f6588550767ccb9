"""What the window's task actions do: ask the task dialog or the person, then the
service; report every refusal at once.

Kept out of ``MainWindow`` so the window only builds and connects. The service is read
through a callable at each use, because the window may ``adopt`` another one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime, time, timedelta
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QWidget

from taskgui.core.clock import Clock
from taskgui.core.conditions import SystemConditions
from taskgui.core.errors import TaskguiError
from taskgui.core.status import TaskSnapshot
from taskgui.core.task import TaskId, TaskSpec
from taskgui.runtime.schedule_client import LiveScheduleClient
from taskgui.ui.plain_text import isolated
from taskgui.ui.task_dialog.mode import DialogMode
from taskgui.ui.window.actions import Verb, allowed
from taskgui.ui.window.questions import (
    Confirm,
    cancel_question,
    delete_question,
    dependents_note,
)
from taskgui.ui.window.task_list import TaskList

if TYPE_CHECKING:
    from taskgui.ui.task_dialog.dialog import TaskDialog

DialogFactory = Callable[..., "TaskDialog"]


class TaskCommands:
    """New, edit, duplicate, delete and the per-task operations of the selection.

    ``report`` shows a message to the person; ``acted`` is called after an operation
    on tasks (the window refreshes its actions' enabled state).
    """

    def __init__(
        self,
        window: QWidget,
        service: Callable[[], LiveScheduleClient],
        tasks: TaskList,
        clock: Clock,
        *,
        dialog_factory: DialogFactory,
        confirm: Confirm,
        report: Callable[[str], None],
        acted: Callable[[], None],
    ) -> None:
        self._window = window
        self._service = service
        self._tasks = tasks
        self._clock = clock
        self._dialog_factory = dialog_factory
        self._confirm = confirm
        self._report = report
        self._acted = acted
        self._awaited: TaskSpec | None = None  # added here, its id not known yet

    def handlers(self) -> dict[Verb, Callable[[], None]]:
        """What each verb's action does (but History, which the window shows)."""
        return {
            Verb.NEW: self.new_task,
            Verb.RUN_NOW: lambda: self.each(self._service().run_now),
            Verb.CANCEL: self.cancel_selected,
            Verb.RETRY: lambda: self.each(self._service().retry_now),
            Verb.PAUSE: lambda: self.each(self._service().pause),
            Verb.RESUME: lambda: self.each(self._service().resume),
            Verb.EDIT: self.edit_selected,
            Verb.DUPLICATE: self.duplicate_selected,
            Verb.DELETE: self.delete_selected,
        }

    def pause_for(self, delta: timedelta) -> None:
        """Pause the selected tasks for a while: they resume by themselves."""
        until = self._clock.now() + delta
        self.each(lambda task_id: self._service().pause(task_id, until))

    def pause_until_tomorrow_morning(self) -> None:
        """Pause the selected tasks until 09:00 tomorrow, local time."""
        self.each(lambda task_id: self._service().pause(task_id, tomorrow_at_nine(self._clock)))

    def pause_all(self) -> None:
        """Pause every task that can be paused now."""
        self.each(self._service().pause, self._all_where(Verb.PAUSE))

    def resume_all(self) -> None:
        """Resume every paused task."""
        self.each(self._service().resume, self._all_where(Verb.RESUME))

    def _system(self) -> SystemConditions | None:
        """What this machine can report for run conditions (None: not known here)."""
        return self._service().conditions_now()

    def _everything(self) -> list[TaskSnapshot]:
        """Every task in the table: what a task may run after."""
        return self._tasks.tasks_where(lambda _task: True)

    def _all_where(self, verb: Verb) -> list[TaskSnapshot]:
        return self._tasks.tasks_where(lambda task: allowed(verb, task))

    def new_task(self) -> None:
        dialog = self._dialog_factory(
            self._clock, self._window, mode=DialogMode.CREATE, system=self._system(),
            tasks=self._everything(),
        )  # fmt: skip
        if dialog.exec() and (spec := dialog.result_spec()) is not None:
            self._add_and_select(spec)

    def _add_and_select(self, spec: TaskSpec) -> None:
        """Add the task and select it: now, or, on a followed schedule (the id comes
        later), once it is stored (``on_tasks_stored``)."""
        self._awaited = spec
        stored = self._service().add_task(spec)
        if stored.id:
            self._awaited = None
            self._tasks.select_task(stored.id)

    def on_tasks_stored(self, pairs: Sequence[tuple[TaskSpec, TaskSnapshot]]) -> None:
        """Select the task added from a dialog here, now that it has its id (tasks
        imported or added elsewhere meanwhile leave the selection alone)."""
        for asked, snapshot in pairs:
            if asked is self._awaited:
                self._awaited = None
                self._tasks.select_task(snapshot.id)

    def edit_selected(self) -> None:
        tasks = self._tasks.selected_tasks()
        if len(tasks) != 1:
            return
        dialog = self._dialog_factory(
            self._clock, self._window, spec=tasks[0].spec, mode=DialogMode.EDIT,
            system=self._system(), tasks=self._everything(),
        )  # fmt: skip
        if dialog.exec() and (spec := dialog.result_spec()) is not None:
            self._service().update_task(spec)

    def duplicate_selected(self) -> None:
        tasks = self._tasks.selected_tasks()
        if len(tasks) != 1:
            return
        dialog = self._dialog_factory(
            self._clock, self._window, spec=tasks[0].spec, mode=DialogMode.DUPLICATE,
            system=self._system(), tasks=self._everything(),
        )  # fmt: skip
        if dialog.exec() and (spec := dialog.result_spec()) is not None:
            self._add_and_select(spec)

    def cancel_selected(self) -> None:
        """Cancel the selected tasks; asks first when that stops a running command
        (Ctrl+. is one slip of the fingers) or other tasks run after them."""
        tasks = self._tasks.selected_tasks()
        note = dependents_note(tasks, self._everything(), "cancel") if tasks else ""
        question = (cancel_question(tasks) + note).strip()
        if question and not self._confirm(self._window, "Cancel Tasks", question):
            return
        self.each(self._service().cancel, tasks)

    def delete_selected(self) -> None:
        """Delete the selected tasks (after asking); the row after them is selected
        then, so the keyboard keeps its place (Delete, Delete, ... works down a list)."""
        tasks = self._tasks.selected_tasks()
        if not tasks:
            return
        question = delete_question(tasks) + dependents_note(tasks, self._everything(), "delete")
        if not self._confirm(self._window, "Delete Tasks", question):
            return
        self._tasks.remember_place(tasks)
        self.each(self._service().delete, tasks)
        self._tasks.keep_place()  # done now if the rows went at once, else when they go

    def each(
        self, operation: Callable[[TaskId], None], tasks: Sequence[TaskSnapshot] | None = None
    ) -> None:
        """Apply an operation to every selected task; report what failed, all at once."""
        problems = []
        for task in self._tasks.selected_tasks() if tasks is None else tasks:
            try:
                operation(task.id)
            except TaskguiError as error:
                problems.append(f"{isolated(task.spec.name)}: {error}")
        if problems:
            self._report("\n".join(problems))
        self._acted()


def tomorrow_at_nine(clock: Clock) -> datetime:
    """09:00 local time tomorrow (as an aware UTC time), the usual "after the night"."""
    local = clock.now().astimezone()
    morning = datetime.combine(local.date() + timedelta(days=1), time(9, 0))
    return morning.astimezone().astimezone(UTC)  # a naive time is read as local
