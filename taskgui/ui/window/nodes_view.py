"""View > Nodes: the machines that share this schedule, as ``taskgui nodes`` lists them.

Name, whether it leads, pid, host, its last heartbeat (how long ago, ticking while the
dialog is open), its runs in progress, its version, how far its clock is off the
database's, with a warning past a second (leases are judged on the database's clock,
so such a node is safe, but the times it shows and its commands see are off), and its
tags (where a run pinned to a tag may go). Every text in it came from another machine:
each cell is a ``QTableWidgetItem``'s plain text and each tooltip goes through
``plain_tooltip``, so markup in a node's name is shown as the characters it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from PySide6.QtCore import Qt, QTimer, SignalInstance
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from taskgui.core.clock import Clock
from taskgui.core.duration import ago_text
from taskgui.core.nodes import NodeInfo, clock_is_off
from taskgui.runtime.guard import never_raises
from taskgui.ui.plain_text import plain_tooltip
from taskgui.ui.table.formatting import local_time_full_text

HEADERS = (
    "Name", "Leader", "PID", "Host", "Last heartbeat", "Running", "Version", "Clock offset",
    "Tags",
)  # fmt: skip
HEARTBEAT = HEADERS.index("Last heartbeat")
CLOCK = HEADERS.index("Clock offset")
_WARN = QColor(198, 40, 40)
_CLOCK_OFF = (
    "This machine's clock differs from the database's by more than a second. Leases do "
    "not depend on it, but the times it shows and its commands see are off: set up NTP "
    "on that machine."
)
_DIM = QColor(128, 128, 128)


class NodesSource(Protocol):
    """Where the nodes come from (``runtime.remote.RemoteScheduler``)."""

    @property
    def nodes_changed(self) -> SignalInstance: ...

    @property
    def nodes(self) -> list[NodeInfo] | None: ...


def clock_text(offset_ms: float) -> str:
    off = clock_is_off(offset_ms)
    rounded = round(offset_ms)
    text = f"{rounded:+d} ms" if rounded else "0 ms"
    return text + (" — more than 1 s off" if off else "")


class NodesDialog(QDialog):
    """The nodes, kept current from ``source`` while open; see the module docstring."""

    def __init__(
        self,
        source: NodesSource,
        clock: Clock,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._now = clock.now
        self._monotonic = clock.monotonic
        self._nodes: list[NodeInfo] = []
        self._read_at = clock.monotonic()  # when ``_nodes`` came: their heartbeats age from it
        self._answering: list[bool] = []
        self.setWindowTitle("Nodes")
        self.resize(900, 320)
        self.summary = QLabel(self)
        self.summary.setTextFormat(Qt.TextFormat.PlainText)
        self.summary.setWordWrap(True)
        self.table = QTableWidget(0, len(HEADERS), self)
        self.table.setAccessibleName("Nodes")
        self.table.setHorizontalHeaderLabels(list(HEADERS))
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().setVisible(False)
        self.table.setAlternatingRowColors(True)
        self.table.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # rows to read, not cells to edit
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(self.table, 1)
        layout.addWidget(buttons)
        self._ticker = QTimer(self)
        self._ticker.setInterval(1_000)
        self._ticker.timeout.connect(self._on_ticker_timeout)
        self._ticker.start()
        source.nodes_changed.connect(self.show_nodes)
        self.show_nodes(source.nodes or [])

    def show_nodes(self, nodes: Sequence[NodeInfo]) -> None:
        self._nodes = list(nodes)
        self._read_at = self._monotonic()
        self._answering = [node.alive for node in self._nodes]
        self.table.setRowCount(len(self._nodes))
        for row, node in enumerate(self._nodes):
            cells = (
                node.name, "yes" if node.leader else "", str(node.pid), node.host, "",
                str(node.running), node.version, clock_text(node.clock_offset_ms),
                ", ".join(node.tags),  # where a run pinned to a tag may go
            )  # fmt: skip
            items = [self._cell(row, column, text) for column, text in enumerate(cells)]
            self._dim(row, not node.alive)
            offset = items[CLOCK]
            if node.clock_off:
                offset.setForeground(_WARN)
            offset.setToolTip(_CLOCK_OFF if node.clock_off else "")
            items[0].setToolTip(plain_tooltip(f"{node.name} on {node.host}"))
        self._tick()
        self._summarize()

    def _cell(self, row: int, column: int, text: str) -> QTableWidgetItem:
        """The cell's item, kept from the last look when there was one (every look
        made them all anew, each second: a selected row lost its selection)."""
        item = self.table.item(row, column)
        if item is None:
            item = QTableWidgetItem(text)
            self.table.setItem(row, column, item)
        elif item.text() != text:
            item.setText(text)
        return item

    def _summarize(self) -> None:
        nodes = self._nodes
        if not nodes:
            self.summary.setText(
                "No node has joined this schedule yet. Start one with taskgui daemon on any "
                "machine that can reach the database."
            )
            return
        leader = next((node.name for node in nodes if node.leader), None)
        alive = sum(self._answering)
        said = f"{alive} of {len(nodes)} nodes answering; "
        said += f"{leader} leads." if leader else "none leads now."
        self.summary.setText(said)

    def _tick(self) -> None:
        """Age the heartbeats, and call a node that fell silent since the last read "not
        answering" as soon as it is, not at a later read: reads come with the follower's
        looks, which a slow or busy server spaces out (a trial saw a killed node stay
        "answering" for ~30 s)."""
        now = self._now()
        since_read = self._monotonic() - self._read_at
        fell_silent = False
        for row, node in enumerate(self._nodes):
            item = self.table.item(row, HEARTBEAT)
            if item is None:
                continue
            answering = node.answering_after(since_read)
            if answering != self._answering[row]:
                self._answering[row] = answering
                self._dim(row, not answering)
                fell_silent = True
            text = ago_text(node.last_heartbeat, now)
            if not answering:
                text += " — not answering"
            item.setText(text)
            item.setToolTip(local_time_full_text(node.last_heartbeat))
        if fell_silent:
            self._summarize()

    def _dim(self, row: int, dim: bool) -> None:
        warned = self._nodes[row].clock_off  # the clock's warning keeps its red
        for column in range(self.table.columnCount()):
            item = self.table.item(row, column)
            if item is not None and not (column == CLOCK and warned):
                item.setForeground(_DIM if dim else self.table.palette().text())

    @never_raises("ticking the nodes' heartbeats")
    def _on_ticker_timeout(self) -> None:
        self._tick()
