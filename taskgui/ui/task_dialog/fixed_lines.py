"""A label that always takes the same room: a fixed number of lines, shown or not.

A label under a form field that appears, grows or wraps while a person types pushes
the fields below it down, and the click meant for the next field lands on the message
instead. ``FixedLinesLabel`` keeps its height whatever it says (even while hidden)
and never asks for more width: text that does not fit in its lines is cut with an
ellipsis, and the whole text is its tooltip.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QFont, QFontMetrics, QResizeEvent, QTextLayout
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

from taskgui.ui.plain_text import plain_tooltip

ELLIPSIS = "…"


def wrapped_lines(text: str, font: QFont, width: int) -> list[str]:
    """``text`` broken into the lines it takes at ``width`` pixels, paragraph by paragraph."""
    lines: list[str] = []
    for paragraph in text.split("\n"):
        layout = QTextLayout(paragraph, font)
        layout.beginLayout()
        start_count = len(lines)
        while True:
            line = layout.createLine()
            if not line.isValid():
                break
            line.setLineWidth(width)
            start = line.textStart()
            lines.append(paragraph[start : start + line.textLength()].rstrip())
        layout.endLayout()
        if len(lines) == start_count:  # an empty paragraph is an empty line
            lines.append("")
    return lines


def fit_lines(text: str, font: QFont, width: int, count: int, *, wrap: bool) -> str:
    """At most ``count`` lines of ``text`` at ``width`` pixels; what does not fit is cut
    and the last line shown ends with an ellipsis."""
    if not text or width <= 0:
        return text
    metrics = QFontMetrics(font)
    lines = wrapped_lines(text, font, width) if wrap else text.split("\n")
    cut = len(lines) > count
    elide = Qt.TextElideMode.ElideRight
    fitted = [metrics.elidedText(line, elide, width) for line in lines[:count]]
    if cut and not fitted[-1].endswith(ELLIPSIS):
        last = fitted[-1]
        while last and metrics.horizontalAdvance(last + ELLIPSIS) > width:
            last = last[:-1]
        fitted[-1] = last + ELLIPSIS
    return "\n".join(fitted)


class FixedLinesLabel(QLabel):
    """Plain text in exactly ``lines`` lines of height; see the module docstring.

    ``setText`` / ``text()`` are the whole text; ``shown_text()`` is what fits. With
    ``wrap``, long lines are word-wrapped into the lines it has.
    """

    def __init__(
        self, lines: int = 1, *, wrap: bool = False, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        if lines < 1:
            raise ValueError("a FixedLinesLabel has at least one line")
        self._lines = lines
        self._wrap = wrap
        self._full = ""
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setWordWrap(False)  # the wrapping is done here, to fit the lines it has
        self.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        policy = QSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        policy.setRetainSizeWhenHidden(True)
        self.setSizePolicy(policy)
        self.setMinimumWidth(40)
        self._fix_height()

    def _fix_height(self) -> None:
        metrics = self.fontMetrics()
        margins = self.contentsMargins()
        height = metrics.lineSpacing() * (self._lines - 1) + metrics.height()
        self.setFixedHeight(height + margins.top() + margins.bottom())

    def setText(self, text: str) -> None:  # noqa: N802
        self._full = text
        self._refit()

    def clear(self) -> None:
        self.setText("")

    def text(self) -> str:
        """The whole text (Qt itself reads what fits)."""
        return self._full

    def shown_text(self) -> str:
        """What fits in the lines it has."""
        return super().text()

    def _refit(self) -> None:
        width = self.contentsRect().width()
        fitted = fit_lines(self._full, self.font(), width, self._lines, wrap=self._wrap)
        super().setText(fitted)
        self.setToolTip(plain_tooltip(self._full) if fitted != self._full else "")

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._refit()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self._fix_height()
            self._refit()
