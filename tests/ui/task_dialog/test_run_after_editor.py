"""The dialog's "Run after" section: picking tasks and outcomes, "only after", cycles
named, an edit kept as it was, and task names shown as plain text."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from taskgui.core.clock import FakeClock
from taskgui.core.dependencies import After, Upstream
from taskgui.core.recurrence import Once
from taskgui.core.status import TaskSnapshot, TaskStatus
from taskgui.core.task import TaskSpec
from taskgui.ui.task_dialog.dialog import TaskDialog
from taskgui.ui.task_dialog.mode import DialogMode
from tests.helpers.factories import make_spec
from tests.ui.task_dialog.test_task_dialog import NOW, accept, click, fill_minimum

HOSTILE = "<b>fetch</b><img src='/dev/zero'>"


def _tasks(*specs: TaskSpec) -> list[TaskSnapshot]:
    return [TaskSnapshot(spec, TaskStatus()) for spec in specs]


def _dialog(qtbot: QtBot, tasks: list[TaskSnapshot], spec: TaskSpec | None = None) -> TaskDialog:
    mode = DialogMode.EDIT if spec is not None else DialogMode.CREATE
    dialog = TaskDialog(FakeClock(NOW), spec=spec, mode=mode, tasks=tasks)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    return dialog


def _pick(dialog: TaskDialog, task_id: int, outcome: After) -> None:
    editor = dialog.run_after
    editor.task_picker.setCurrentIndex(editor.task_picker.findData(task_id))
    editor.outcome.setCurrentIndex(editor.outcome.findData(outcome))


def test_a_plain_task_runs_after_nothing(qtbot: QtBot) -> None:
    dialog = _dialog(qtbot, _tasks(make_spec(1)))
    assert not dialog.run_after.toggle.isChecked()
    fill_minimum(qtbot, dialog)
    spec = accept(qtbot, dialog)
    assert (spec.after, spec.only_after) == ((), False)


def test_pick_two_tasks_and_only_after(qtbot: QtBot) -> None:
    dialog = _dialog(qtbot, _tasks(make_spec(1, name=HOSTILE), make_spec(2, name="build")))
    fill_minimum(qtbot, dialog)
    editor = dialog.run_after
    editor.toggle.setChecked(True)
    # Names are plain items: the combo shows the characters, not markup.
    assert editor.task_picker.itemText(editor.task_picker.findData(1)) == f"{HOSTILE} (1)"
    _pick(dialog, 1, After.SUCCEEDED)
    click(qtbot, editor.add_button)
    assert not editor.add_button.isEnabled()  # already in the list
    _pick(dialog, 2, After.FINISHED)
    click(qtbot, editor.add_button)
    assert [editor.edges.item(row).text() for row in range(editor.edges.count())] == [
        f"after {HOSTILE} (1) succeeds",
        "after build (2) finishes",
    ]
    editor.only_after.setChecked(True)
    assert not dialog.schedule.isEnabled()  # no schedule of its own
    spec = accept(qtbot, dialog)
    assert spec.after == (Upstream(1), Upstream(2, After.FINISHED))
    assert spec.only_after and spec.recurrence == Once()


def test_only_after_without_a_task_cannot_be_saved(qtbot: QtBot) -> None:
    dialog = _dialog(qtbot, _tasks(make_spec(1)))
    fill_minimum(qtbot, dialog)
    dialog.run_after.only_after.setChecked(True)
    assert not dialog.ok_button.isEnabled()
    assert "add a task to run after" in dialog.run_after.error.message()


def test_a_cycle_is_named_and_refused(qtbot: QtBot) -> None:
    a = make_spec(1, name="A")
    b = make_spec(2, name="B", after=(Upstream(1),), only_after=True)
    c = make_spec(3, name="C", after=(Upstream(2),), only_after=True)
    dialog = _dialog(qtbot, _tasks(a, b, c), spec=a)
    assert dialog.run_after.task_picker.findData(1) == -1  # not itself
    dialog.run_after.toggle.setChecked(True)
    _pick(dialog, 3, After.SUCCEEDED)
    click(qtbot, dialog.run_after.add_button)
    assert not dialog.ok_button.isEnabled()
    assert dialog.run_after.error.message() == (
        "this would make a cycle: A (1) -> C (3) -> B (2) -> A (1)"
    )
    dialog.run_after.edges.setCurrentRow(0)
    click(qtbot, dialog.run_after.remove_button)
    assert dialog.ok_button.isEnabled()


def test_editing_a_task_with_upstreams_keeps_them(qtbot: QtBot) -> None:
    a = make_spec(1, name="A")
    b = make_spec(2, name="B", after=(Upstream(1, After.FAILED),), only_after=True)
    dialog = _dialog(qtbot, _tasks(a, b), spec=b)
    assert dialog.run_after.toggle.isChecked()
    assert dialog.run_after.edges.item(0).text() == "after A (1) fails"
    assert accept(qtbot, dialog) == b


def test_an_upstream_that_was_deleted_must_be_removed(qtbot: QtBot) -> None:
    a = make_spec(1, name="A")
    b = make_spec(2, name="B", after=(Upstream(1), Upstream(7)), only_after=True)
    dialog = _dialog(qtbot, _tasks(a, b), spec=b)
    assert dialog.run_after.edges.item(1).text() == "after task 7 (deleted) succeeds"
    assert not dialog.ok_button.isEnabled()
    assert dialog.run_after.error.message() == "task 7 no longer exists; remove it from the list"
    dialog.run_after.edges.setCurrentRow(1)
    click(qtbot, dialog.run_after.remove_button)
    assert accept(qtbot, dialog).after == (Upstream(1),)


def test_a_problem_in_the_folded_section_is_said_on_its_header(qtbot: QtBot) -> None:
    a = make_spec(1, name="A")
    b = make_spec(2, name="B", after=(Upstream(1), Upstream(7)), only_after=True)
    dialog = _dialog(qtbot, _tasks(a, b), spec=b)
    editor = dialog.run_after
    editor.set_expanded(False)
    assert not editor.content.isVisible()
    assert editor.values() is None
    assert editor.toggle.text() == "Run after — needs attention"
    editor.set_expanded(True)
    assert editor.content.isVisible()
    editor.values()
    assert editor.toggle.text() == "Run after"  # unfolded, the message under the list says it
