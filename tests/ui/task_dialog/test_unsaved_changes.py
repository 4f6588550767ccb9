"""Escape, Cancel and the close button ask before a changed task dialog throws the
typing away (an outsider's trial: Escape discarded a filled form without a word).

Driven with real keys and clicks on a real dialog; the question is answered by a
stand-in, except where the real box itself is what is tested.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QDialogButtonBox, QMessageBox, QWidget
from pytestqt.qtbot import QtBot

from taskgui.core.clock import FakeClock
from taskgui.core.recurrence import Every
from taskgui.core.task import Command, TaskSpec
from taskgui.ui.plain_text import ask_discard
from taskgui.ui.task_dialog.dialog import TaskDialog
from taskgui.ui.task_dialog.mode import DialogMode

pytestmark = pytest.mark.qt_log_ignore(r"This plugin does not support propagateSizeHints\(\)")

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def hourly(name: str) -> TaskSpec:
    """A task to edit: hourly, from an hour on."""
    return TaskSpec(
        id=7,
        name=name,
        command=Command(line="true"),
        first_run_at=NOW + timedelta(hours=1),
        recurrence=Every(timedelta(hours=1)),
    )


class Answers:
    def __init__(self, discard: bool) -> None:
        self.discard = discard
        self.asked: list[tuple[str, str]] = []

    def __call__(self, parent: QWidget, title: str, text: str) -> bool:
        self.asked.append((title, text))
        return self.discard


def opened(
    qtbot: QtBot,
    answers: Answers,
    clock: FakeClock | None = None,
    spec: TaskSpec | None = None,
    mode: DialogMode = DialogMode.CREATE,
) -> TaskDialog:
    dialog = TaskDialog(clock or FakeClock(NOW), spec=spec, mode=mode, ask_to_discard=answers)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    return dialog


def escape(qtbot: QtBot, widget: QWidget) -> None:
    qtbot.keyClick(widget, Qt.Key.Key_Escape)


def cancel_button(dialog: TaskDialog) -> QWidget:
    button = dialog.buttons.button(QDialogButtonBox.StandardButton.Cancel)
    assert button is not None
    return button


def test_an_untouched_dialog_closes_at_once(qtbot: QtBot) -> None:
    answers = Answers(discard=False)
    dialog = opened(qtbot, answers)
    with qtbot.waitSignal(dialog.rejected, timeout=1000):
        escape(qtbot, dialog.name)
    assert answers.asked == []


def test_typing_then_escape_asks_and_keep_editing_keeps_it(qtbot: QtBot) -> None:
    answers = Answers(discard=False)
    dialog = opened(qtbot, answers)
    qtbot.keyClicks(dialog.command, "rsync -a ~/work /backup")
    escape(qtbot, dialog.command)
    assert answers.asked == [("Discard Changes", "Discard this new task?")]
    assert dialog.isVisible() and dialog.command.toPlainText() == "rsync -a ~/work /backup"
    qtbot.mouseClick(cancel_button(dialog), Qt.MouseButton.LeftButton)
    assert len(answers.asked) == 2 and dialog.isVisible()

    answers.discard = True
    with qtbot.waitSignal(dialog.rejected, timeout=1000):
        qtbot.mouseClick(cancel_button(dialog), Qt.MouseButton.LeftButton)
    assert dialog.result_spec() is None


def test_a_change_taken_back_is_no_change(qtbot: QtBot) -> None:
    answers = Answers(discard=False)
    dialog = opened(qtbot, answers)
    qtbot.keyClicks(dialog.name, "x")
    qtbot.keyClick(dialog.name, Qt.Key.Key_Backspace)
    with qtbot.waitSignal(dialog.rejected, timeout=1000):
        escape(qtbot, dialog.name)
    assert answers.asked == []


@pytest.mark.parametrize("field", ["priority", "checkbox", "combo"])
def test_every_kind_of_field_counts(qtbot: QtBot, field: str) -> None:
    answers = Answers(discard=False)
    dialog = opened(qtbot, answers)
    if field == "priority":
        dialog.priority.setValue(dialog.priority.value() + 1)
    elif field == "checkbox":
        dialog.retry.jitter.click()
    else:
        dialog.schedule.repeat.setCurrentIndex(dialog.schedule.repeat.currentIndex() + 1)
    escape(qtbot, dialog.name)
    assert len(answers.asked) == 1 and dialog.isVisible()


def test_when_moving_with_the_clock_is_not_a_change_but_picking_a_time_is(qtbot: QtBot) -> None:
    answers = Answers(discard=False)
    clock = FakeClock(NOW)
    dialog = opened(qtbot, answers, clock)
    assert dialog.schedule.follows_clock
    before = dialog.schedule.when.dateTime()
    clock.advance(120)
    dialog.schedule._on_ticker_timeout()  # the tick a second brings
    assert dialog.schedule.when.dateTime() != before  # it did move
    escape(qtbot, dialog.name)
    assert answers.asked == []

    dialog = opened(qtbot, answers, clock)
    dialog.schedule.when.setDateTime(dialog.schedule.when.dateTime().addSecs(3600))
    assert not dialog.schedule.follows_clock
    escape(qtbot, dialog.name)
    assert len(answers.asked) == 1


def test_editing_asks_about_the_task_by_name_as_plain_characters(qtbot: QtBot) -> None:
    spec = hourly("<b>nightly</b>")
    answers = Answers(discard=False)
    dialog = opened(qtbot, answers, spec=spec, mode=DialogMode.EDIT)
    with qtbot.waitSignal(dialog.rejected, timeout=1000):  # loaded values are no change
        escape(qtbot, dialog.name)

    dialog = opened(qtbot, answers, spec=spec, mode=DialogMode.EDIT)
    qtbot.keyClicks(dialog.name, " 2")
    escape(qtbot, dialog.name)
    [(_, question)] = answers.asked
    assert "<b>nightly</b> 2" not in question  # the name edited is not the task's
    assert question.startswith("Discard your changes to “") and "<b>nightly</b>" in question


def test_a_programs_close_does_not_ask(qtbot: QtBot) -> None:
    """Only a person's close asks (quitting closes the window, and must not hang)."""
    answers = Answers(discard=False)
    dialog = opened(qtbot, answers)
    qtbot.keyClicks(dialog.name, "half typed")
    dialog.close()
    assert answers.asked == [] and not dialog.isVisible()


