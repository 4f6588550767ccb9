"""Whether a person changed the task dialog's form, so that Escape, Cancel or the
close button ask before throwing the typing away (they closed it at once: a long
command typed, one Escape too many, and it was gone).

What the form holds is read from its widgets, every field the same way, so a field
added later counts without anyone remembering it here: a person's change is one that
moved what some field shows. The "When" field is left out while it follows the clock
(it moves by itself); once a person picks a time it counts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtWidgets import (
    QAbstractButton,
    QComboBox,
    QGroupBox,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QToolButton,
    QWidget,
)

from taskgui.ui.plain_text import ask_discard, isolated

__all__ = ["AskDiscard", "FormChanges", "ask_discard", "discard_question", "form_state"]

# (parent, title, question) -> True to throw the changes away (plain_text.ask_discard)
AskDiscard = Callable[[QWidget, str, str], bool]


def discard_question(editing: str | None, *, copy: bool) -> str:
    """What closing with changes asks; ``editing``: the name of the task edited."""
    if editing is not None:
        return f"Discard your changes to “{isolated(editing)}”?"
    return "Discard this copy of the task?" if copy else "Discard this new task?"


class FormChanges:
    """What the form showed when it opened, against what it shows now.

    Holds values only, no widget: the dialog hands over what its form shows
    (``form_state``). (Holding the dialog's own method made a reference cycle through
    a Qt-owned dialog, and the garbage collector deleted it under Qt: a crash.)
    """

    def __init__(self, ask: AskDiscard, question: str) -> None:
        self._ask = ask
        self._question = question
        self._opened: tuple[object, ...] | None = None  # read at the first show

    def first_shown(self, read: Callable[[], tuple[object, ...]]) -> None:
        """At the first show the form as it stands is the one opened: whatever the
        window filled in before is not a person's change. ``read`` is called then only
        (not at every show, nor when the dialog is built)."""
        if self._opened is None:
            self._opened = read()

    def changed(self, state: tuple[object, ...]) -> bool:
        return self._opened is not None and state != self._opened

    def may_discard(self, parent: QWidget, state: tuple[object, ...]) -> bool:
        """Unchanged, or the person said to discard the changes."""
        return not self.changed(state) or self._ask(parent, "Discard Changes", self._question)


def form_state(form: QWidget, moving: Sequence[QWidget]) -> tuple[object, ...]:
    """What every field of ``form`` shows, but those in ``moving`` (which change by
    themselves just now)."""
    window = form.window()
    return tuple(
        value
        for widget in form.findChildren(QWidget)
        # A popup a field makes when first opened (the "When" calendar, with its own
        # year field) is a window of its own: no field of the form (a review).
        if widget.window() is window
        and not any(still is widget or still.isAncestorOf(widget) for still in moving)
        and (value := _shown_value(widget)) is not None
    )


def _shown_value(widget: QWidget) -> object:
    """What a field shows (None: not a field)."""
    if isinstance(widget, QLineEdit):  # also every spin box's and date field's text
        return widget.text()
    if isinstance(widget, QPlainTextEdit):
        return widget.toPlainText()
    if isinstance(widget, QComboBox):
        return (widget.currentIndex(), widget.currentText())
    if isinstance(widget, QAbstractButton) and not isinstance(widget, QToolButton):
        # A section's fold-out toggle (a tool button) shows more, it changes nothing.
        return widget.isChecked() if widget.isCheckable() else None
    if isinstance(widget, QGroupBox) and widget.isCheckable():
        return widget.isChecked()
    if isinstance(widget, QListWidget):
        items = (widget.item(row) for row in range(widget.count()))
        return tuple((item.text(), item.checkState().value) for item in items if item is not None)
    return None
