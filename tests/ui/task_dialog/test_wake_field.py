"""The task dialog's wake-up policy: "as in Settings" by default, kept on edit."""

from __future__ import annotations

from dataclasses import replace

from pytestqt.qtbot import QtBot

from taskgui.core.clock import FakeClock
from taskgui.core.wake import parse_wake_policy
from taskgui.ui.task_dialog.mode import DialogMode
from tests.ui.task_dialog.test_task_dialog import accept, clock, fill_minimum, open_dialog

__all__ = ["clock"]  # the fixture


def test_a_new_task_follows_the_global_policy_or_takes_its_own(
    qtbot: QtBot, clock: FakeClock
) -> None:
    dialog = open_dialog(qtbot, clock)
    fill_minimum(qtbot, dialog)
    assert dialog.advanced.on_wake.currentText() == "as in Settings"
    assert accept(qtbot, dialog).on_wake is None
    other = open_dialog(qtbot, clock)
    fill_minimum(qtbot, other)
    other.advanced.set_expanded(True)
    other.advanced.on_wake.setCurrentIndex(other.advanced.on_wake.findData("ask"))
    assert accept(qtbot, other).on_wake == parse_wake_policy("ask")


def test_editing_keeps_a_policy_the_list_does_not_have(qtbot: QtBot, clock: FakeClock) -> None:
    first = open_dialog(qtbot, clock)
    fill_minimum(qtbot, first)
    spec = replace(accept(qtbot, first), on_wake=parse_wake_policy("spread:45m"))
    dialog = open_dialog(qtbot, clock, spec=spec, mode=DialogMode.EDIT)
    assert dialog.advanced.is_expanded()
    assert dialog.advanced.on_wake.currentText() == "spread the catch-ups over 45m"
    assert accept(qtbot, dialog).on_wake == parse_wake_policy("spread:45m")
