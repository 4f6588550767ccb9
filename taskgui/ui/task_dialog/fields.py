"""Small building blocks shared by the task dialog and its editors.

The dialog validates as a person types by building core values from the widgets and
showing core's own ``InvalidTaskError`` message under the field that caused it; so the
dialog and the CLI reject the same input with the same words. What lives here is the
glue for that: a message label, a duration field, a guard that keeps exceptions inside
slots, the local time zone and the text forms of durations and environment variables.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import TypeVar

import shiboken6
from PySide6.QtCore import QDateTime, QEvent, QObject, Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QComboBox,
    QFormLayout,
    QGridLayout,
    QLabel,
    QLayout,
    QLineEdit,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from taskgui.core.duration import duration_text, parse_duration
from taskgui.core.errors import InvalidTaskError
from taskgui.ui.task_dialog.fixed_lines import FixedLinesLabel

log = logging.getLogger(__name__)


# Readable on light and on dark window backgrounds respectively.
_ERROR_COLORS = ("#c62828", "#ff7b72")
_WARNING_COLORS = ("#8a5a00", "#f0b35a")


class MessageLabel(FixedLinesLabel):
    """A line under a field: red for an error, amber for a warning.

    Its room is kept while there is nothing to say, and a message never takes more
    than its one line (the rest is cut; the tooltip has it all), so the form never
    moves under the pointer while a person types.

    An error is not shown before the person has had a go at its field: until the
    field is edited or left (or Create is tried, ``reveal``), the message is known
    (``message()``, the Create button's tooltip) but not put in red under a field
    nobody has touched. A warning shows at once. The message shown is also the
    field's accessible description, so a screen reader announces it.
    """

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        warning: bool = False,
        field: QWidget | None = None,
        lines: int = 1,
    ) -> None:
        super().__init__(lines, wrap=lines > 1, parent=parent)
        self.is_warning = warning
        self._field = field
        self._message = ""
        self._described = ""  # what this label made its field's accessible description
        self._revealed = warning or field is None
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.setAccessibleName("Warning" if warning else "Error")
        self.hide()
        self.restyle()
        if field is not None and not self._revealed:
            _watch_edits(field, self.reveal)

    def restyle(self) -> None:
        """Colour the text for what it is (error or warning) on this palette."""
        dark = self.palette().color(QPalette.ColorRole.Window).lightness() < 128
        colors = _WARNING_COLORS if self.is_warning else _ERROR_COLORS
        self.setStyleSheet(f"color: {colors[1] if dark else colors[0]};")

    def show_message(self, message: str | None) -> None:
        """Say ``message`` (None or empty: nothing); shown once revealed."""
        self._message = message or ""
        self._show()

    def reveal(self) -> None:
        """From now on, show what there is to say."""
        if not self._revealed:
            self._revealed = True
            self._show()

    def _show(self) -> None:
        shown = self._message if self._revealed else ""
        if shown != self.text() or self.isHidden() == bool(shown):
            self.setText(shown)
            self.setVisible(bool(shown))
        field = self._field
        if field is not None and not shiboken6.isValid(field):
            return  # its dialog is going: a field losing its focus then reveals this
        # An error and a warning can be about one field: a label clears only what it said.
        if field is not None and (shown or field.accessibleDescription() == self._described):
            field.setAccessibleDescription(shown)
            self._described = shown

    def message(self) -> str:
        """The message, shown or not yet ("" when there is nothing to say)."""
        return self._message

    def shown_message(self) -> str:
        """The message as shown now ("" before it is revealed)."""
        return self._message if self._revealed else ""

    def is_cut(self) -> bool:
        """Whether the message shown did not fit in its line."""
        # Word-wrapped lines differ from the text by their line breaks only.
        return bool(self.shown_message()) and self.shown_text().split() != self.text().split()

    def field_name(self) -> str:
        """The accessible name of the field it is about ("" for the whole form)."""
        return self._field.accessibleName() if self._field is not None else ""


class _EditWatcher(QObject):
    """Calls back when the person edits a field or leaves it (focus out)."""

    def __init__(self, field: QWidget, callback: Callable[[], None]) -> None:
        super().__init__(field)
        self._callback = callback
        field.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.FocusOut:
            self._callback()
        return False


def _watch_edits(field: QWidget, callback: Callable[[], None]) -> None:
    """Run ``callback`` once the person has edited or left ``field``.

    Only edits a person makes count where Qt tells them apart (``textEdited``);
    loading a task into the form is not an edit.
    """
    _EditWatcher(field, callback)
    edited = None
    if isinstance(field, QLineEdit):
        edited = field.textEdited
    elif isinstance(field, QPlainTextEdit):
        edited = field.textChanged
    elif isinstance(field, QComboBox):
        edited = field.editTextChanged
    elif isinstance(field, QAbstractSpinBox):
        edited = field.editingFinished
    if edited is not None:
        edited.connect(lambda *_args: callback())


def checked(label: MessageLabel, build: Callable[[], T]) -> T | None:
    """Run ``build``; show its InvalidTaskError under the field, or clear the label.

    Returns the built value, or None when it was rejected.
    """
    try:
        value = build()
    except InvalidTaskError as error:
        label.show_message(str(error))
        return None
    label.show_message(None)
    return value


T = TypeVar("T")
W = TypeVar("W", bound=QWidget)


def named(widget: W, object_name: str, accessible_name: str, tip: str = "") -> W:
    """Give a widget the names tests and screen readers find it by, and a tooltip."""
    widget.setObjectName(object_name)
    widget.setAccessibleName(accessible_name)
    if tip:
        widget.setToolTip(tip)
    return widget


def combo_box(
    object_name: str, accessible_name: str, items: Sequence[tuple[str, object, str]]
) -> QComboBox:
    """A combo of (text, data, item tooltip) choices; an item tooltip explains a choice."""
    combo = named(QComboBox(), object_name, accessible_name)
    for index, (text, data, tip) in enumerate(items):
        combo.addItem(text, data)
        if tip:
            combo.setItemData(index, tip, Qt.ItemDataRole.ToolTipRole)
    return combo


def new_form(parent: QWidget | None = None) -> QFormLayout:
    form = QFormLayout(parent)
    form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
    return form


def add_row(form: QFormLayout, text: str, buddy: QWidget, cell: QWidget | None = None) -> QLabel:
    """A labelled row whose label (with its mnemonic) focuses ``buddy``."""
    label = QLabel(text)
    label.setBuddy(buddy)
    form.addRow(label, cell if cell is not None else buddy)
    return label


def one_place(*labels: QWidget) -> QWidget:
    """Labels that never show together (an error, a warning) in the same room."""
    place = QWidget()
    grid = QGridLayout(place)
    grid.setContentsMargins(0, 0, 0, 0)
    for label in labels:
        grid.addWidget(label, 0, 0)
    return place


def field_cell(*items: QWidget | QLayout) -> QWidget:
    """A form cell: an editor (widget or layout) with what goes below it, e.g. messages."""
    cell = QWidget()
    column = QVBoxLayout(cell)
    column.setContentsMargins(0, 0, 0, 0)
    column.setSpacing(3)
    for item in items:
        if isinstance(item, QWidget):
            column.addWidget(item)
        else:
            column.addLayout(item)
    return cell


# ------------------------------------------------------------------ durations


class DurationEdit(QLineEdit):
    """A line edit for durations like ``30s``, ``5m``, ``1h30m`` or ``2d``.

    ``optional`` fields read empty text as "none" (a timeout), the others reject it.
    """

    def __init__(
        self, parent: QWidget | None = None, *, optional: bool = False, example: str = "30s"
    ) -> None:
        super().__init__(parent)
        self._optional = optional
        self.setPlaceholderText("none" if optional else f"e.g. {example}")
        self.setToolTip("Write it like 30s, 5m, 1h30m or 2d")
        self.setClearButtonEnabled(optional)

    def duration(self) -> timedelta | None:
        """The duration typed; None for an empty optional field.

        Raises InvalidTaskError with core's wording when the text cannot be read.
        """
        text = self.text()
        if not text.strip():
            if self._optional:
                return None
            raise InvalidTaskError("enter a duration like 30s, 5m, 1h30m or 2d")
        return parse_duration(text)

    def set_duration(self, delta: timedelta | None) -> None:
        self.setText("" if delta is None else duration_text(delta))


# -------------------------------------------------------------- environment


def parse_env_lines(text: str) -> tuple[tuple[str, str], ...]:
    """``NAME=value`` lines as pairs; blank lines and ``#`` comments are skipped.

    Only the form is checked here; whether a name is valid is ``Command``'s rule.
    The value is kept exactly (spaces included) because the program sees it exactly.
    """
    pairs: list[tuple[str, str]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        name, sep, value = line.partition("=")
        if not sep:
            raise InvalidTaskError(
                f"line {number}: {line.strip()!r} needs the form NAME=value, e.g. LANG=C.UTF-8"
            )
        if not name.strip():
            raise InvalidTaskError(f"line {number}: the variable name before '=' is missing")
        pairs.append((name.strip(), value))
    return tuple(pairs)


def env_text(pairs: tuple[tuple[str, str], ...]) -> str:
    return "\n".join(f"{name}={value}" for name, value in pairs)


# ------------------------------------------------------------------ time


def to_qdatetime(moment: datetime) -> QDateTime:
    """An aware datetime as a local QDateTime, to the whole second (the field's step)."""
    whole = int(moment.timestamp() // 1)
    return QDateTime.fromSecsSinceEpoch(whole)


def from_qdatetime(value: QDateTime) -> datetime:
    """A QDateTime (any spec) as an aware UTC datetime."""
    return datetime.fromtimestamp(value.toSecsSinceEpoch(), UTC)


def floor_to_second(moment: datetime) -> datetime:
    return moment.replace(microsecond=0)
