"""A plain text box that stays responsive whatever is pasted into it.

Two things made the task dialog freeze on a large paste (200,000 characters: 8 s, and
7 s for every key after it; a million: minutes). Qt lays a wrapped paragraph out in
time that grows with the square of its length, and nothing stopped a paste far beyond
what a command may hold. So a paste or drop that would make the text longer than the
field takes is refused whole, with a message (``refused``), and a text longer than
``LONG_TEXT`` characters is shown unwrapped, which Qt lays out in linear time.
"""

from __future__ import annotations

from PySide6.QtCore import QMimeData, Signal
from PySide6.QtWidgets import QPlainTextEdit, QWidget

from taskgui.runtime.guard import never_raises

# Wrapped, a line this long takes Qt about 20 ms a keystroke (100,000: 0.8 s);
# unwrapped, the cost stays near 20 ms up to the 100,000 characters a command may hold.
LONG_TEXT = 10_000


class BoundedTextEdit(QPlainTextEdit):
    """A QPlainTextEdit that takes at most ``max_length`` characters by paste or drop.

    Typing is not limited (a person who types past the limit sees the field's own
    validation message); only an insertion that would overshoot is refused, entirely,
    because a silently cut command is worse than none.

    Signals:
        refused(str): a paste or drop was refused; the message says why, for a person.
    """

    refused = Signal(str)

    def __init__(self, max_length: int, what: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._max_length = max_length
        self._what = what
        self.textChanged.connect(self._on_text_changed)

    @property
    def max_length(self) -> int:
        return self._max_length

    @never_raises("inserting into a text box")
    def insertFromMimeData(self, source: QMimeData) -> None:  # noqa: N802 (a Qt virtual)
        text = source.text() if source.hasText() else ""
        kept = len(self.toPlainText()) - len(self.textCursor().selectedText())
        if kept + len(text) > self._max_length:
            self.refused.emit(
                f"the pasted text has {len(text):,} characters, more than the "
                f"{self._what} may hold ({self._max_length:,}); nothing was pasted. "
                "Put it in a script and run the script."
            )
            return
        super().insertFromMimeData(source)

    @never_raises("fitting the wrap mode of a text box")
    def _on_text_changed(self) -> None:
        long = self.document().characterCount() > LONG_TEXT
        mode = self.LineWrapMode.NoWrap if long else self.LineWrapMode.WidgetWidth
        if self.lineWrapMode() != mode:
            self.setLineWrapMode(mode)
