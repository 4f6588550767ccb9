"""The window on a shared schedule when its connection to the server is cut, for real:
connections to the test's own database are refused and its sessions ended
(``pg_terminate_backend``), then allowed again; the server itself runs on.

A trial: the window went on counting its runs' seconds as if all were well, with a
passing status-bar line, until it read the schedule again. Now a bar names the
database and the reason (no password) and says it is retrying, "Next run" stands as
last known and says so, the counts say they are the last known, and on recovery the
bar goes and a status line says the connection is back.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from psycopg import sql
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from taskgui.app.shared_window import SharedSession, follower
from taskgui.core.clock import SystemClock
from taskgui.core.states import TaskState
from taskgui.ui.table.columns import Column
from taskgui.ui.window.connection_banner import ConnectionBanner
from taskgui.ui.window.main_window import MainWindow
from tests.helpers.postgres import PostgresServer
from tests.helpers.shared_nodes import Nodes

SECRET = "s3cret"  # trust auth ignores it: it must only never show
DISPLAY = Qt.ItemDataRole.DisplayRole


class Access:
    """Connections to one database of the test's, refused or allowed, from outside."""

    def __init__(self, postgres: PostgresServer, database: str) -> None:
        self._admin = postgres.admin_dsn
        self._database = database

    def _set(self, allowed: bool) -> None:
        import psycopg  # noqa: PLC0415 - as the helpers import it

        with psycopg.connect(self._admin, autocommit=True) as admin:
            admin.execute(
                sql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS {}").format(
                    sql.Identifier(self._database), sql.Literal(allowed)
                )
            )
            if not allowed:  # and end every session on it: the window's, the node's
                admin.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE datname = %s AND pid <> pg_backend_pid()",
                    (self._database,),
                )

    def cut(self) -> None:
        self._set(False)

    def restore(self) -> None:
        self._set(True)


@pytest.fixture
def access(nodes: Nodes, postgres: PostgresServer) -> Iterator[Access]:
    database = nodes.dsn.rsplit("/", 1)[1]
    cut = Access(postgres, database)
    yield cut
    cut.restore()  # before the database is dropped, whatever the test did


def _next_run(window: MainWindow, task_id: int) -> str:
    row = window.model.row_of(task_id)
    assert row is not None
    return str(window.model.data(window.model.index(row, Column.NEXT_RUN), DISPLAY))


def test_a_lost_connection_shows_a_banner_and_freezes_the_countdowns_until_it_is_back(
    nodes: Nodes, access: Access, qtbot: QtBot
) -> None:
    nodes.join("a")
    slow = nodes.add("--name", "slow", "--command", "sleep 60")
    later = nodes.add("--name", "later", "--in", "10m", "--command", "true")
    clock = SystemClock()
    dsn = nodes.dsn.replace("://postgres@", f"://postgres:{SECRET}@")
    repository, service = follower(dsn, clock)
    service.start()
    window = MainWindow(service, clock, location="shared", schedule_owner=service.owner)
    qtbot.addWidget(window)
    shared = SharedSession(dsn, service, clock)
    shared.attach(window)
    try:
        qtbot.waitUntil(lambda: _next_run(window, slow).startswith("running 0:0"), timeout=20_000)
        banner = window.findChild(ConnectionBanner, "connection-banner")
        assert banner is not None and banner.isHidden()

        access.cut()
        qtbot.waitUntil(lambda: not banner.isHidden(), timeout=10_000)
        database = nodes.dsn.rsplit("/", 1)[1]
        title, message = banner.title_label, banner.message_label
        assert title.text().endswith(
            f"Lost the connection to the shared schedule at 127.0.0.1/{database}"
        )
        assert message.text().endswith(" — retrying") and len(message.text()) > 12
        assert title.textFormat() is message.textFormat() is Qt.TextFormat.PlainText
        assert SECRET not in title.text() + message.text() and "***" not in message.text()
        # What stood when the connection went stands, marked, while it is down.
        frozen = (_next_run(window, slow), _next_run(window, later))
        assert all(text.endswith(" (not current)") for text in frozen), frozen
        assert frozen[0].startswith("running ")
        assert window.counts_label.text().startswith("Last known: Running: 1")
        qtbot.wait(2_200)  # two ticks of the countdown and a retry or two
        assert (_next_run(window, slow), _next_run(window, later)) == frozen
        assert not banner.isHidden()
        snapshot = window.model.snapshot_of(slow)
        assert snapshot is not None and snapshot.state is TaskState.RUNNING

        access.restore()
        qtbot.waitUntil(banner.isHidden, timeout=20_000)
        assert window.statusBar().currentMessage() == "Connection to the shared schedule restored"
        assert not _next_run(window, slow).endswith(" (not current)")
        assert not window.counts_label.text().startswith("Last known")
        moving = _next_run(window, later)
        qtbot.waitUntil(lambda: _next_run(window, later) != moving, timeout=5_000)
    finally:
        service.shutdown()
        repository.close()
