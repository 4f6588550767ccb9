"""The tray icon: taskgui's presence while the window is closed.

Its menu shows or hides the window, creates a task, pauses or resumes every task and
quits; a click on the icon toggles the window. The icon carries a red badge while
something failed, and its tooltip says how many tasks did.

The icon is only shown where a tray exists: elsewhere (offscreen, bare X servers) a
``Tray`` still builds its menu and state, which is what tests look at.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal, SignalInstance
from PySide6.QtGui import QAction, QIcon
from PySide6.QtWidgets import QMenu, QSystemTrayIcon

from taskgui.ui.icons import action_icon, tray_icon
from taskgui.ui.plain_text import inert_markup

MESSAGE_MS = 8_000


class Tray(QObject):
    """The tray icon and its menu. It asks; the shell acts.

    Signals:
        toggle_window_requested(): show the window, or hide it if it is showing.
        new_task_requested(): "New Task…" was chosen.
        pause_all_requested(): "Pause All" was chosen.
        resume_all_requested(): "Resume All" was chosen.
        settings_requested(): "Settings…" was chosen.
        quit_requested(): "Quit" was chosen.
    """

    toggle_window_requested = Signal()
    new_task_requested = Signal()
    pause_all_requested = Signal()
    resume_all_requested = Signal()
    settings_requested = Signal()
    quit_requested = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.failed = 0
        self.icon = QSystemTrayIcon(tray_icon(False), self)
        # A menu with no parent widget: the tray owns it through this object.
        self.menu = QMenu()
        self.menu.setAccessibleName("taskgui tray menu")
        self.toggle_action = self._add(
            action_icon("window"), "Show Window", self.toggle_window_requested
        )
        self.menu.addSeparator()
        self.new_action = self._add(action_icon("new"), "New Task…", self.new_task_requested)
        self.pause_all_action = self._add(
            action_icon("pause"), "Pause All Tasks", self.pause_all_requested
        )
        self.resume_all_action = self._add(
            action_icon("resume"), "Resume All Tasks", self.resume_all_requested
        )
        self.menu.addSeparator()
        self.settings_action = self._add(
            action_icon("settings"), "Settings…", self.settings_requested
        )
        self.quit_action = self._add(action_icon("quit"), "Quit taskgui", self.quit_requested)
        self.icon.setContextMenu(self.menu)
        self.icon.activated.connect(self._on_icon_activated)
        self.set_failed(0)

    def _add(self, icon: QIcon, text: str, signal: SignalInstance) -> QAction:
        action = QAction(icon, text, self.menu)
        action.triggered.connect(lambda _=False: signal.emit())
        self.menu.addAction(action)
        return action

    # ------------------------------------------------------------------ state

    def show(self) -> None:
        if QSystemTrayIcon.isSystemTrayAvailable():
            self.icon.show()

    def hide(self) -> None:
        self.icon.hide()

    def close(self) -> None:
        self.icon.hide()
        self.menu.deleteLater()

    def set_window_visible(self, visible: bool) -> None:
        self.toggle_action.setText("Hide Window" if visible else "Show Window")

    def set_can_pause_resume(self, can_pause: bool, can_resume: bool) -> None:
        self.pause_all_action.setEnabled(can_pause)
        self.resume_all_action.setEnabled(can_resume)

    def set_failed(self, count: int) -> None:
        """Badge the icon while ``count`` tasks are failing (exhausted or retrying)."""
        self.failed = count
        self.icon.setIcon(tray_icon(count > 0))
        if count:
            self.icon.setToolTip(f"taskgui — {count} task{'s' if count != 1 else ''} failed")
        else:
            self.icon.setToolTip("taskgui — running your schedule")

    def show_message(self, title: str, text: str) -> None:
        self.icon.showMessage(
            inert_markup(title),
            inert_markup(text),
            QSystemTrayIcon.MessageIcon.Information,
            MESSAGE_MS,
        )

    # ------------------------------------------------------------------ slots

    def _on_icon_activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason in (
            QSystemTrayIcon.ActivationReason.Trigger,
            QSystemTrayIcon.ActivationReason.DoubleClick,
        ):
            self.toggle_window_requested.emit()
