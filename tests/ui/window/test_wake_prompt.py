"""The wake-up question: non-modal, plain text, and each button does what it says."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QMessageBox, QWidget
from pytestqt.qtbot import QtBot

from taskgui.core.wake import WakeAnswer, WakeQuestion
from taskgui.ui.window.wake_prompt import WakePrompt

NAMES = tuple(f"<img src=/dev/zero> <b>job {i}</b>" for i in range(14))


def _prompt(qtbot: QtBot) -> tuple[QWidget, WakePrompt, list[WakeAnswer]]:
    window = QWidget()
    qtbot.addWidget(window)
    prompt = WakePrompt(window)
    answers: list[WakeAnswer] = []
    prompt.answered.connect(answers.append)
    return window, prompt, answers


@pytest.mark.parametrize("answer", list(WakeAnswer))
def test_each_button_answers_what_it_says(qtbot: QtBot, answer: WakeAnswer) -> None:
    _window, prompt, answers = _prompt(qtbot)
    box = prompt.ask(WakeQuestion(14, NAMES))
    words = {WakeAnswer.NOW: "Run Them Now", WakeAnswer.SKIP: "Skip",
             WakeAnswer.SPREAD: "Spread Over 10m"}  # fmt: skip
    button = prompt.button(answer)
    assert button.text().replace("&", "") == words[answer]
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: answers == [answer], timeout=2_000)
    assert prompt.box is None
    assert not box.isVisible()


def test_it_is_not_modal_and_its_names_are_plain_text(qtbot: QtBot) -> None:
    _window, prompt, _ = _prompt(qtbot)
    box = prompt.ask(WakeQuestion(14, NAMES))
    assert not box.isModal()
    assert box.windowModality() is Qt.WindowModality.NonModal
    assert box.textFormat() is Qt.TextFormat.PlainText
    text = box.text()
    assert text.startswith("14 runs were missed while the computer slept")
    assert "<img src=/dev/zero> <b>job 0</b>" in text
    assert "… and 6 more" in text
    labels = [label for label in box.findChildren(QLabel) if "job 0" in label.text()]
    assert labels and all(label.textFormat() is Qt.TextFormat.PlainText for label in labels)
    box.close()


def test_closing_it_spreads_and_a_second_question_replaces_the_first(qtbot: QtBot) -> None:
    _window, prompt, answers = _prompt(qtbot)
    first = prompt.ask(WakeQuestion(3, NAMES[:3]))
    second = prompt.ask(WakeQuestion(5, NAMES[:5]))
    assert prompt.box is second and not first.isVisible()
    assert answers == []  # replacing is not an answer
    assert second.text().startswith("5 runs were missed")
    second.reject()  # Escape, or the title bar's close
    qtbot.waitUntil(lambda: answers == [WakeAnswer.SPREAD], timeout=2_000)


def test_escape_is_spread(qtbot: QtBot) -> None:
    _window, prompt, answers = _prompt(qtbot)
    box = prompt.ask(WakeQuestion(3, NAMES[:3]))
    assert box.escapeButton() is prompt.button(WakeAnswer.SPREAD)
    assert isinstance(box, QMessageBox)
    qtbot.keyClick(box, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: answers == [WakeAnswer.SPREAD], timeout=2_000)
