"""What a window adds when it shows a shared (PostgreSQL) schedule.

Nodes run such a schedule, so the window shows which node runs each run (the table's
Node column, hidden on a file's schedule), lists the nodes (View > Nodes…), and, when
no node runs it, says so with the command that starts one (``NoSchedulerBanner``);
while the database cannot be read, it says that too, and the table stands still
(``connection_banner``).
The composition root calls ``attach_shared`` for a shared schedule only; the window
itself never asks which kind it shows.
"""

from __future__ import annotations

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu

from taskgui.core.clock import Clock
from taskgui.ui.table.columns import Column
from taskgui.ui.window.connection_banner import StaleWhileUnreachable
from taskgui.ui.window.main_window import MainWindow
from taskgui.ui.window.nodes_view import NodesDialog, NodesSource


class SharedScheduleView:
    """The Node column, View > Nodes…, the "no node" and the "connection lost" banners
    of one window (``place``: the database as HOST/DB, no password)."""

    def __init__(
        self,
        window: MainWindow,
        source: NodesSource,
        clock: Clock,
        *,
        start_command: str,
        place: str,
    ) -> None:
        self._window = window
        self._source = source
        self._clock = clock
        self.dialog: NodesDialog | None = None
        window.table.setColumnHidden(Column.NODE, False)
        window.no_scheduler.start_command = start_command
        window.status_line.shared = True
        self.connection = StaleWhileUnreachable(window, place, clock.now)
        # "Workers: 1 of 8 busy" counts the nodes' pools: a node joining or falling
        # silent changes it though no task changed.
        source.nodes_changed.connect(window.refresh_status)
        self.menu = QMenu("&View", window)
        self.nodes_action = QAction("&Nodes…", window)
        self.nodes_action.setStatusTip("The machines that share this schedule")
        self.nodes_action.triggered.connect(self.show_nodes)
        self.menu.addAction(self.nodes_action)
        bar = window.menuBar()
        menus = bar.actions()
        if menus:  # before Help, as applications order them
            bar.insertMenu(menus[-1], self.menu)
        else:
            bar.addMenu(self.menu)

    def show_nodes(self) -> NodesDialog:
        """Open the Nodes dialog, or bring it forward (one per window, kept current)."""
        if self.dialog is None:
            self.dialog = NodesDialog(self._source, self._clock, self._window)
        self.dialog.show()
        self.dialog.raise_()
        self.dialog.activateWindow()
        return self.dialog
