"""View > Nodes calls a node that fell silent "not answering" as soon as it is.

A trial killed a node with the dialog open: it stayed "answering" for about 30 s,
because the nodes are read again only when the schedule changes, and a killed node
changes nothing. The dialog ages each heartbeat from its read (by the database's clock,
``silent_for``) on its own one-second tick.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import timedelta

from PySide6.QtCore import QObject, Signal, SignalInstance
from PySide6.QtWidgets import QApplication, QTableWidgetItem

from taskgui.core.clock import FakeClock
from taskgui.core.nodes import SILENT_AFTER, NodeInfo
from taskgui.ui.window.nodes_view import CLOCK, HEARTBEAT, NodesDialog
from tests.helpers.factories import T0


class _Signals(QObject):
    nodes_changed = Signal(object)


@dataclass
class _Source:
    nodes: list[NodeInfo] | None
    signals: _Signals = field(default_factory=_Signals)

    @property
    def nodes_changed(self) -> SignalInstance:
        return self.signals.nodes_changed


def _node(name: str, silent_for: float, *, alive: bool = True) -> NodeInfo:
    return NodeInfo(
        name=name,
        leader=name == "a",
        pid=42,
        host="box",
        last_heartbeat=T0 - timedelta(seconds=silent_for),
        running=0,
        version="0.1.0",
        clock_offset_ms=0.0,
        alive=alive,
        silent_for=timedelta(seconds=silent_for),
    )


def _cell(dialog: NodesDialog, row: int, column: int) -> QTableWidgetItem:
    item = dialog.table.item(row, column)
    assert item is not None
    return item


def test_a_node_that_stops_beating_is_not_answering_once_silent_past_the_limit(
    qapp: QApplication,
) -> None:
    clock = FakeClock(T0)
    source = _Source([_node("a", 0.5), _node("b", 8.0)])
    dialog = NodesDialog(source, clock)
    try:
        assert dialog.summary.text() == "2 of 2 nodes answering; a leads."
        assert "not answering" not in _cell(dialog, 1, HEARTBEAT).text()
        dim = _cell(dialog, 1, 0).foreground().color()
        clock.advance(timedelta(seconds=SILENT_AFTER.total_seconds() - 8.0 + 0.5))
        dialog._on_ticker_timeout()  # the dialog's own one-second tick
        assert _cell(dialog, 1, HEARTBEAT).text().endswith(" — not answering")
        assert dialog.summary.text() == "1 of 2 nodes answering; a leads."
        assert _cell(dialog, 1, 0).foreground().color() != dim  # drawn dimmed now
        assert "not answering" not in _cell(dialog, 0, HEARTBEAT).text()
        # A new read with a fresh heartbeat: answering again, at once.
        source.nodes_changed.emit([_node("a", 0.5), _node("b", 0.2)])
        assert dialog.summary.text() == "2 of 2 nodes answering; a leads."
        assert "not answering" not in _cell(dialog, 1, HEARTBEAT).text()
    finally:
        dialog.deleteLater()


def test_a_node_read_as_gone_stays_not_answering(qapp: QApplication) -> None:
    clock = FakeClock(T0)
    dialog = NodesDialog(
        _Source([_node("a", 0.1), _node("b", 60.0, alive=False)]),
        clock,
    )
    try:
        assert dialog.summary.text() == "1 of 2 nodes answering; a leads."
        assert _cell(dialog, 1, HEARTBEAT).text().endswith(" — not answering")
    finally:
        dialog.deleteLater()


def test_nodes_read_again_are_equal_unless_something_shown_changed() -> None:
    """``silent_for`` grows at every read: compared, every look told the views of new
    nodes (the dialog rebuilt its rows at each, a review)."""
    first = _node("a", 0.5)
    read_later = replace(first, silent_for=timedelta(seconds=1.7))
    assert read_later == first
    assert replace(first, last_heartbeat=T0) != first


def test_a_new_read_keeps_the_rows_and_the_selection(qapp: QApplication) -> None:
    """Each look made every item anew (each second, with live nodes): a row someone
    selected to copy lost its selection. Now a cell's text changes in place."""
    clock = FakeClock(T0)
    source = _Source([_node("a", 0.5), _node("b", 0.2)])
    dialog = NodesDialog(source, clock)
    try:
        first = _cell(dialog, 1, 0)
        dialog.table.selectRow(1)
        off = replace(_node("b", 0.3), clock_offset_ms=2500.0, last_heartbeat=T0)
        source.nodes_changed.emit([_node("a", 0.1), off])
        assert _cell(dialog, 1, 0) is first  # the same item, kept
        assert [i.row() for i in dialog.table.selectionModel().selectedRows()] == [1]
        assert "NTP" in _cell(dialog, 1, CLOCK).toolTip()
        source.nodes_changed.emit([_node("a", 0.1), _node("b", 0.1)])
        assert _cell(dialog, 1, CLOCK).toolTip() == ""  # the warning went with the offset
    finally:
        dialog.deleteLater()
