"""The Settings dialog: workers, the wake-up policy, notifications, how taskgui starts.

It edits a ``Settings`` and an ``Autostart`` and applies both when accepted; the caller
applies what affects the running app (the worker count) from ``applied``. Controls that
do not apply here are disabled with a tooltip that says why (the worker count of a
schedule run by ``taskgui daemon``, start minimized without a tray).
"""

from __future__ import annotations

import logging

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from taskgui.core.errors import TaskguiError
from taskgui.core.wake import parse_wake_policy
from taskgui.ui.desktop.autostart import Autostart
from taskgui.ui.desktop.notify_group import NotifyGroup
from taskgui.ui.desktop.settings import MAX_WORKERS, Settings
from taskgui.ui.plain_text import plain_label, plain_tooltip, warn

log = logging.getLogger(__name__)

_WAKE_ITEMS = (
    ("Spread them over 10 minutes", "spread:10m"),
    ("Spread them over 30 minutes", "spread:30m"),
    ("Run them at once", "now"),
    ("Ask me", "ask"),
)
_CLOSE_ITEMS = (
    ("Ask each time", "ask"),
    ("Quit", "quit"),
    ("Keep running in the background", "background"),
)


class SettingsDialog(QDialog):
    """Edits the preferences. See the module docstring.

    Signals:
        applied(): the settings were saved (the caller applies the worker count).
    """

    applied = Signal()

    def __init__(
        self,
        settings: Settings,
        autostart: Autostart,
        *,
        workers_editable: bool = True,
        workers_note: str = "",
        workers_elsewhere: int = 0,
        tray_available: bool = True,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Settings")
        self.settings = settings
        self.autostart = autostart

        self.workers = QSpinBox(self)
        self.workers.setRange(1, MAX_WORKERS)
        self.workers.setValue(settings.workers)
        if not workers_editable:
            # What the processes running the schedule have (``workers_elsewhere``; 0:
            # not known here), not this machine's setting, which they do not use.
            self.workers.setRange(0, max(MAX_WORKERS, workers_elsewhere))  # nodes reach 1,024
            self.workers.setSpecialValueText("not known here")
            self.workers.setValue(workers_elsewhere)
        self.workers.setAccessibleName("Workers")
        self.workers.setToolTip("How many tasks may run at the same time")
        self.workers.setEnabled(workers_editable)
        workers_hint = plain_label(
            workers_note or "Tasks that may run at the same time.", self, word_wrap=True
        )
        workers_hint.setEnabled(False)  # a dimmed hint, from the palette

        # The default rule, quiet hours and the webhook and mail channels.
        self.notifications = NotifyGroup(settings.notify, self)

        # What a wake-up does with the runs that came due while the computer slept.
        self.on_wake = QComboBox(self)
        self.on_wake.setAccessibleName("After a sleep")
        self.on_wake.setToolTip(
            "When the computer wakes with many runs due at once (tasks may choose their own)"
        )
        current = settings.wake_policy.text
        for text, value in _WAKE_ITEMS:
            self.on_wake.addItem(text, value)
        if self.on_wake.findData(current) < 0:  # set elsewhere (by hand, another version)
            self.on_wake.addItem(settings.wake_policy.describe().capitalize(), current)
        self.on_wake.setCurrentIndex(self.on_wake.findData(current))

        scheduler = QGroupBox("Scheduler", self)
        form = QFormLayout(scheduler)
        form.addRow("&Workers:", self.workers)
        form.addRow("", workers_hint)
        form.addRow("After a &sleep, runs due:", self.on_wake)
        notifications = self.notifications
        startup = self._startup_group(tray_available)

        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        self.buttons.accepted.connect(self._on_buttons_accepted)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        for widget in (scheduler, notifications, startup):
            layout.addWidget(widget)
        layout.addStretch(1)
        layout.addWidget(self.buttons)
        self.setMinimumWidth(420)

    def _startup_group(self, tray_available: bool) -> QGroupBox:
        """Starting at login, minimized, and what closing the window does without a tray."""
        settings, autostart = self.settings, self.autostart
        self.start_minimized = QCheckBox("Start &minimized to the tray", self)
        self.start_minimized.setChecked(settings.start_minimized and tray_available)
        if not tray_available:
            self.start_minimized.setEnabled(False)
            self.start_minimized.setToolTip("This desktop shows no tray icons")
        self.start_at_login = QCheckBox("Start taskgui when I &log in", self)
        self.start_at_login.setChecked(autostart.enabled)
        self.start_at_login.setToolTip(plain_tooltip(f"Writes {autostart.path}"))
        # Without a tray, closing the window has to quit or hand over; say which.
        self.on_close = QComboBox(self)
        self.on_close.setAccessibleName("When the window closes")
        for text, value in _CLOSE_ITEMS:
            self.on_close.addItem(text, value)
        self.on_close.setCurrentIndex(max(0, self.on_close.findData(settings.close_without_tray)))
        self.on_close.setVisible(not tray_available)

        startup = QGroupBox("Startup", self)
        box = QVBoxLayout(startup)
        box.addWidget(self.start_at_login)
        box.addWidget(self.start_minimized)
        if not tray_available:
            on_close = QFormLayout()
            on_close.addRow("When I &close the window:", self.on_close)
            box.addLayout(on_close)
        return startup

    def apply(self) -> bool:
        """Save every choice; False (after telling the person) if the entry failed."""
        settings = self.settings
        if self.workers.isEnabled():
            settings.workers = self.workers.value()
        settings.wake_policy = parse_wake_policy(str(self.on_wake.currentData()))
        try:
            self.notifications.apply()
        except TaskguiError as error:
            warn(self, "taskgui", f"The notification settings were not saved: {error}")
            return False
        if self.start_minimized.isEnabled():
            settings.start_minimized = self.start_minimized.isChecked()
        if not self.on_close.isHidden():
            settings.close_without_tray = str(self.on_close.currentData())
        try:
            self.autostart.set_enabled(self.start_at_login.isChecked())
        except OSError as error:
            warn(
                self,
                "taskgui",
                f"Could not change {self.autostart.path}: {error.strerror or error}",
            )
            return False
        self.applied.emit()
        return True

    def _on_buttons_accepted(self) -> None:
        try:
            if self.apply():
                self.accept()
        except Exception as error:
            log.exception("saving the settings failed")
            warn(self, "taskgui", f"Could not save the settings: {error}")
