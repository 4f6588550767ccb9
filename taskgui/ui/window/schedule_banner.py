"""The bar that says nobody runs the schedule any more, and offers to run it here.

A window that follows ``taskgui daemon`` shows its schedule live; when the daemon
stops, rows go on to "due now" and nothing starts. A line in the status bar is easy to
miss, so the window says it where a person looks, like Hangfire's "No active servers",
with the way out: run the schedule in this window (it takes the lock and starts the
scheduler here). The composition root does that; this bar only asks.

On a shared (PostgreSQL) schedule nodes run it, not a window: when none does, the bar
says so and shows the command that starts one (``start_command``, its password
masked), selectable to copy, and goes away by itself when a node leads again.

Signals:
    run_here_requested(): "Run the Schedule in This Window" was pressed.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QPushButton, QWidget

from taskgui.core.states import TaskState
from taskgui.ui.icons import action_icon, state_icon
from taskgui.ui.notify.banner import build_bar, tint

RUN_HERE = "Run the Schedule in This Window"
NO_NODE = "No node runs this shared schedule"


class NoSchedulerBanner(QFrame):
    """Shown while no process runs the schedule this window shows; hidden otherwise."""

    run_here_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("no-scheduler-banner")
        self.setAccessibleName("Nobody runs the schedule")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        bar = build_bar(self)
        self.icon_label, self.title_label, self.message_label = bar.icon, bar.title, bar.message
        self.title_label.setText("Nothing runs this schedule now")
        self.run_here_button = QPushButton(action_icon("run"), RUN_HERE, self)
        self.run_here_button.setAccessibleName("Run the schedule in this window")
        self.run_here_button.clicked.connect(self.run_here_requested)
        bar.layout.addWidget(self.run_here_button, 0, Qt.AlignmentFlag.AlignVCenter)
        tint(self, urgent=False)
        self.start_command = ""  # a shared schedule's ``taskgui ... daemon``
        self.hide()

    def show_stopped(self, previous_owner: str) -> None:
        """Say that ``previous_owner`` (or whoever ran it) no longer runs the schedule."""
        if self.start_command:
            self._show_no_node()
            return
        said = (
            f"It was run by {previous_owner}, which has stopped"
            if previous_owner
            else "The process that ran it has stopped"
        )
        self.message_label.setText(
            f"{said}: tasks that come due do not start. Run the schedule in this window, "
            "or start taskgui daemon again."
        )
        size = self.title_label.fontMetrics().height() + 4
        self.icon_label.setPixmap(state_icon(TaskState.PAUSED).pixmap(size, size))
        self.setAccessibleDescription(self.message_label.text())
        self.show()

    def _show_no_node(self) -> None:
        self.title_label.setText(NO_NODE)
        self.message_label.setText(
            "Tasks that come due do not start until a node runs the schedule. Start one on "
            f"any machine that can reach the database:\n\n    {self.start_command}"
        )
        self.message_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.run_here_button.hide()
        size = self.title_label.fontMetrics().height() + 4
        self.icon_label.setPixmap(state_icon(TaskState.PAUSED).pixmap(size, size))
        self.setAccessibleDescription(self.message_label.text())
        self.show()
