"""The window on a shared (PostgreSQL) schedule: ``taskgui --db postgresql://...``.

Nodes (``taskgui daemon --db postgresql://...``) run a shared schedule; a window never
runs it, it follows it as it follows a daemon on a file (``runtime.remote``), on the
follower's own thread, woken by LISTEN: the tasks, each running run's node, the
history with each run's node, and the nodes themselves (View > Nodes…). Its changes
take the CLI's own path (``cli.shared_changes``): a request the leading node's engine
performs, or, when no node runs the schedule, this process leads for a moment and
makes the change itself. When no node leads, a banner says so with the command that
starts one, and goes away when one does.

The DSN's password never reaches a label, a log line or the autostart entry: they
show it masked (``redact``), and libpq finds it again in ``~/.pgpass`` or
PGPASSWORD.
"""

from __future__ import annotations

import logging
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QApplication

from taskgui.cli.shared_changes import shared_client
from taskgui.core.clock import Clock, SystemClock
from taskgui.core.errors import TaskguiError
from taskgui.runtime.remote import RemoteScheduler
from taskgui.store.postgres.connection import password_left_out, place, redact
from taskgui.store.postgres.follow import FollowedPostgres
from taskgui.store.private_folders import make_config_folder
from taskgui.ui.desktop.autostart import launch_command
from taskgui.ui.desktop.settings import Settings
from taskgui.ui.desktop.single_instance import SHOW, SingleInstance, server_name
from taskgui.ui.plain_text import critical
from taskgui.ui.window.main_window import MainWindow
from taskgui.ui.window.shared_schedule import SharedScheduleView

log = logging.getLogger("taskgui.app.window")


def start_command(dsn: str) -> str:
    """How to start a node of this schedule, its password masked."""
    return f"taskgui --db {shlex.quote(redact(dsn))} daemon"


# A lead can lapse for a moment while nodes start or hand it over; "no node runs it"
# is said only once none has led for this long (a node that stops cleanly gives the
# lead up at once, so the banner comes this long after it).
NO_LEADER_AFTER = 3.0


class _Leader:
    """Who runs the schedule, for ``RemoteScheduler``: "node NAME", or "" for nobody."""

    def __init__(self, repository: FollowedPostgres, clock: Clock) -> None:
        self._repository = repository
        self._clock = clock
        self._owner = ""
        self._seen_at = -NO_LEADER_AFTER

    def __call__(self) -> str:
        leader = self._repository.leader()
        now = self._clock.monotonic()
        if leader:
            self._owner, self._seen_at = f"node {leader}", now
        elif now - self._seen_at >= NO_LEADER_AFTER:
            self._owner = ""
        return self._owner


@dataclass
class SharedSession:
    """What ``app.window._session`` needs to know of a shared schedule."""

    dsn: str
    service: RemoteScheduler
    clock: Clock
    views: list[SharedScheduleView] = field(default_factory=list)

    @property
    def location(self) -> str:
        return redact(self.dsn)

    @property
    def launch_command(self) -> list[str]:
        # A password stays out of the autostart entry: libpq reads ~/.pgpass instead.
        return launch_command(password_left_out(self.dsn))

    def attach(self, window: MainWindow) -> None:
        view = SharedScheduleView(
            window, self.service, self.clock,
            start_command=start_command(self.dsn), place=place(self.dsn),
        )  # fmt: skip
        self.views.append(view)
        window.set_schedule_owner(self.service.owner)  # the banner, if no node runs it


def follower(
    dsn: str, clock: Clock, *, safety_ms: int | None = None
) -> tuple[FollowedPostgres, RemoteScheduler]:
    """The shared schedule at ``dsn`` and its follower (not started). Raises StoreError."""
    repository = FollowedPostgres(dsn, application_name="taskgui window")
    client = shared_client(repository, clock)
    service = RemoteScheduler(
        repository,
        clock,
        owner=_Leader(repository, clock),
        change=client.change,
        nodes=repository.nodes,
        safety_ms=safety_ms,
    )
    return repository, service


def run_shared(app: QApplication, dsn: str, session: Callable[..., Any]) -> int:
    """Open the window on the shared schedule at ``dsn`` until the app quits."""
    instance = SingleInstance(server_name(Path(redact(dsn))))
    try:
        if instance.send(SHOW) or (not instance.listen() and instance.send(SHOW)):
            log.info("taskgui already shows %s; brought its window to the front", redact(dsn))
            return 0
        clock = SystemClock()
        make_config_folder()  # raises TaskguiError, as the follower does: said below
        repository, service = follower(dsn, clock)
        try:
            service.start()
            log.info("this window follows the shared schedule %s", redact(dsn))
            code, _shell = session(
                app,
                service=service,
                clock=clock,
                path=Path(),
                owner=service.owner,
                instance=instance,
                settings=Settings.for_user(),
                shared=SharedSession(dsn, service, clock),
            )
            return int(code)
        finally:
            service.shutdown()
            repository.close()
    except TaskguiError as error:
        log.error("taskgui could not start: %s", error)
        critical(None, "taskgui", str(error))
        return 1
    finally:
        instance.close()
