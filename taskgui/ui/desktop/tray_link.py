"""The tray's side of the desktop shell: its menu's wiring, and the badge of failures.

The badge counts the tasks that failed (exhausted or retrying); when none does any
more but one gave up while nobody looked at the window, it still says so until the
window is looked at (activated). Which tasks those are is kept here, so the shell
(``shell``) only says when a task gave up or runs again.

What the tray asks for that is the shell's to decide (hide the window to the tray,
open the settings, quit) arrives as callables, so this module holds no policy.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QWidget

from taskgui.core.states import TaskState
from taskgui.runtime.guard import never_raises
from taskgui.ui.desktop.tray import Tray
from taskgui.ui.window.actions import Verb, allowed
from taskgui.ui.window.main_window import MainWindow


class TrayLink(QObject):
    """Connects ``tray`` to ``window``; see the module docstring."""

    def __init__(
        self,
        window: MainWindow,
        tray: Tray,
        *,
        hide_window: Callable[[], None],
        open_settings: Callable[[], None],
        request_quit: Callable[[], None],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.window = window
        self.tray = tray
        self._hide_window = hide_window
        self._unseen: set[int] = set()  # exhausted while the window was not looked at
        tray.toggle_window_requested.connect(self._on_tray_toggle_window_requested)
        tray.new_task_requested.connect(self._on_tray_new_task_requested)
        tray.pause_all_requested.connect(window.window_actions["pause_all"].trigger)
        tray.resume_all_requested.connect(window.window_actions["resume_all"].trigger)
        tray.settings_requested.connect(open_settings)
        tray.quit_requested.connect(request_quit)
        tray.menu.aboutToShow.connect(self._on_tray_menu_about_to_show)
        window.model.counts_changed.connect(self.update)
        window.installEventFilter(self)

    def update(self) -> None:
        """Redo the badge and the menu's Show/Hide from the window as it is now."""
        counts = self.window.model.counts()
        failing = counts.get(TaskState.EXHAUSTED, 0) + counts.get(TaskState.RETRYING, 0)
        self.tray.set_failed(failing or len(self._unseen))
        self.tray.set_window_visible(self.window.isVisible())

    def gave_up(self, task_id: int) -> None:
        """A task gave up: news until the window is looked at, if it is not now."""
        if not self.window.isActiveWindow():
            self._unseen.add(task_id)
        self.update()

    def runs_again(self, task_id: int) -> None:
        """A task that gave up runs again: its giving up is no longer news."""
        if task_id in self._unseen:
            self._unseen.discard(task_id)
            self.update()

    @never_raises("following the window for the tray", default=False)
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if watched is self.window and isinstance(watched, QWidget):
            kind = event.type()
            if kind in (QEvent.Type.Show, QEvent.Type.Hide):
                self.update()
            elif kind == QEvent.Type.WindowActivate and self._unseen:
                self._unseen.clear()
                self.update()
        return False

    @never_raises("showing or hiding the window from the tray")
    def _on_tray_toggle_window_requested(self) -> None:
        if self.window.isVisible() and not self.window.isMinimized():
            self._hide_window()
        else:
            self.window.reveal()

    @never_raises("a new task from the tray")
    def _on_tray_new_task_requested(self) -> None:
        self.window.reveal()
        self.window.actions_[Verb.NEW].trigger()

    @never_raises("updating the tray menu")
    def _on_tray_menu_about_to_show(self) -> None:
        model = self.window.model
        model.flush_pending()
        snapshots = [s for i in model.task_ids() if (s := model.snapshot_of(i)) is not None]
        self.tray.set_can_pause_resume(
            any(allowed(Verb.PAUSE, s) for s in snapshots),
            any(allowed(Verb.RESUME, s) for s in snapshots),
        )
        self.tray.set_window_visible(self.window.isVisible())
