"""The in-window notification bar: what a failed task says where no tray or bus exists.

A strip at the top of the main window with an icon, the notice, a "Show History" button
and a dismiss button (Escape works too when it has focus). Its tint is translucent red
or amber over whatever the window colour is, and its text uses the palette, so it reads
in light and dark themes alike. A newer notice replaces the shown one; the bar says how
many arrived since it was last dismissed.
"""

from __future__ import annotations

from typing import NamedTuple

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from taskgui.core.states import TaskState
from taskgui.ui.icons import action_icon, state_icon
from taskgui.ui.plain_text import left_to_right

_TINTS = {
    True: ("rgba(220, 38, 38, 0.14)", "rgba(220, 38, 38, 0.55)"),
    False: ("rgba(217, 119, 6, 0.14)", "rgba(217, 119, 6, 0.55)"),
}


class BarParts(NamedTuple):
    """What ``build_bar`` made: the layout (buttons go after) and its three labels."""

    layout: QHBoxLayout
    icon: QLabel
    title: QLabel
    message: QLabel


def build_bar(frame: QFrame) -> BarParts:
    """A bar's labels and layout, the same in every banner: the icon, then the title
    (bold) over the message, both plain text (they name tasks and hosts) and wrapping
    (a long name must not widen the window), the message selectable for copying."""
    icon, title, message = QLabel(frame), QLabel(frame), QLabel(frame)
    font = title.font()
    font.setBold(True)
    title.setFont(font)
    for label in (title, message):
        label.setTextFormat(Qt.TextFormat.PlainText)
        label.setWordWrap(True)
    message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return BarParts(_lay_out_bar(frame, icon, title, message), icon, title, message)


def _lay_out_bar(frame: QFrame, icon: QLabel, title: QLabel, message: QLabel) -> QHBoxLayout:
    texts = QVBoxLayout()
    texts.setSpacing(2)
    texts.addWidget(title)
    texts.addWidget(message)
    layout = QHBoxLayout(frame)
    layout.setContentsMargins(10, 6, 6, 6)
    layout.addWidget(icon, 0, Qt.AlignmentFlag.AlignTop)
    layout.addLayout(texts, 1)
    return layout


def tint(frame: QFrame, *, urgent: bool) -> None:
    """Red (urgent) or amber, translucent over the window colour: a frame named by its
    object name, so the tint does not reach the widgets inside it."""
    background, border = _TINTS[urgent]
    frame.setStyleSheet(
        f"QFrame#{frame.objectName()} {{ background: {background}; border: 1px solid {border};"
        " border-radius: 6px; }"
    )


class Banner(QFrame):
    """A dismissable notice bar. Hidden until ``show_message``.

    Signals:
        action_requested(int): "Show History" was pressed for this task id.
        dismissed(): the person closed the bar.
    """

    action_requested = Signal(int)
    dismissed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("notice-banner")
        self.setAccessibleName("Notification")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self._task_id: int | None = None
        self.count = 0
        bar = build_bar(self)
        self.icon_label, self.title_label, self.message_label = bar.icon, bar.title, bar.message
        self.more_label = QLabel(self)
        self.more_label.setAccessibleName("Earlier notifications")
        self.history_button = QPushButton(action_icon("history"), "Show History", self)
        self.history_button.setAccessibleName("Show the task's history")
        self.history_button.clicked.connect(self._on_history_button_clicked)
        self.dismiss_button = QToolButton(self)
        self.dismiss_button.setIcon(action_icon("dismiss"))
        self.dismiss_button.setAutoRaise(True)
        self.dismiss_button.setToolTip("Dismiss (Esc)")
        self.dismiss_button.setAccessibleName("Dismiss notification")
        self.dismiss_button.clicked.connect(self._on_dismiss_button_clicked)
        layout = bar.layout
        layout.addWidget(self.more_label)
        layout.addWidget(self.history_button)
        layout.addWidget(self.dismiss_button, 0, Qt.AlignmentFlag.AlignTop)
        tint(self, urgent=True)
        self.hide()

    @property
    def task_id(self) -> int | None:
        return self._task_id

    def show_message(
        self, title: str, message: str, *, task_id: int | None = None, urgent: bool = True
    ) -> None:
        self._task_id = task_id
        self.count += 1
        self.title_label.setText(left_to_right(title))  # it may begin with a name
        self.message_label.setText(left_to_right(message))
        earlier = self.count - 1
        self.more_label.setText(f"+{earlier} earlier" if earlier else "")
        self.more_label.setVisible(bool(earlier))
        self.history_button.setVisible(task_id is not None)
        state = TaskState.EXHAUSTED if urgent else TaskState.RETRYING
        size = self.title_label.fontMetrics().height() + 4
        self.icon_label.setPixmap(state_icon(state).pixmap(size, size))
        tint(self, urgent=urgent)
        self.setAccessibleDescription(f"{title}. {message}")
        self.show()

    def dismiss(self) -> None:
        was_visible = self.isVisible()
        self.hide()
        self.count = 0
        self._task_id = None
        if was_visible:
            self.dismissed.emit()

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        if event.key() == Qt.Key.Key_Escape:
            self.dismiss()
            return
        super().keyPressEvent(event)

    def _on_history_button_clicked(self) -> None:
        task_id = self._task_id
        self.dismiss()  # acted upon
        if task_id is not None:
            self.action_requested.emit(task_id)

    def _on_dismiss_button_clicked(self) -> None:
        self.dismiss()
