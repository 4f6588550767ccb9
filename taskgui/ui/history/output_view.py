"""A run's captured output: monospace, searchable (every match highlighted), copyable,
and following the end while a run prints, unless the person scrolled away.

The output is shown, not edited: it goes through ``plain_text.shown_lines``, so an
ESC sequence reads ``\\x1b[31m`` and a right-to-left override ``\\u202e`` instead of
reversing the lines after it, while its tabs and line breaks stay as printed. Search
and Copy work on that text, the one on screen.
"""

from __future__ import annotations

from PySide6.QtGui import (
    QColor,
    QFontDatabase,
    QGuiApplication,
    QKeySequence,
    QShortcut,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
)
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from taskgui.ui.plain_text import shown_lines

PRINTED_NOTHING = "This run printed nothing."
NOTHING_YET = "Nothing printed yet; what the command prints shows here while it runs."
NOT_RUN_YET = "This task has not run yet."


class OutputView(QWidget):
    """Monospace output with a search bar and a copy button."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.text = QPlainTextEdit(self)
        self.text.setReadOnly(True)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.setAccessibleName("Run output")
        self.text.setPlaceholderText(PRINTED_NOTHING)
        # The text given to the view, kept: what it gives back is not that text (it
        # makes "\r\n" and U+2028 paragraph breaks), so output with CRLF line ends
        # never began with it and was set anew at every update, the end lost.
        self._shown = ""
        self.search = QLineEdit(self)
        self.search.setPlaceholderText("Find in output (Ctrl+F)")
        self.search.setClearButtonEnabled(True)
        self.search.setAccessibleName("Find in output")
        self.matches = QLabel(self)
        self.previous_button = QPushButton("Previous", self)
        self.next_button = QPushButton("Next", self)
        self.copy_button = QPushButton("Copy output", self)
        bar = QHBoxLayout()
        bar.addWidget(self.search, 1)
        bar.addWidget(self.matches)
        bar.addWidget(self.previous_button)
        bar.addWidget(self.next_button)
        bar.addWidget(self.copy_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(bar)
        layout.addWidget(self.text, 1)
        self._pinned = False  # keep the end in view (a running command's output)
        self._moving = False  # the view scrolls itself, not a person
        scroll = self.text.verticalScrollBar()
        scroll.valueChanged.connect(self._on_scroll_value_changed)
        scroll.rangeChanged.connect(self._on_scroll_range_changed)
        self.search.textChanged.connect(self._on_search_text_changed)
        self.search.returnPressed.connect(self.find_next)
        self.next_button.clicked.connect(self.find_next)
        self.previous_button.clicked.connect(self.find_previous)
        self.copy_button.clicked.connect(self.copy_all)
        for keys, slot in (
            (QKeySequence.StandardKey.Find, self.focus_search),
            (QKeySequence.StandardKey.FindNext, self.find_next),
            (QKeySequence.StandardKey.FindPrevious, self.find_previous),
        ):
            shortcut = QShortcut(QKeySequence(keys), self)
            shortcut.activated.connect(slot)

    def set_output(self, output: str) -> None:
        self._pinned = False
        self._set_text(shown_lines(output))
        self._highlight()

    def scroll_to_end(self) -> None:
        """Show the end, and keep showing it as output comes (until scrolled away)."""
        self._pinned = True
        self._to_end()

    def follow(self, output: str) -> None:
        """More of a running command's output: added at the end when it only grew
        (a selection and the place read stay); the end stays in view if it was."""
        # Escaped character by character, so the text of more output begins with the
        # text of what was shown.
        text, current = shown_lines(output), self._shown
        if text.startswith(current):
            cursor = QTextCursor(self.text.document())
            cursor.movePosition(QTextCursor.MoveOperation.End)
            cursor.insertText(text[len(current) :])
            self._shown = text
        else:  # the tail was cut at its start: show it anew
            bar = self.text.verticalScrollBar()
            place = bar.value()
            self._set_text(text)
            self._moving = True
            bar.setValue(place)
            self._moving = False
        if self._pinned:
            self._to_end()
        self._highlight()

    def _set_text(self, text: str) -> None:
        self._moving = True  # not a person scrolling away from the end
        self._shown = text
        try:
            self.text.setPlainText(text)
        finally:
            self._moving = False

    def _to_end(self) -> None:
        bar = self.text.verticalScrollBar()
        self._moving = True
        bar.setValue(bar.maximum())
        self._moving = False

    def _on_scroll_value_changed(self, value: int) -> None:
        if not self._moving:  # a person scrolled: follow the end only if they went there
            self._pinned = value >= self.text.verticalScrollBar().maximum()

    def _on_scroll_range_changed(self, _low: int, _high: int) -> None:
        if self._pinned:  # more lines, or a new size: the end is still where to look
            self._to_end()

    def focus_search(self) -> None:
        self.search.setFocus()
        self.search.selectAll()

    def find_next(self) -> bool:
        return self._find(QTextDocument.FindFlag(0))

    def find_previous(self) -> bool:
        return self._find(QTextDocument.FindFlag.FindBackward)

    def copy_all(self) -> None:
        clipboard = QGuiApplication.clipboard()
        if clipboard is not None:
            clipboard.setText(self.text.toPlainText())

    def _find(self, flags: QTextDocument.FindFlag) -> bool:
        needle = self.search.text()
        if not needle:
            return False
        if self.text.find(needle, flags):
            return True
        # Wrap around, as find bars in editors do.
        cursor = self.text.textCursor()
        backward = bool(flags & QTextDocument.FindFlag.FindBackward)
        cursor.movePosition(
            QTextCursor.MoveOperation.End if backward else QTextCursor.MoveOperation.Start
        )
        self.text.setTextCursor(cursor)
        return bool(self.text.find(needle, flags))

    def _on_search_text_changed(self, _: str) -> None:
        self._highlight()
        cursor = self.text.textCursor()
        cursor.movePosition(QTextCursor.MoveOperation.Start)
        self.text.setTextCursor(cursor)
        self.find_next()

    def _highlight(self) -> None:
        needle = self.search.text()
        selections: list[QTextEdit.ExtraSelection] = []
        if needle:
            highlight = QTextCharFormat()
            highlight.setBackground(QColor("#ffe082"))
            highlight.setForeground(QColor("#000000"))
            document = self.text.document()
            cursor = document.find(needle)
            while not cursor.isNull() and len(selections) < 10_000:
                selection = QTextEdit.ExtraSelection()
                selection.cursor = cursor
                selection.format = highlight
                selections.append(selection)
                cursor = document.find(needle, cursor)
        self.text.setExtraSelections(selections)
        if needle:
            count = len(selections)
            self.matches.setText("no match" if not count else f"{count} match(es)")
        else:
            self.matches.clear()
