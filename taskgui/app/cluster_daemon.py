"""``taskgui daemon --db postgresql://...``: this machine as a node of a shared schedule.

Runs until SIGINT or SIGTERM, then leaves cleanly (``ClusterNodeService.shutdown``):
the lead passes on at once and the node's runs get the grace period. While it leads,
its log has a line for each failed attempt and each task that gives up, and it sends
the outside notifications (webhook, mail), as a file's daemon does (``news``), once
per run's end across changes of leader (the outbox: ``store.postgres.news``). The node's name
is ``--node``, else TASKGUI_NODE, else user@host; two processes must not share one
(each would close the other's runs as its own at start).
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Sequence

from PySide6.QtCore import QCoreApplication

from taskgui import __version__
from taskgui.app.logs import configure_logging
from taskgui.app.notifications import OutsideNotifications
from taskgui.app.posix_signals import SignalBridge
from taskgui.core.clock import SystemClock
from taskgui.core.defaults import SHUTDOWN_GRACE
from taskgui.core.errors import TaskguiError
from taskgui.runtime.cluster.node import default_node_name
from taskgui.runtime.cluster.service import ClusterNodeService
from taskgui.runtime.conditions.monitor import ConditionMonitor
from taskgui.runtime.main_thread_collector import MainThreadCollector
from taskgui.runtime.notify_settings import NotifySettings
from taskgui.runtime.run_log import RunLog
from taskgui.store.postgres.connection import redact
from taskgui.store.postgres.repository import PostgresRepository

log = logging.getLogger("taskgui.daemon")

NODE_VAR = "TASKGUI_NODE"


def node_name(explicit: str | None) -> str:
    """``--node``, else TASKGUI_NODE, else user@host."""
    for value in (explicit, os.environ.get(NODE_VAR)):
        if value and value.strip():
            return value.strip()
    return default_node_name()


def run_cluster_daemon(
    dsn: str, workers: int, node: str | None = None, tags: Sequence[str] = ()
) -> int:
    """Run as a node of the schedule at ``dsn`` until SIGINT/SIGTERM; the exit code."""
    log_file = configure_logging()
    clock = SystemClock()
    name = node_name(node)
    app = QCoreApplication.instance() or QCoreApplication(sys.argv[:1])
    try:
        repository = PostgresRepository(dsn, application_name=f"taskgui node {name}"[:63])
    except TaskguiError as error:
        print(f"taskgui: error: {error}", file=sys.stderr)
        log.error("the daemon could not start: %s", error, extra={"file_only": True})
        return 1
    MainThreadCollector(app).start()  # before the node's threads start (system.collector)
    service = ClusterNodeService(
        repository, clock, node=name, version=__version__, workers=workers, tags=tags
    )
    # While this node leads, its engine's decisions (wherever each run ran): the same
    # log lines and outside notifications as a file's daemon. Kept in names for the
    # whole run (Qt holds a plain object's slots only as long as it lives).
    run_log = RunLog(service.news, repository.get, log)
    outside = OutsideNotifications(
        service.news, repository.get, clock, NotifySettings.for_user()
    )  # webhook, mail
    # A decision counts as told (its outbox row is deleted) once these were sent, news
    # the quiet hours hold only after they end (until then the row keeps it, for the
    # next leader should this node stop).
    service.news.hold_until_sent(outside.after_sent)
    # Run conditions are judged on the machine that claims the run: this one's state.
    service.watch_conditions(ConditionMonitor.of_this_machine())
    service.stopped.connect(app.quit)
    bridge = SignalBridge(lambda: service.shutdown(SHUTDOWN_GRACE, "taskgui daemon was stopped"))
    try:
        interrupted = service.start()
        log.info(
            "taskgui daemon (pid %d) is node %s of %s: %d workers, %d run(s) of its own "
            "interrupted%s",
            os.getpid(),
            name,
            redact(dsn),
            workers,
            interrupted,
            f", log {log_file}" if log_file else "",
        )
        app.exec()
    except TaskguiError as error:
        print(f"taskgui: error: {error}", file=sys.stderr)
        return 1
    finally:
        outside.close()
        del run_log
        bridge.close()
        repository.close()
    log.info("taskgui daemon stopped")
    return 0
