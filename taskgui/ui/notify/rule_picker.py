"""A control for a notification rule: a list of the five, and N for "after N".

The task dialog offers "As in Settings" first (the task keeps no rule of its own,
``None``); the Settings dialog, which sets that default, does not.
"""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QHBoxLayout, QSpinBox, QWidget

from taskgui.core.notify_rules import DEFAULT_RULE, MAX_STREAK, NotifyRule, NotifyWhen

FOLLOW_DEFAULT = "default"
_ITEMS = (
    ("On every failure", NotifyWhen.FAILURE.value),
    ("After failures in a row:", NotifyWhen.AFTER.value),
    ("When it recovers", NotifyWhen.RECOVERY.value),
    ("When it gives up", NotifyWhen.GIVE_UP.value),
    ("Never", NotifyWhen.NEVER.value),
)


class RulePicker(QWidget):
    """Edits a ``NotifyRule`` (or None, with ``allow_default``)."""

    def __init__(self, *, allow_default: bool, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.choice = QComboBox(self)
        self.choice.setAccessibleName("Notify")
        if allow_default:
            self.choice.addItem("As in Settings", FOLLOW_DEFAULT)
        for text, value in _ITEMS:
            self.choice.addItem(text, value)
        self.count = QSpinBox(self)
        self.count.setRange(2, MAX_STREAK)
        self.count.setValue(3)
        self.count.setAccessibleName("Failures in a row")
        self.count.setSuffix(" failures")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.choice, 1)
        layout.addWidget(self.count)
        self.choice.currentIndexChanged.connect(self._on_choice_current_index_changed)
        self.set_rule(None if allow_default else DEFAULT_RULE)

    def set_rule(self, rule: NotifyRule | None) -> None:
        if rule is None:
            index = self.choice.findData(FOLLOW_DEFAULT)
        else:
            index = self.choice.findData(rule.when.value)
            if rule.when is NotifyWhen.AFTER:
                self.count.setMinimum(1)
                self.count.setValue(rule.count)
        self.choice.setCurrentIndex(max(index, 0))
        self._on_choice_current_index_changed()

    def rule(self) -> NotifyRule | None:
        value = str(self.choice.currentData())
        if value == FOLLOW_DEFAULT:
            return None
        when = NotifyWhen(value)
        if when is NotifyWhen.AFTER:
            return NotifyRule(when=when, count=self.count.value())
        return NotifyRule(when=when)

    def _on_choice_current_index_changed(self, _index: int = 0) -> None:
        self.count.setVisible(self.choice.currentData() == NotifyWhen.AFTER.value)
