"""Huge pastes into the task dialog are refused, and a long command is checked calmly.

Pasting 200,000 characters into the command box froze the window for 8 s (a million:
over 100 s), and every key after it again: Qt lays a long wrapped line out in time
that grows with its square, and validation ran after each key. No wall clock here:
what is asserted is what was refused, what was shown, and how often the form was
checked.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import QMimeData, Qt
from PySide6.QtWidgets import QApplication, QPlainTextEdit
from pytestqt.qtbot import QtBot

from taskgui.core.clock import FakeClock
from taskgui.core.task import MAX_COMMAND_LENGTH, MAX_ENV_BYTES
from taskgui.ui.task_dialog.dialog import VALIDATION_DELAY_MS, TaskDialog
from tests.helpers.factories import T0

pytestmark = pytest.mark.qt_log_ignore(r"This plugin does not support propagateSizeHints\(\)")


@pytest.fixture
def dialog(qtbot: QtBot) -> TaskDialog:
    dialog = TaskDialog(FakeClock(T0))
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    qtbot.keyClicks(dialog.name, "Backup")
    return dialog


def paste(box: QPlainTextEdit, text: str) -> None:
    """Paste as Ctrl+V does: through the clipboard and the box's own paste."""
    clipboard = QApplication.clipboard()
    clipboard.setText(text)
    box.setFocus()
    box.paste()


def count_checks(dialog: TaskDialog) -> list[None]:
    checks: list[None] = []
    dialog.validated.connect(lambda: checks.append(None))
    return checks


def test_a_paste_longer_than_a_command_may_be_is_refused_with_a_message(
    dialog: TaskDialog, qtbot: QtBot
) -> None:
    qtbot.keyClicks(dialog.command, "echo ")
    checks = count_checks(dialog)

    paste(dialog.command, "x" * 200_000)

    assert dialog.command.toPlainText() == "echo "  # nothing of it went in
    message = dialog.command_error.message()
    assert "200,000 characters" in message and "100,000" in message
    assert dialog.command_error.isVisible()
    assert checks == []  # nothing changed, nothing to check
    paste(dialog.command, "hello")  # a paste that fits goes in
    assert dialog.command.toPlainText() == "echo hello"
    assert dialog.command_error.message() == ""
    assert dialog.ok_button.isEnabled(), dialog.problems()


def test_a_paste_that_replaces_a_selection_is_measured_without_it(
    dialog: TaskDialog, qtbot: QtBot
) -> None:
    dialog.command.setPlainText("y" * 50_000)
    dialog.command.selectAll()

    paste(dialog.command, "z" * MAX_COMMAND_LENGTH)  # replaces the 50,000: fits exactly

    assert dialog.command.toPlainText() == "z" * MAX_COMMAND_LENGTH
    assert dialog.problems() == []


def test_typing_into_a_long_command_checks_it_once_the_typing_pauses(
    dialog: TaskDialog, qtbot: QtBot
) -> None:
    checks = count_checks(dialog)
    paste(dialog.command, "x" * (MAX_COMMAND_LENGTH - 10))
    qtbot.keyClicks(dialog.command, "y" * 20)  # ten characters too many, key by key

    # Each key restarted the wait; one check comes when it runs out.
    assert checks == []
    with qtbot.waitSignal(dialog.validated, timeout=VALIDATION_DELAY_MS * 20):
        pass
    assert len(checks) == 1
    assert "longer than 100,000 characters" in dialog.command_error.message()
    assert not dialog.ok_button.isEnabled()
    # A long text is shown unwrapped: Qt lays that out in linear time.
    assert dialog.command.lineWrapMode() is QPlainTextEdit.LineWrapMode.NoWrap


def test_what_reads_the_form_checks_it_first_when_a_check_waits(
    dialog: TaskDialog, qtbot: QtBot
) -> None:
    dialog.command.setPlainText("x" * MAX_COMMAND_LENGTH)
    qtbot.keyClick(dialog.command, Qt.Key.Key_End, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(dialog.command, "y")  # one too many, and the check still waits

    assert any("longer than 100,000" in problem for problem in dialog.problems())
    dialog.accept()
    assert dialog.result_spec() is None and dialog.isVisible()


def test_a_short_command_is_still_checked_at_every_key(dialog: TaskDialog, qtbot: QtBot) -> None:
    checks = count_checks(dialog)
    qtbot.keyClicks(dialog.command, "true")
    assert len(checks) == 4
    assert dialog.ok_button.isEnabled()
    assert dialog.command.lineWrapMode() is QPlainTextEdit.LineWrapMode.WidgetWidth


def test_a_huge_paste_into_the_environment_is_refused_too(dialog: TaskDialog) -> None:
    dialog.advanced.toggle.setChecked(True)
    data = QMimeData()
    data.setText("A=" + "x" * MAX_ENV_BYTES)

    dialog.advanced.env.insertFromMimeData(data)  # what a drop or a paste hands over

    assert dialog.advanced.env.toPlainText() == ""
    assert "nothing was pasted" in dialog.advanced.env_error.message()
