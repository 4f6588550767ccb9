"""The bar that says the window lost the connection to its shared schedule, and the
table standing still meanwhile.

A trial: when the PostgreSQL server went away, the window went on counting its runs'
seconds ("running 0:42", "in 3s", "due now") as if all were well, with one passing
status-bar line, until it read the schedule again some seconds later. Nothing it
showed was known any more. So while the follower cannot read the schedule
(``store_unreachable``, retried by the follower by itself), a bar names the database
and why, "Next run" stands as it was last known and says so, and the counts say they
are the last known; once it reads again (``store_reachable``) the bar goes, the table
moves on, and a status line says the connection is back.

The reason comes from the driver; it is plain text here as every text from outside is
(and has no password: ``StoreError.reason``).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from PySide6.QtWidgets import QFrame, QVBoxLayout, QWidget

from taskgui.core.states import TaskState
from taskgui.runtime.guard import never_raises
from taskgui.ui.icons import state_icon
from taskgui.ui.notify.banner import build_bar, tint
from taskgui.ui.plain_text import left_to_right
from taskgui.ui.window.main_window import MainWindow

RESTORED = "Connection to the shared schedule restored"
RESTORED_MS = 10_000


class ConnectionBanner(QFrame):
    """Shown while the shared schedule at ``place`` cannot be read; hidden otherwise.
    Not dismissable: it goes when the connection is back, and only then.

    Signals: none.
    """

    def __init__(self, place: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("connection-banner")
        self.setAccessibleName("Connection lost")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        bar = build_bar(self)  # the title wraps: a long place (several hosts) too
        self.icon_label, self.title_label, self.message_label = bar.icon, bar.title, bar.message
        tint(self, urgent=True)
        self.title = f"Lost the connection to the shared schedule at {place}"
        self.title_label.setText(left_to_right(self.title))  # a host name may be RTL
        self.hide()

    @property
    def text(self) -> str:
        """The whole notice in one line, as a screen reader reads it."""
        return self.accessibleDescription()

    def show_lost(self, reason: str) -> None:
        """Say why (again, when the reason changes) and that it is being retried."""
        message = f"{reason} — retrying"
        self.message_label.setText(left_to_right(message))
        size = self.title_label.fontMetrics().height() + 4
        self.icon_label.setPixmap(state_icon(TaskState.EXHAUSTED).pixmap(size, size))
        self.setAccessibleDescription(f"{self.title}: {message}")
        self.show()


class StaleWhileUnreachable:
    """Keeps ``window`` honest while its service cannot read the schedule (see the
    module docstring): the bar, "Next run" frozen and marked, the counts marked."""

    def __init__(self, window: MainWindow, place: str, now: Callable[[], datetime]) -> None:
        self._window = window
        self._now = now
        self.banner = ConnectionBanner(place, window)
        central = window.centralWidget()
        layout = None if central is None else central.layout()
        assert isinstance(layout, QVBoxLayout)  # MainWindow's own: the bars on top
        layout.insertWidget(0, self.banner)
        window.service.store_unreachable.connect(self._on_service_store_unreachable)
        window.service.store_reachable.connect(self._on_service_store_reachable)

    @property
    def stale(self) -> bool:
        return self._window.model.freeze.since is not None

    @never_raises("the window: the connection was lost")
    def _on_service_store_unreachable(self, reason: str) -> None:
        self.banner.show_lost(reason)
        if not self.stale:  # the first failure: what was read last is from about now
            self._window.model.freeze.since = self._now()
            self._redraw(stale=True)

    @never_raises("the window: the connection is back")
    def _on_service_store_reachable(self) -> None:
        self.banner.hide()
        self._window.model.freeze.since = None
        self._redraw(stale=False)
        self._window.statusBar().showMessage(RESTORED, RESTORED_MS)

    def _redraw(self, *, stale: bool) -> None:
        """The rows on screen and the counts, now (the rest are drawn when shown)."""
        window = self._window
        window.status_line.stale = stale
        window.refresh_status()
        window.ticker.tick()
