"""The window on a shared (PostgreSQL) schedule, with real ``taskgui daemon --db`` nodes
as a new user starts them: the Node column and the history name the node that runs a
run, View > Nodes lists the nodes, a banner says when no node runs the schedule (and
goes when one starts), a node's name shows as the characters it is, and a change made
in the window reaches the nodes (by request to the leader, or led for a moment here).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from taskgui.app.shared_window import SharedSession, follower
from taskgui.core.clock import SystemClock
from taskgui.core.states import TaskState
from taskgui.runtime import feed_watch
from taskgui.runtime.remote import RemoteScheduler
from taskgui.ui.history.run_table import RunColumn
from taskgui.ui.table.columns import Column
from taskgui.ui.task_dialog.dialog import TaskDialog
from taskgui.ui.window.actions import Verb
from taskgui.ui.window.main_window import MainWindow
from taskgui.ui.window.nodes_view import HEADERS
from taskgui.ui.window.schedule_banner import NO_NODE
from tests.helpers.factories import make_spec
from tests.helpers.rich_text import rendered
from tests.helpers.shared_nodes import Nodes
from tests.ui.window.test_main_window import when_dialog_opens

# The offscreen platform cannot raise or size a dialog's window; nothing here needs it.
pytestmark = pytest.mark.qt_log_ignore(
    "This plugin does not support raise", r"This plugin does not support propagateSizeHints\(\)"
)
NEVER_MS = 600_000
MARKUP = "<b>x&amp;y<i>"  # markup, and no "/" (the helper names a file after it)


@dataclass
class Shown:
    window: MainWindow
    service: RemoteScheduler
    shared: SharedSession


def _with_password(dsn: str) -> str:
    """The DSN with a password in it (trust auth ignores it): it must never show."""
    return dsn.replace("://postgres@", "://postgres:s3cret@")


@pytest.fixture
def shown(nodes: Nodes, qtbot: QtBot) -> Iterator[Shown]:
    nodes.cli("list")  # the schema, made as the CLI makes it
    clock = SystemClock()
    dsn = _with_password(nodes.dsn)
    repository, service = follower(dsn, clock)
    service.start()
    window = MainWindow(service, clock, location="shared", schedule_owner=service.owner)
    qtbot.addWidget(window)
    shared = SharedSession(dsn, service, clock)
    shared.attach(window)
    service.owner_changed.connect(window.set_schedule_owner)  # as the shell connects it
    yield Shown(window, service, shared)
    service.shutdown()
    repository.close()


def _cell(window: MainWindow, task_id: int, column: Column, role: int) -> object:
    row = window.model.row_of(task_id)
    if row is None:
        return None
    return window.model.data(window.model.index(row, column), role)


def test_the_window_shows_the_node_that_runs_a_run_and_lists_the_nodes(
    nodes: Nodes, shown: Shown, qtbot: QtBot
) -> None:
    window = shown.window
    assert not window.table.isColumnHidden(Column.NODE)
    nodes.join(MARKUP)
    slow = nodes.add("--name", "slow", "--command", "sleep 30")
    display = Qt.ItemDataRole.DisplayRole
    qtbot.waitUntil(lambda: _cell(window, slow, Column.NODE, display) == MARKUP, timeout=20_000)
    tooltip = _cell(window, slow, Column.NODE, Qt.ItemDataRole.ToolTipRole)
    assert isinstance(tooltip, str) and rendered(tooltip) == f"Runs on node {MARKUP}"
    # The history names the node of the run.
    window.show_history(slow)
    history = window.histories.open[slow]
    qtbot.waitUntil(lambda: history.runs.rowCount() == 1, timeout=10_000)
    assert not history.table.isColumnHidden(RunColumn.NODE)
    cell = history.runs.index(0, RunColumn.NODE)
    assert history.runs.data(cell) == MARKUP
    # View > Nodes: the node, as ``taskgui nodes --json`` has it.
    dialog = shown.shared.views[0].show_nodes()
    qtbot.waitUntil(lambda: dialog.table.rowCount() == 1, timeout=10_000)

    def text(column: str) -> str:
        item = dialog.table.item(0, HEADERS.index(column))
        assert item is not None
        return item.text()

    assert text("Name") == MARKUP  # a QTableWidgetItem's text is never markup
    assert text("Leader") == "yes"
    assert int(text("PID")) == nodes.processes[MARKUP].pid
    assert text("Clock offset").endswith(" ms")
    assert text("Tags") == ""  # it joined with none (``daemon --node-tag``)
    qtbot.waitUntil(lambda: text("Running") == "1", timeout=10_000)
    assert "ago" in text("Last heartbeat") or text("Last heartbeat") == "just now"
    assert dialog.summary.textFormat() is Qt.TextFormat.PlainText
    assert MARKUP in dialog.summary.text()
    # The pool the schedule has is the nodes' (the Nodes helper starts each with 4): the
    # status bar and Settings > Workers show it, not this machine's own setting.
    assert shown.service.workers == 4
    assert window.status_line.workers.text() == "Workers: 1 of 4 busy"
    nodes.join("second")  # a node joins: no task changes, the pool does
    qtbot.waitUntil(
        lambda: window.status_line.workers.text() == "Workers: 1 of 8 busy", timeout=15_000
    )


def test_a_banner_says_no_node_runs_the_schedule_until_one_does(
    nodes: Nodes, shown: Shown, qtbot: QtBot
) -> None:
    banner = shown.window.no_scheduler
    assert not banner.isHidden()
    assert banner.title_label.text() == NO_NODE
    message = banner.message_label.text()
    assert "daemon" in message and "taskgui --db" in message
    assert "***" in message and "s3cret" not in message  # the password, masked
    assert banner.run_here_button.isHidden()  # a window does not run a shared schedule
    nodes.join("a")
    qtbot.waitUntil(banner.isHidden, timeout=15_000)
    assert shown.service.owner == "node a"


def test_changes_made_in_the_window_reach_the_nodes(
    nodes: Nodes, shown: Shown, qtbot: QtBot
) -> None:
    service = shown.service
    later = nodes.add("--name", "later", "--in", "1h", "--command", "true")
    qtbot.waitUntil(lambda: later in {s.id for s in service.snapshot()}, timeout=10_000)
    service.pause(later)  # no node: this process leads for a moment, as the CLI does
    qtbot.waitUntil(lambda: service.task(later).state is TaskState.PAUSED, timeout=15_000)
    assert nodes.state(later) == "paused"
    assert nodes.leader() is None  # the lead was given up
    nodes.join("a")
    service.resume(later)  # now a request the leading node's engine performs
    qtbot.waitUntil(lambda: nodes.state(later) == "pending", timeout=15_000)
    qtbot.waitUntil(lambda: service.task(later).state is TaskState.PENDING, timeout=10_000)
    # A new task from the window: stored on the follower's thread, run by the node.
    with qtbot.waitSignal(service.task_added, timeout=10_000) as added:
        service.add_task(make_spec(0, name="from the window", first_run_at=datetime.now(UTC)))
    new = added.args[0].id
    qtbot.waitUntil(lambda: nodes.state(new) == "succeeded", timeout=20_000)
    qtbot.waitUntil(lambda: service.task(new).state is TaskState.SUCCEEDED, timeout=10_000)


def test_the_window_hears_a_change_by_listen_not_by_polling(
    nodes: Nodes, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(feed_watch, "FALLBACK_POLL_MS", NEVER_MS)  # only a wake can tell
    nodes.cli("list")  # the schema
    repository, service = follower(nodes.dsn, SystemClock(), safety_ms=NEVER_MS)
    service.start()
    try:

        def named(snapshot: object) -> bool:
            return getattr(getattr(snapshot, "spec", None), "name", None) == "news"

        with qtbot.waitSignal(service.task_added, timeout=10_000, check_params_cb=named):
            nodes.add("--name", "news", "--in", "1h", "--command", "true")  # its NOTIFY
    finally:
        service.shutdown()
        repository.close()


def test_a_task_added_in_the_window_is_selected_once_it_arrives(
    nodes: Nodes, shown: Shown, qtbot: QtBot
) -> None:
    window = shown.window
    nodes.join("a")
    before = nodes.add("--name", "before", "--in", "1h", "--command", "true")
    qtbot.waitUntil(lambda: window.model.row_of(before) is not None, timeout=10_000)
    assert window.select_task(before)

    def fill(dialog: TaskDialog) -> None:
        qtbot.keyClicks(dialog.name, "from the dialog")
        qtbot.keyClicks(dialog.command, "true")
        qtbot.mouseClick(dialog.ok_button, Qt.MouseButton.LeftButton)

    when_dialog_opens(qtbot, fill)
    window.actions_[Verb.NEW].trigger()  # stored on the follower's thread: no id yet
    qtbot.waitUntil(
        lambda: [task.spec.name for task in window.selected_tasks()] == ["from the dialog"],
        timeout=15_000,
    )
    [(stored,)] = nodes.query("SELECT id FROM tasks WHERE name = 'from the dialog'")
    assert [task.id for task in window.selected_tasks()] == [stored]
    # A task added elsewhere meanwhile (the CLI) leaves the selection alone.
    other = nodes.add("--name", "from the cli", "--in", "1h", "--command", "true")
    qtbot.waitUntil(lambda: window.model.row_of(other) is not None, timeout=10_000)
    assert [task.id for task in window.selected_tasks()] == [stored]
