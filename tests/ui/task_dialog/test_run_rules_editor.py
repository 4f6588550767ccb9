"""The dialog's "Conditions & spread" section: what it builds, keeps and warns about."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from pytestqt.qtbot import QtBot

from taskgui.core.clock import FakeClock
from taskgui.core.conditions import RunConditions, SystemConditions
from taskgui.core.duration import format_duration
from taskgui.core.recurrence import Every
from taskgui.core.spread import Spread
from taskgui.core.task import Command, TaskSpec
from taskgui.ui.task_dialog.dialog import TaskDialog
from taskgui.ui.task_dialog.mode import DialogMode
from taskgui.ui.task_dialog.run_rules_editor import RunRulesEditor
from tests.ui.task_dialog.test_task_dialog import NOW, accept, fill_minimum, retype

HOME = SystemConditions(on_battery=False, online=True, metered=False, idle_for=timedelta(0))


def _dialog(
    qtbot: QtBot, *, spec: TaskSpec | None = None, system: SystemConditions | None = HOME
) -> TaskDialog:
    mode = DialogMode.EDIT if spec is not None else DialogMode.CREATE
    dialog = TaskDialog(FakeClock(NOW), spec=spec, mode=mode, system=system)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    return dialog


def test_the_section_is_folded_for_a_plain_task(qtbot: QtBot) -> None:
    dialog = _dialog(qtbot)
    assert not dialog.rules.is_expanded()
    fill_minimum(qtbot, dialog)
    spec = accept(qtbot, dialog)
    assert (spec.conditions, spec.spread) == (RunConditions(), None)


def test_conditions_and_spread_are_built_from_the_boxes(qtbot: QtBot) -> None:
    dialog = _dialog(qtbot)
    fill_minimum(qtbot, dialog)
    dialog.schedule.repeat.setCurrentIndex(1)  # every ...
    rules = dialog.rules
    rules.set_expanded(True)
    rules.ac_power.setChecked(True)
    rules.unmetered.setChecked(True)
    assert rules.network.isChecked()  # not metered means online too
    rules.idle.setChecked(True)
    retype(qtbot, rules.idle_for, "15m")
    retype(qtbot, rules.give_up, "2h")
    retype(qtbot, rules.spread, "30s")
    rules.spread_fixed.setChecked(True)

    spec = accept(qtbot, dialog)

    assert spec.conditions == RunConditions(
        ac_power=True,
        network=True,
        unmetered=True,
        idle_for=timedelta(minutes=15),
        give_up_after=timedelta(hours=2),
    )
    assert spec.spread == Spread(timedelta(seconds=30), fixed=True)


def test_editing_a_task_keeps_what_it_had(qtbot: QtBot) -> None:
    """A task made with the CLI's flags loses nothing when saved from the window."""
    stored = TaskSpec(
        id=4,
        name="sync",
        command=Command(line="rclone sync"),
        first_run_at=NOW,
        recurrence=Every(timedelta(hours=1)),
        spread=Spread(timedelta(minutes=10)),
        conditions=RunConditions(network=True, idle_for=timedelta(minutes=5), stop_when_unmet=True),
    )
    dialog = _dialog(qtbot, spec=stored)
    assert dialog.rules.stop_when_unmet.isChecked()
    assert dialog.rules.is_expanded()
    assert dialog.rules.network.isChecked() and dialog.rules.idle.isChecked()
    assert dialog.rules.idle_for.text() == "5m"

    saved = accept(qtbot, dialog)

    assert (saved.conditions, saved.spread) == (stored.conditions, stored.spread)


def test_a_condition_this_machine_cannot_check_is_said_before_saving(qtbot: QtBot) -> None:
    system = replace(HOME, on_battery=None, idle_for=None)
    dialog = _dialog(qtbot, system=system)
    rules = dialog.rules
    rules.set_expanded(True)
    assert not rules.cannot_check.message()
    rules.network.setChecked(True)
    assert not rules.cannot_check.message()  # this one it can check
    rules.ac_power.setChecked(True)
    rules.idle.setChecked(True)
    assert rules.cannot_check.message() == (
        "Cannot be checked here: power, idle time. The task would wait, saying so"
    )


