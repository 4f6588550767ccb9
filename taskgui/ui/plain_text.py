"""Text from a task, a command, its output or a file is shown as plain text, everywhere.

Qt guesses: a QLabel, a QMessageBox or a tooltip whose first line looks like it holds
a tag (``Qt.mightBeRichText``) is rendered as HTML. A task named ``<img
src=/dev/zero>`` then makes the window read that file until it runs out of memory
when the name is hovered or shown in a dialog; an ``<img>`` at a FIFO hangs the GUI
thread; ``<a href=…>`` becomes a clickable link. Names, commands, errors and import
files are written by whoever wrote the task or the file, so none of them may be
guessed at. This module is the one place that rule lives; every widget that shows
such text goes through it:

* ``plain_tooltip``: a tooltip (Qt has no plain-text switch for tooltips, so text it
  would take for HTML is escaped into HTML that renders exactly as the text).
* ``plain_label`` / ``make_plain``: a QLabel that never reads markup.
* ``warn`` / ``inform`` / ``critical`` / ``ask_yes_no``: message boxes in plain text
  (QMessageBox's static helpers use Qt's guess).
* ``window_title``: Qt removes ``[*]`` from window titles (the "modified" marker).
* ``left_to_right``: a sentence that may begin with a right-to-left name, laid out left
  to right all the same (the banner's title, the history header, a timeline tooltip).
* ``inert_markup``: for places we do not control how text is drawn (a tray balloon's
  title is a rich-text guess; a D-Bus tray or notification server may parse markup).
* ``escape_markup``: for the one label that is HTML on purpose (the history summary).
* ``shown``: a name or command as the window shows it, on one line: its controls
  (tab, line break, ESC), line separators, bidi embeddings, overrides and isolates
  and the characters that draw nothing written as ``\\t``, ``\\n``, ``\\x1b``,
  ``\\u202e``, ``\\u200b`` (as ``taskgui list`` prints them), so
  ``evil\\u202eexe.txt`` cannot pass for "eviltxt.exe", nor ``back\\u200bup`` for
  "backup" (the joiners and direction marks stay: see ``window_visible``).
* ``shown_lines``: the same for text that is several lines on purpose (a run's
  output, an error paragraph): its tabs and line ends stay.
* ``isolated``: the same, set into a sentence, so even a right-to-left name cannot
  reorder the rest of the sentence (a confirmation must read as what it does). Only
  where Qt draws the sentence: a window title or a notification is drawn by the
  desktop, whose font may have no glyph for the isolate marks, so those get ``shown``.

Table cells (``DisplayRole``), line edits, plain text edits, status bar messages and
window titles are drawn as plain text by Qt and need nothing.
"""

from __future__ import annotations

import html
from typing import overload
from unicodedata import bidirectional

from PySide6.QtCore import Qt
from PySide6.QtGui import Qt as GuiQt
from PySide6.QtWidgets import QLabel, QMessageBox, QWidget

from taskgui.core.terminal_text import window_visible

__all__ = [
    "WORD_JOINER",
    "ask_yes_no",
    "critical",
    "escape_markup",
    "has_right_to_left",
    "inert_markup",
    "inform",
    "isolated",
    "left_to_right",
    "make_plain",
    "message_box",
    "plain_label",
    "plain_tooltip",
    "shown",
    "shown_lines",
    "warn",
    "window_title",
]

Button = QMessageBox.StandardButton

# Invisible and zero-width, so the text reads the same, but after "<" or "&" it stops
# any markup parser from seeing a tag or an entity there.
WORD_JOINER = "\u2060"


def escape_markup(text: str) -> str:
    """``text`` as HTML that shows exactly ``text`` (``&``, ``<`` and ``>`` escaped)."""
    return html.escape(text, quote=False)


@overload
def plain_tooltip(text: str) -> str: ...
@overload
def plain_tooltip(text: None) -> None: ...
@overload
def plain_tooltip(text: str | None) -> str | None: ...


def plain_tooltip(text: str | None) -> str | None:
    """A tooltip that shows ``text`` literally (None or "" stays as it is).

    Text Qt would show as plain is returned unchanged (a plain tooltip looks as
    before). Text Qt would take for HTML, by the very test Qt's tooltip applies
    (``mightBeRichText``), becomes an escaped paragraph whose ``pre-wrap`` keeps every
    space and line break: it renders as the original characters.
    """
    if not text or not GuiQt.mightBeRichText(text):
        return text
    # Qt's HTML reader drops one line break just inside the paragraph at either end (as
    # browsers do after <pre>): a break of our own there, so the text's own stay.
    return f'<p style="white-space:pre-wrap">\n{escape_markup(text)}\n</p>'


def make_plain(label: QLabel) -> QLabel:
    """Make ``label`` show its text as plain text, never as HTML or links; return it."""
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setOpenExternalLinks(False)
    return label


def plain_label(
    text: str = "", parent: QWidget | None = None, *, word_wrap: bool = False
) -> QLabel:
    """A QLabel for text that may have come from a task or a file."""
    label = make_plain(QLabel(parent))
    label.setWordWrap(word_wrap)
    label.setText(text)
    return label


def window_title(text: str) -> str:
    """A window title that shows ``text`` as written.

    Qt treats ``[*]`` in a title as the place of the "modified" mark and removes it;
    ``[*][*]`` is its escape for a literal ``[*]``.
    """
    return text.replace("[*]", "[*][*]")


