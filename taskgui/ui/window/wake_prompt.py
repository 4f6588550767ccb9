"""The question after a wake-up: "14 runs were missed while the computer slept".

Shown once per wake-up (a later one while it is open replaces it, counting every
run still held), never modal: the window stays usable, and the held runs wait, shown
as "waiting for your answer" in the table, until a button is pressed. Closing
the box without an answer spreads them (the calm choice; nothing is lost). The names
come from tasks, so the whole text is plain (``plain_text.message_box``), each name
isolated so a direction override in one cannot reorder the rest.

Signals:
    answered(object): the WakeAnswer chosen.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QAbstractButton, QMessageBox, QWidget

from taskgui.core.duration import format_duration
from taskgui.core.wake import WakeAnswer, WakeQuestion
from taskgui.runtime.guard import never_raises
from taskgui.ui.plain_text import isolated, message_box

MAX_NAMES = 8


def prompt_text(question: WakeQuestion) -> str:
    names = "\n".join(f"  • {isolated(name)}" for name in question.names[:MAX_NAMES])
    more = len(question.names) - MAX_NAMES
    if more > 0:
        names += f"\n  … and {more} more"
    return f"{question.text}:\n\n{names}\n\nThey wait until you choose."


class WakePrompt(QWidget):
    """Owns the message box (one at a time) and says what was chosen."""

    answered = Signal(object)

    def __init__(self, parent: QWidget | None) -> None:
        super().__init__(parent)
        self.hide()  # a holder, never shown itself
        self.box: QMessageBox | None = None
        self._buttons: dict[QAbstractButton, WakeAnswer] = {}

    def ask(self, question: WakeQuestion) -> QMessageBox:
        """Show the question (replacing an open one); returns the box for tests."""
        if self.box is not None:
            self.box.blockSignals(True)
            self.box.close()
            self.box.deleteLater()
        parent = self.parentWidget()
        box = message_box(
            parent,
            QMessageBox.Icon.Question,
            "taskgui — after the sleep",
            prompt_text(question),
            buttons=QMessageBox.StandardButton.NoButton,
        )
        box.setWindowModality(Qt.WindowModality.NonModal)
        box.setModal(False)
        spread_button = box.addButton(
            f"S&pread Over {format_duration(question.spread)}", QMessageBox.ButtonRole.RejectRole
        )
        self._buttons = {
            box.addButton("Run Them &Now", QMessageBox.ButtonRole.AcceptRole): WakeAnswer.NOW,
            box.addButton("&Skip", QMessageBox.ButtonRole.DestructiveRole): WakeAnswer.SKIP,
            spread_button: WakeAnswer.SPREAD,
        }
        box.setDefaultButton(spread_button)
        box.setEscapeButton(spread_button)
        box.finished.connect(self._on_box_finished)
        self.box = box
        box.show()
        return box

    def button(self, answer: WakeAnswer) -> QAbstractButton:
        return next(b for b, a in self._buttons.items() if a is answer)

    @never_raises
    def _on_box_finished(self, _result: int) -> None:
        """A button, or the box closed (Escape, the title bar): that spreads."""
        box, self.box = self.box, None
        if box is None:
            return
        answer = self._buttons.get(box.clickedButton(), WakeAnswer.SPREAD)
        box.deleteLater()
        self.answered.emit(answer)