def test_bad_values_are_refused_under_their_fields(qtbot: QtBot) -> None:
    dialog = _dialog(qtbot)
    fill_minimum(qtbot, dialog)
    rules = dialog.rules
    rules.set_expanded(True)
    rules.idle.setChecked(True)
    retype(qtbot, rules.idle_for, "10s")
    qtbot.waitUntil(lambda: not dialog.ok_button.isEnabled())
    assert "between 1m and 1d" in rules.idle_error.message()
    retype(qtbot, rules.idle_for, "10m")
    retype(qtbot, rules.spread, "2d")
    qtbot.waitUntil(lambda: "at most 1d" in rules.spread_error.message())
    assert not dialog.ok_button.isEnabled()


def test_a_hidden_problem_is_named_on_the_folded_header(qtbot: QtBot) -> None:
    editor = RunRulesEditor(HOME)
    qtbot.addWidget(editor)
    editor.spread.setText("nonsense")
    assert editor.values() is None
    assert editor.toggle.text().endswith("needs attention")


def test_a_spread_longer_than_the_interval_is_refused(qtbot: QtBot) -> None:
    stored = TaskSpec(
        id=1,
        name="hourly",
        command=Command(line="true"),
        first_run_at=NOW,
        recurrence=Every(timedelta(hours=1)),
    )
    dialog = _dialog(qtbot, spec=stored)
    dialog.rules.set_expanded(True)
    retype(qtbot, dialog.rules.spread, "2h")
    qtbot.waitUntil(lambda: "shorter than the time between two runs" in dialog.problems()[0])
    assert not dialog.ok_button.isEnabled()


def test_what_cannot_be_checked_is_a_warning_not_a_problem(qtbot: QtBot) -> None:
    dialog = _dialog(qtbot, system=replace(HOME, on_battery=None))
    fill_minimum(qtbot, dialog)
    dialog.rules.set_expanded(True)
    dialog.rules.ac_power.setChecked(True)
    assert dialog.rules.cannot_check.is_warning
    assert dialog.problems() == []
    assert accept(qtbot, dialog).conditions == RunConditions(ac_power=True)


def test_the_spread_says_when_runs_start(qtbot: QtBot) -> None:
    editor = RunRulesEditor(HOME)
    qtbot.addWidget(editor)
    editor.spread.setText("10m")
    assert editor.spread_note.message() == "Each run starts at a random moment up to 10m late"
    editor.spread_fixed.setChecked(True)
    assert editor.spread_note.message() == (
        "A fixed delay per task, chosen from its id when it is saved"
    )
    stored = TaskSpec(
        id=1, name="x", command=Command(line="true"), first_run_at=NOW,
        spread=Spread(timedelta(minutes=10), fixed=True),
    )  # fmt: skip
    editor.set_values(stored)
    offset = Spread(timedelta(minutes=10), fixed=True).offset(1, lambda: 0.0)
    assert (
        editor.spread_note.message() == f"Each run starts {format_duration(offset)} after its time"
    )


def test_stop_if_a_condition_ends_needs_a_condition(qtbot: QtBot) -> None:
    dialog = _dialog(qtbot)
    fill_minimum(qtbot, dialog)
    rules = dialog.rules
    rules.set_expanded(True)
    assert not rules.stop_when_unmet.isEnabled()  # nothing to end yet
    rules.network.setChecked(True)
    assert rules.stop_when_unmet.isEnabled()
    rules.stop_when_unmet.setChecked(True)

    spec = accept(qtbot, dialog)

    assert spec.conditions == RunConditions(network=True, stop_when_unmet=True)
