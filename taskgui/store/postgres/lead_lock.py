"""Leading a shared schedule for a moment: the CLI's "scheduler lock" on PostgreSQL.

A change (cancel, pause, run-now, ...) must be decided by the one engine that leads,
so the two never disagree about a task. When a node leads, the CLI files a request
and the leader performs it; when none does, the CLI takes the lead itself under a
name of its own, makes the change with every write fenced by that lease, and gives
the lead up at once, so the next node takes over from what it committed.
"""

from __future__ import annotations

import os
import socket
from datetime import timedelta

from taskgui.store.errors import SchedulerAlreadyRunningError
from taskgui.store.postgres.cluster import Cluster
from taskgui.store.postgres.repository import PostgresRepository

# Long enough for a load and a commit of a large schedule; a node waits it out only
# if this process dies holding it.
MOMENT = timedelta(seconds=15)


def passing_name() -> str:
    return f"taskgui cli {os.getpid()}@{socket.gethostname()}"


class LeadLock:
    """``control.store_client.ScheduleLock`` over the lease row."""

    def __init__(self, repository: PostgresRepository, *, lease: timedelta = MOMENT) -> None:
        self._repository = repository
        self._cluster = Cluster(repository.session, passing_name())
        self._lease = lease

    @property
    def name(self) -> str:
        return self._cluster.node

    def leader(self) -> str | None:
        """The node that leads now, or None."""
        return self._cluster.leader()[0]

    def acquire(self) -> None:
        lease = self._cluster.lead(self._lease)
        if lease is None:
            raise SchedulerAlreadyRunningError(f"node {self.leader()} runs the schedule")
        self._repository.fence = (self._cluster.node, lease.epoch)

    def release(self) -> None:
        self._repository.fence = None
        self._cluster.resign()
