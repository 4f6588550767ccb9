"""A section of the task dialog that folds out under an arrow button.

Advanced, Conditions & spread and Run after are hidden until asked for, so a first
task is a name, a command and a time. They fold the same way, and a problem in a
folded section is said on its header ("— needs attention"), or the disabled Save
button would be a riddle.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QGroupBox, QToolButton, QVBoxLayout, QWidget

from taskgui.runtime.guard import never_raises
from taskgui.ui.task_dialog.fields import named


class Foldout(QWidget):
    """A header button over a frame (``content``) that a subclass fills.

    Signals:
        changed(): the section was folded in or out, or a field in it was edited
            (subclasses emit it for their fields).
    """

    changed = Signal()

    def __init__(
        self, name: str, accessible_name: str, title: str, parent: QWidget | None = None
    ) -> None:
        """``title`` is the header's text, mnemonic and all (``&&`` for an ampersand)."""
        super().__init__(parent)
        self._title = title
        self.toggle = named(QToolButton(), name, accessible_name)
        self.toggle.setText(title)
        self.toggle.setCheckable(True)
        self.toggle.setAutoRaise(True)
        self.toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.toggle.setArrowType(Qt.ArrowType.RightArrow)
        self.content = QGroupBox()
        self.content.hide()
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.toggle, 0, Qt.AlignmentFlag.AlignLeft)
        column.addWidget(self.content)
        self.toggle.toggled.connect(self._on_toggle_toggled)

    def set_expanded(self, expanded: bool) -> None:
        self.toggle.setChecked(expanded)  # toggled shows or hides the content

    def is_expanded(self) -> bool:
        return self.toggle.isChecked()

    def show_attention(self, problem: bool) -> None:
        """Say on the header that a field inside is wrong, while the section is folded."""
        hidden = problem and not self.is_expanded()
        self.toggle.setText(f"{self._title} — needs attention" if hidden else self._title)

    @never_raises
    def _on_toggle_toggled(self, expanded: bool) -> None:
        self.content.setVisible(expanded)
        self.toggle.setArrowType(Qt.ArrowType.DownArrow if expanded else Qt.ArrowType.RightArrow)
        self.changed.emit()
