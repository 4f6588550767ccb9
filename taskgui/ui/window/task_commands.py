"""What the window's task actions do: ask the task dialog or the person, then the
service; report every refusal at once.

Kept out of ``MainWindow`` so the window only builds and connects. The service is read
through a callable at each use, because the window may ``adopt`` another one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtWidgets import QWidget

from taskgui.core.clock import Clock
from taskgui.core.errors import TaskguiError
from taskgui.core.status import TaskSnapshot
from taskgui.core.task import TaskId
from taskgui.runtime.schedule_client import LiveScheduleClient
from taskgui.ui.plain_text import isolated
from taskgui.ui.task_dialog.dialog import DialogMode, TaskDialog
from taskgui.ui.window.actions import Verb, allowed
from taskgui.ui.window.questions import Confirm, delete_question
from taskgui.ui.window.task_list import TaskList

DialogFactory = Callable[..., TaskDialog]


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

    def handlers(self) -> dict[Verb, Callable[[], None]]:
        """What each verb's action does (but History, which the window shows)."""
        return {
            Verb.NEW: self.new_task,
            Verb.RUN_NOW: lambda: self.each(self._service().run_now),
            Verb.CANCEL: lambda: self.each(self._service().cancel),
            Verb.RETRY: lambda: self.each(self._service().retry_now),
            Verb.PAUSE: lambda: self.each(self._service().pause),
            Verb.RESUME: lambda: self.each(self._service().resume),
            Verb.EDIT: self.edit_selected,
            Verb.DUPLICATE: self.duplicate_selected,
            Verb.DELETE: self.delete_selected,
        }

    def pause_all(self) -> None:
        """Pause every task that can be paused now."""
        self.each(self._service().pause, self._all_where(Verb.PAUSE))

    def resume_all(self) -> None:
        """Resume every paused task."""
        self.each(self._service().resume, self._all_where(Verb.RESUME))

    def _all_where(self, verb: Verb) -> list[TaskSnapshot]:
        return self._tasks.tasks_where(lambda task: allowed(verb, task))

    def new_task(self) -> None:
        dialog = self._dialog_factory(self._clock, self._window, mode=DialogMode.CREATE)
        if dialog.exec() and (spec := dialog.result_spec()) is not None:
            stored = self._service().add_task(spec)
            self._tasks.select_task(stored.id)

    def edit_selected(self) -> None:
        tasks = self._tasks.selected_tasks()
        if len(tasks) != 1:
            return
        dialog = self._dialog_factory(
            self._clock, self._window, spec=tasks[0].spec, mode=DialogMode.EDIT
        )
        if dialog.exec() and (spec := dialog.result_spec()) is not None:
            self._service().update_task(spec)

    def duplicate_selected(self) -> None:
        tasks = self._tasks.selected_tasks()
        if len(tasks) != 1:
            return
        dialog = self._dialog_factory(
            self._clock, self._window, spec=tasks[0].spec, mode=DialogMode.DUPLICATE
        )
        if dialog.exec() and (spec := dialog.result_spec()) is not None:
            stored = self._service().add_task(spec)
            self._tasks.select_task(stored.id)

    def delete_selected(self) -> None:
        """Delete the selected tasks (after asking); the row after them is selected
        then, so the keyboard keeps its place (Delete, Delete, ... works down a list)."""
        tasks = self._tasks.selected_tasks()
        if not tasks or not self._confirm(self._window, "Delete Tasks", delete_question(tasks)):
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
