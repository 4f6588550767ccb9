"""What Qt draws for a string where it guesses the format (tooltips, AutoText labels)."""

from __future__ import annotations

from PySide6.QtGui import Qt as GuiQt
from PySide6.QtGui import QTextDocument


def rendered(text: str) -> str:
    """The characters Qt shows for ``text``: itself, or its HTML rendering.

    Qt's tooltip and AutoText labels decide with ``Qt.mightBeRichText``, as here.
    ``setHtml`` only parses: images load when a document is laid out, which this
    never does, so even an ``<img src=/dev/zero>`` is safe to pass.
    """
    if not GuiQt.mightBeRichText(text):
        return text
    document = QTextDocument()
    document.setHtml(text)
    return document.toPlainText()
