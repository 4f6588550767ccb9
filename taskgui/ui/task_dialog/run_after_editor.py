"""The collapsible "Run after" section of the task dialog.

Pick a task and how it must end (succeeds, fails, finishes), add it to the list; with
several, the task runs once all of them have ended so since its last run. "Only after
these" gives it no schedule of its own (the dialog then greys the schedule out). A
choice that would close a cycle is said under the list, naming every task in it, and
Save stays disabled, as the scheduler would refuse it.

Names are untrusted text: the list and the combo box show them as plain items, never
as markup.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from taskgui.core.dependencies import MAX_UPSTREAMS, After, Upstream, cycle_through
from taskgui.core.dependency_text import name_of
from taskgui.core.status import TaskSnapshot
from taskgui.core.task import TaskId, TaskSpec
from taskgui.runtime.guard import never_raises
from taskgui.ui.plain_text import shown
from taskgui.ui.task_dialog.fields import MessageLabel, combo_box, named
from taskgui.ui.task_dialog.foldout import Foldout

_OUTCOMES = (
    ("succeeds", After.SUCCEEDED, "Run when it succeeds"),
    ("fails", After.FAILED, "Run when it fails for good (its retries used up)"),
    ("finishes", After.FINISHED, "Run when it ends either way"),
)
_EDGE = Qt.ItemDataRole.UserRole


@dataclass(frozen=True, slots=True)
class RunAfter:
    """What the section contributes to a task."""

    after: tuple[Upstream, ...]
    only_after: bool


class RunAfterEditor(Foldout):
    """Run after other tasks. Signals: changed(): the list or the box was edited."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("run_after_toggle", "Run after", "Run after", parent)
        self._own_id: TaskId = 0
        self._names: dict[TaskId, str] = {}
        self._upstreams_of: dict[TaskId, list[TaskId]] = {}
        self.edges = named(
            QListWidget(), "run_after_list", "Runs after", "It runs once all of these have ended"
        )
        self.edges.setMaximumHeight(90)
        self.task_picker = combo_box("run_after_task", "Task to run after", [])
        self.outcome = combo_box("run_after_outcome", "How it must end", _OUTCOMES)
        self.add_button = named(QPushButton("Add"), "run_after_add", "Add")
        self.remove_button = named(QPushButton("Remove"), "run_after_remove", "Remove")
        for button in (self.add_button, self.remove_button):
            button.setAutoDefault(False)  # Enter saves the task, as everywhere in the dialog
        self.only_after = named(
            QCheckBox("Only after these (no schedule of its own)"),
            "only_after",
            "Only after these",
            "It never runs on a schedule of its own, only when the tasks above end",
        )
        self.error = MessageLabel(lines=2)
        self.error.setObjectName("run_after_error")
        self._lay_out()
        self.add_button.clicked.connect(self._on_add_clicked)
        self.remove_button.clicked.connect(self._on_remove_clicked)
        self.only_after.toggled.connect(self._on_field_changed)
        self.edges.itemSelectionChanged.connect(self._on_field_changed)
        self.task_picker.currentIndexChanged.connect(self._on_picked)
        self._follow()

    def _lay_out(self) -> None:
        self.content.setObjectName("run_after")
        column = QVBoxLayout(self.content)
        column.addWidget(self.edges)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.task_picker, 1)
        row.addWidget(self.outcome)
        row.addWidget(self.add_button)
        row.addWidget(self.remove_button)
        column.addLayout(row)
        column.addWidget(self.only_after)
        column.addWidget(self.error)

    def focus_order(self) -> list[QWidget]:
        return [
            self.toggle,
            self.edges,
            self.task_picker,
            self.outcome,
            self.add_button,
            self.remove_button,
            self.only_after,
        ]

    # ---------------------------------------------------------------- values

    def set_tasks(self, tasks: Sequence[TaskSnapshot], own_id: TaskId = 0) -> None:
        """The tasks it may run after (all but itself), and the graph to find cycles in."""
        self._own_id = own_id
        self._names = {task.id: shown(task.spec.name) for task in tasks}  # items, not sentences
        self._upstreams_of = {
            task.id: [edge.task_id for edge in task.spec.after] for task in tasks if task.spec.after
        }
        self.task_picker.clear()
        for task in sorted(tasks, key=lambda task: (task.spec.name.casefold(), task.id)):
            if task.id != own_id:
                self.task_picker.addItem(name_of(task.id, self._names), task.id)
        self._follow()

    def set_values(self, spec: TaskSpec) -> None:
        """Show a task's upstreams; expand the section if it has any."""
        self.edges.clear()
        for edge in spec.after:
            self._append(edge)
        self.only_after.setChecked(spec.only_after)
        self.toggle.setChecked(bool(spec.after))
        self._follow()

    def values(self) -> RunAfter | None:
        """The upstreams, a cycle said under the list; None when it cannot be saved."""
        after = tuple(sorted(self._edge(row) for row in range(self.edges.count())))
        only = self.only_after.isChecked()
        message = None
        gone = [edge.task_id for edge in after if edge.task_id not in self._names]
        if only and not after:
            message = "add a task to run after, or untick “Only after these”"
        elif gone and self._names:  # (a dialog given no tasks cannot tell)
            message = f"task {gone[0]} no longer exists; remove it from the list"
        elif self._own_id and after:
            cycle = cycle_through(self._own_id, [e.task_id for e in after], self._upstreams_of)
            if cycle is not None:
                path = " -> ".join(name_of(task_id, self._names) for task_id in cycle)
                message = f"this would make a cycle: {path}"
        self.error.show_message(message)
        self.error.reveal()
        self.show_attention(message is not None)
        return None if message is not None else RunAfter(after=after, only_after=only)

    def _edge(self, row: int) -> Upstream:
        item = self.edges.item(row)
        task_id, after = item.data(_EDGE)
        return Upstream(int(task_id), After(after))

    def _append(self, edge: Upstream) -> None:
        item = QListWidgetItem(edge.describe(name_of(edge.task_id, self._names)))
        item.setData(_EDGE, (edge.task_id, edge.after.value))
        self.edges.addItem(item)

    def _follow(self) -> None:
        chosen = {self._edge(row).task_id for row in range(self.edges.count())}
        picked = self.task_picker.currentData()
        self.add_button.setEnabled(
            picked is not None and picked not in chosen and len(chosen) < MAX_UPSTREAMS
        )
        self.remove_button.setEnabled(bool(self.edges.selectedItems()))

    # ----------------------------------------------------------------- slots

    @never_raises
    def _on_add_clicked(self, *_args: object) -> None:
        picked = self.task_picker.currentData()
        if picked is None:
            return
        self._append(Upstream(int(picked), After(self.outcome.currentData())))
        self._follow()
        self.changed.emit()

    @never_raises
    def _on_remove_clicked(self, *_args: object) -> None:
        for item in self.edges.selectedItems():
            self.edges.takeItem(self.edges.row(item))
        self._follow()
        self.changed.emit()

    @never_raises
    def _on_picked(self, *_args: object) -> None:
        self._follow()

    @never_raises
    def _on_field_changed(self, *_args: object) -> None:
        self._follow()
        self.changed.emit()
