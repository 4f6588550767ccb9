"""The task dialog's notification rule: "As in Settings" by default, any of the five."""

from __future__ import annotations

from dataclasses import replace

from pytestqt.qtbot import QtBot

from taskgui.core.clock import FakeClock
from taskgui.core.notify_rules import parse_rule
from taskgui.ui.task_dialog.mode import DialogMode
from tests.ui.task_dialog.test_task_dialog import accept, clock, fill_minimum, open_dialog

__all__ = ["clock"]  # the fixture


def test_a_new_task_follows_the_default_rule(qtbot: QtBot, clock: FakeClock) -> None:
    dialog = open_dialog(qtbot, clock)
    fill_minimum(qtbot, dialog)
    assert dialog.advanced.notify.choice.currentText() == "As in Settings"
    assert accept(qtbot, dialog).notify is None


def test_after_n_failures_is_chosen_with_its_count(qtbot: QtBot, clock: FakeClock) -> None:
    dialog = open_dialog(qtbot, clock)
    fill_minimum(qtbot, dialog)
    dialog.advanced.set_expanded(True)
    picker = dialog.advanced.notify
    assert picker.count.isHidden()
    picker.choice.setCurrentIndex(picker.choice.findData("after"))
    assert not picker.count.isHidden()
    picker.count.setValue(5)
    assert accept(qtbot, dialog).notify == parse_rule("after:5")


def test_editing_shows_the_task_s_rule_and_opens_the_section(
    qtbot: QtBot, clock: FakeClock
) -> None:
    first = open_dialog(qtbot, clock)
    fill_minimum(qtbot, first)
    spec = replace(accept(qtbot, first), notify=parse_rule("on-recovery"))
    dialog = open_dialog(qtbot, clock, spec=spec, mode=DialogMode.EDIT)
    assert dialog.advanced.is_expanded()
    assert dialog.advanced.notify.rule() == parse_rule("on-recovery")
    assert accept(qtbot, dialog).notify == parse_rule("on-recovery")