def shown(text: str) -> str:
    """``text`` on one line, with what would hide, break or reorder it made visible.

    Written the way the CLI writes it (``core.terminal_text.window_visible``): a tab
    as ``\\t``, a line break as ``\\n``, ESC as ``\\x1b``, an override as ``\\u202e``,
    a zero-width space as ``\\u200b``. For every name and command the window draws,
    in a cell, a title or a tooltip; what is stored, run, searched and edited stays
    exactly ``text``.
    """
    # A line break cut the table's cell there and wrapped a timeline label; an
    # override reverses the letters after it ("evil" RLO "exe.txt" is drawn
    # "eviltxt.exe"); a zero-width space makes "back" ZWSP "up" look like another task's
    # "backup". The joiners (ZWNJ, ZWJ) and the implicit marks (LRM, RLM, ALM) stay:
    # Persian, Indic, emoji and right-to-left names need them (see window_visible).
    if text.isascii() and text.isprintable():  # the usual name: nothing to escape
        return text
    return window_visible(text)


def shown_lines(text: str) -> str:
    """``shown``, for text that is several lines on purpose: its tabs and line ends
    stay as they are, everything else ``shown`` escapes is escaped.

    For what a person reads as a paragraph or a log rather than as a name: a run's
    output, an error the runner wrote over several lines.
    """
    return window_visible(text, lines=True)


LEFT_TO_RIGHT_MARK = "\u200e"
_RIGHT_TO_LEFT = frozenset({"R", "AL"})  # Hebrew; Arabic, Syriac, Thaana (UAX #9)


def has_right_to_left(text: str) -> bool:
    """Whether ``text`` holds a right-to-left letter (Hebrew, Arabic, ...)."""
    return not text.isascii() and any(bidirectional(char) in _RIGHT_TO_LEFT for char in text)


def left_to_right(text: str) -> str:
    """``text`` laid out as the English sentences it is part of, line by line.

    Qt takes a paragraph's direction from its first strong letter, so a line that
    begins with a Hebrew or Arabic name ("“גיבוי” failed", a tooltip's first line, the
    history header) was laid out right to left: right-aligned, its parts reversed
    ("failed ”גיבוי“"). An invisible LEFT-TO-RIGHT MARK first on each line settles it.
    Text with no right-to-left letter is returned as it is.
    """
    if not has_right_to_left(text):
        return text
    return LEFT_TO_RIGHT_MARK + text.replace("\n", "\n" + LEFT_TO_RIGHT_MARK)


def isolated(text: str) -> str:
    """``shown(text)`` between FIRST STRONG ISOLATE and POP DIRECTIONAL ISOLATE.

    By the Unicode bidi algorithm an isolate is laid out on its own, so "Delete the
    task “…” and its history?" reads in order whatever the name holds: its overrides
    are made visible and a right-to-left name keeps to its place in the sentence.
    ASCII text is only ``shown``: it holds no right-to-left letter and no direction
    control, and the sentences are English, so the isolate would change nothing on
    screen (and would only follow the name into what a person copies).
    """
    if text.isascii():
        return shown(text)  # a tab or a line break is still written as \t, \n
    return f"\u2068{shown(text)}\u2069"


def inert_markup(text: str) -> str:
    """``text`` with a word joiner after every ``<`` and ``&``: no tag, no entity.

    For text whose renderer we do not choose: a tray balloon (Qt draws its title with
    the rich-text guess) or a notification server behind the tray or the D-Bus
    notifier, which may parse markup whatever it advertises. Escaping would show
    ``&lt;`` wherever the text *is* plain; the joiner is invisible either way.
    """
    return text.replace("<", "<" + WORD_JOINER).replace("&", "&" + WORD_JOINER)


# ----------------------------------------------------------------- message boxes


def message_box(
    parent: QWidget | None,
    icon: QMessageBox.Icon,
    title: str,
    text: str,
    *,
    buttons: Button = Button.Ok,
    default: Button = Button.NoButton,
) -> QMessageBox:
    """A QMessageBox whose text is plain: what the static helpers build, minus the guess."""
    box = QMessageBox(icon, title, text, buttons, parent)
    box.setTextFormat(Qt.TextFormat.PlainText)
    if default != Button.NoButton:
        box.setDefaultButton(default)
    return box


def _exec(box: QMessageBox) -> Button:
    box.exec()
    answer = box.standardButton(box.clickedButton())
    box.deleteLater()
    return answer


def warn(parent: QWidget | None, title: str, text: str) -> None:
    _exec(message_box(parent, QMessageBox.Icon.Warning, title, text))


def inform(parent: QWidget | None, title: str, text: str) -> None:
    _exec(message_box(parent, QMessageBox.Icon.Information, title, text))


def critical(parent: QWidget | None, title: str, text: str) -> None:
    _exec(message_box(parent, QMessageBox.Icon.Critical, title, text))


def _question(
    parent: QWidget | None, title: str, text: str, yes: Button, no: Button
) -> QMessageBox:
    """A plain-text question whose default, and Escape, is the careful answer ``no``."""
    box = message_box(parent, QMessageBox.Icon.Question, title, text, buttons=yes | no, default=no)
    box.setEscapeButton(no)
    return box


def ask_yes_no(parent: QWidget | None, title: str, text: str) -> bool:
    """Yes or No (the default, and what Escape or closing the box means)."""
    return _exec(_question(parent, title, text, Button.Yes, Button.No)) == Button.Yes


def ask_discard(parent: QWidget | None, title: str, text: str) -> bool:
    """Discard, or Keep Editing (the default, and what Escape means here too)."""
    box = _question(parent, title, text, Button.Discard, Button.Cancel)
    keep = box.button(Button.Cancel)
    if keep is not None:
        keep.setText("Keep Editing")
    return _exec(box) == Button.Discard
