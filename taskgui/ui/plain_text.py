"""Text from a task, a command or its output, shown as exactly what it is.

Qt guesses whether a tooltip is rich text, and a task named ``<img src=...>`` would
then load a file or hang the window (see DESIGN.md). Every tooltip that holds such
text goes through ``plain_tooltip``, the one place that makes it plain.
"""

from __future__ import annotations

from PySide6.QtGui import Qt


def plain_tooltip(text: str | None) -> str:
    """A tooltip showing ``text`` literally (line breaks kept, long lines wrapped)."""
    if not text:
        return ""
    return Qt.convertFromPlainText(text, Qt.WhiteSpaceMode.WhiteSpaceNormal)
