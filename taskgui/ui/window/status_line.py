"""The window's status bar: how many tasks run and wait, the workers, who runs the
schedule and which database this is.

Messages (a store error, an import's summary, an action's status tip while the
pointer is on it) come and go on the same bar through ``QStatusBar.showMessage``;
these labels are the facts that stay. So every one of them is a *permanent* widget:
QStatusBar hides its normal widgets while a message shows and draws the message over
their place, so a toolbar hover made "Workers: 0 of 4 busy" vanish under the tip.
Permanent widgets sit on the right and the message is drawn left of them, so they
must leave it room: the database's path, which may be as long as a folder tree is
deep, is cut in the middle to at most ``LOCATION_WIDTH`` (the whole is in its tooltip).
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import QLabel, QStatusBar, QWidget

from taskgui.ui.plain_text import make_plain, plain_label, plain_tooltip, shown

LOCAL_OWNER = "this window"
LOCATION_WIDTH = 260  # px at most for the path: the rest of the bar is the messages'
_LOCATION_MIN_WIDTH = 80  # px: a narrow window still shows the start and the end


class MiddleElidedLabel(QLabel):
    """Plain text on one line, drawn cut in the middle ("/home/ann/…/taskgui.sqlite3")
    when it is wider than ``max_width`` or the room it is given.

    ``text()`` stays the whole text (what is copied, read out and tested); only the
    drawing is cut, as ``shown`` writes it (a folder named with an override cannot
    reorder the path).
    """

    def __init__(self, text: str, max_width: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        make_plain(self)
        self._max_width = max_width
        self.setText(text)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        hint = super().sizeHint()
        return QSize(min(hint.width(), self._max_width), hint.height())

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        hint = super().minimumSizeHint()
        return QSize(min(hint.width(), _LOCATION_MIN_WIDTH), hint.height())

    def drawn_text(self) -> str:
        """What is painted at the label's present width."""
        return self.fontMetrics().elidedText(
            shown(self.text()), Qt.TextElideMode.ElideMiddle, self.contentsRect().width()
        )

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt's; all is drawn
        painter = QPainter(self)
        self.style().drawItemText(
            painter,
            self.contentsRect(),
            int(self.alignment()),
            self.palette(),
            self.isEnabled(),
            self.drawn_text(),
            self.foregroundRole(),
        )
        painter.end()


class StatusLine:
    """The labels on a window's status bar; the window keeps them current."""

    def __init__(self, bar: QStatusBar, location: str, parent: QWidget) -> None:
        self.counts = QLabel(parent)
        self.counts.setAccessibleName("Task counts")
        self.workers = QLabel(parent)
        self.workers.setAccessibleName("Workers")
        # Who runs the schedule is read from the other process; the path is the user's.
        self.owner = plain_label(parent=parent)
        self.owner.setAccessibleName("Who runs the schedule")
        self.location = MiddleElidedLabel(location, LOCATION_WIDTH, parent)
        self.location.setAccessibleName("Database")
        self.location.setToolTip(
            plain_tooltip(f"The database this window shows: {shown(location)}")
        )
        bar.addPermanentWidget(self.counts)
        bar.addPermanentWidget(self.workers)
        bar.addPermanentWidget(self.owner)
        bar.addPermanentWidget(self.location)
        self.shared = False  # a shared schedule: its nodes run it (ui.window.shared_schedule)
        self.stale = False  # the schedule cannot be read now (ui.window.connection_banner)

    def set_counts(self, running: int, pending: int, retrying: int) -> None:
        """The groups of the filter buttons that are about what comes next."""
        text = f"Running: {running}   Pending: {pending}"
        if retrying:
            text += f"   Retrying: {retrying}"
        self.counts.setText(f"Last known: {text}" if self.stale else text)

    def set_workers(self, busy: int, size: int) -> None:
        """``size`` 0: a schedule run elsewhere, whose pool size is not known here (the
        counts say what runs), so the label goes rather than guess."""
        self.workers.setVisible(size > 0)
        if size > 0:
            self.workers.setText(f"Workers: {busy} of {size} busy")

    def set_owner(self, owner: str) -> None:
        """Say which process runs the schedule ("" when none does)."""
        if self.shared:
            text = f"Shared schedule, led by {owner}" if owner else "No node runs this schedule"
            tip = (
                "The nodes start the tasks; this window shows them and sends the leading node "
                "your changes (View > Nodes lists them)"
                if owner
                else "Tasks will not start until taskgui daemon runs on a machine that can "
                "reach this database"
            )
        elif owner:
            text = f"Schedule run by {owner}"
            tip = (
                "This window starts the tasks; closing it to the tray keeps them running"
                if owner == LOCAL_OWNER
                else "Another process starts the tasks; this window shows them and sends "
                "it your changes"
            )
        else:
            text = "No process runs this schedule"
            tip = "Tasks will not start until taskgui or taskgui daemon runs this database"
        self.owner.setText(text)
        self.owner.setToolTip(plain_tooltip(tip))
