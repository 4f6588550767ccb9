"""The folder check's answer after its dialog is gone: dropped, quietly.

A look ends on its own thread, maybe after the dialog (and the check with it) was
deleted. It used to emit on the deleted check: "Signal source has been deleted" raised
on the looking thread (pytest charged it to whichever test ran next).
"""

from __future__ import annotations

import threading

import shiboken6
from PySide6.QtCore import QCoreApplication, QEvent
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from taskgui.core.clock import FakeClock
from taskgui.ui.task_dialog.folder_check import FolderCheck
from tests.helpers.factories import T0


def test_an_answer_that_comes_after_the_check_is_gone_is_dropped(
    qapp: QApplication, qtbot: QtBot
) -> None:
    go_on = threading.Event()
    looked = threading.Event()
    errors: list[BaseException | None] = []
    before = threading.excepthook
    threading.excepthook = lambda args: errors.append(args.exc_value)

    def slow_look(folder: str) -> str | None:
        looked.set()
        go_on.wait(10)
        return "this folder does not exist; runs fail until it does"

    try:
        dialog = QWidget()
        check = FolderCheck(FakeClock(T0).monotonic, dialog, look=slow_look)
        carrier = check._answers
        assert check.warning("/nowhere") is None  # the look starts on its thread
        assert looked.wait(10)
        shiboken6.delete(dialog)  # the dialog closes, its check with it
        assert not shiboken6.isValid(check)
        assert shiboken6.isValid(carrier)  # a look of it is under way: it stays
        go_on.set()
        for thread in threading.enumerate():
            if thread.name == "folder-check":
                thread.join(10)
        qapp.processEvents()  # the answer arrives on the GUI thread, for nobody
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    finally:
        threading.excepthook = before
    assert errors == []
    assert not shiboken6.isValid(carrier)  # then it goes: nothing kept per dialog


def test_an_answer_reaches_a_check_that_is_still_there(qtbot: QtBot) -> None:
    holder = QWidget()
    qtbot.addWidget(holder)
    check = FolderCheck(
        FakeClock(T0).monotonic, holder, look=lambda folder: f"{folder} is not a folder"
    )
    assert check.warning("/x") is None
    with qtbot.waitSignal(check.answered, timeout=5_000):
        pass
    assert check.warning("/x") == "/x is not a folder"