def test_the_real_question_is_plain_text_and_escape_keeps_editing(qtbot: QtBot) -> None:
    parent = QWidget()
    qtbot.addWidget(parent)
    seen: list[tuple[str, Qt.TextFormat, list[str]]] = []

    def answer_with_escape() -> None:
        box = next(w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox))
        seen.append(
            (box.text(), box.textFormat(), sorted(button.text() for button in box.buttons()))
        )
        qtbot.keyClick(box, Qt.Key.Key_Escape)

    QTimer.singleShot(50, answer_with_escape)
    assert ask_discard(parent, "Discard Changes", "Discard <i>this</i>?") is False
    assert seen == [
        ("Discard <i>this</i>?", Qt.TextFormat.PlainText, sorted(["Discard", "Keep Editing"]))
    ]

    def answer_discard() -> None:
        box = next(w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox))
        box.button(QMessageBox.StandardButton.Discard).click()

    QTimer.singleShot(50, answer_discard)
    assert ask_discard(parent, "Discard Changes", "Discard?") is True


def test_opening_the_when_calendar_is_no_change(qtbot: QtBot) -> None:
    """The calendar popup, made at its first opening, brought a year field of its own
    into the form's reading: an untouched task asked to be discarded (a review)."""
    spec = hourly("nightly")
    answers = Answers(discard=False)
    dialog = opened(qtbot, answers, spec=spec, mode=DialogMode.EDIT)
    dialog.schedule.when.calendarWidget()  # what the first click on its arrow makes
    with qtbot.waitSignal(dialog.rejected, timeout=1000):
        escape(qtbot, dialog.name)
    assert answers.asked == []
