"""A node's membership loop: heartbeat, lead (or follow), rescue, and a step of work.

Every ``interval`` (a third of the lease) the node refreshes its heartbeat, renews or
tries to take the lease, and, when it leads, rescues the runs of nodes that stopped
answering; then it hands the moment to ``work`` (dispatch when leading, claim and run
in any case). The lease is never trusted past one step: ``work`` gets the lease just
renewed, and every dispatch is fenced by its epoch in the database, so a node that was
paused or cut off and wakes up dispatches nothing.

A lost connection costs a step, never the loop: the step is logged and skipped, and
the next one connects again. A node whose clock is off from the database's by more
than ``core.nodes.CLOCK_WARNING_MS`` is warned about once (the lease does not depend on it).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from taskgui.core.clock import Clock
from taskgui.core.nodes import clock_is_off
from taskgui.store.errors import StoreError
from taskgui.store.postgres.cluster import Cluster, Lease, RescuedRun
from taskgui.system.accounts import current_user

log = logging.getLogger(__name__)

DEFAULT_LEASE = timedelta(seconds=3)


def default_node_name() -> str:
    """Host and user, as ``taskgui nodes`` shows them: ``user@host``.

    The account this process runs as (not the terminal's login, which a daemon started
    by systemd or cron has none of: it fell back to the bare uid, ``0@vm``, a trial)."""
    user = current_user() or os.environ.get("USER") or str(os.getuid())
    return f"{user}@{socket.gethostname()}"


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeTimes:
    """How long a lease lasts and when a silent node counts as dead (database time)."""

    lease: timedelta = DEFAULT_LEASE
    dead_after: timedelta | None = None  # default: the lease

    @property
    def interval(self) -> float:
        return self.lease.total_seconds() / 3

    @property
    def silence(self) -> timedelta:
        return self.dead_after if self.dead_after is not None else self.lease


Work = Callable[[Lease | None], None]
# Blocks until the database says something changed (LISTEN/NOTIFY) or ``timeout``
# seconds pass; without one the loop waits out its interval.
Wake = Callable[[float], None]
Rescued = Callable[[Lease, list[RescuedRun]], None]


class NodeLoop:
    """One node of a shared schedule. ``step`` once, or ``run`` until ``stop`` is set."""

    def __init__(
        self,
        cluster: Cluster,
        clock: Clock,
        *,
        version: str,
        workers: int,
        times: NodeTimes | None = None,
        on_rescued: Rescued | None = None,
    ) -> None:
        self._cluster = cluster
        self._clock = clock
        self._version = version
        self._workers = workers
        self.times = times or NodeTimes()
        self._on_rescued = on_rescued
        self._warned_clock = False
        self.lease: Lease | None = None
        self.failed_steps = 0
        # False once the node is leaving: it beats on (its runs finish) but leads no more.
        self.may_lead = True

    def step(self) -> Lease | None:
        """Heartbeat, lead or follow, rescue; return the lease held now (None: follow)."""
        cluster = self._cluster
        try:
            offset = cluster.heartbeat(
                host=socket.gethostname(),
                pid=os.getpid(),
                version=self._version,
                node_now=self._clock.now(),
                workers=self._workers,
            )
            self._check_clock(offset)
            lease = cluster.lead(self.times.lease) if self.may_lead else None
            if lease is not None:
                rescued = cluster.rescue(lease.epoch, self.times.silence, self._clock.now())
                if rescued is None:
                    lease = None  # lost it between the two statements
                elif rescued and self._on_rescued is not None:
                    self._on_rescued(lease, rescued)
        except StoreError as error:
            self.failed_steps += 1
            log.warning("node %s: %s; following until it is back", cluster.node, error)
            lease = None
        if (lease is None) != (self.lease is None) or (
            lease is not None and self.lease is not None and lease.epoch != self.lease.epoch
        ):
            log.info(
                "node %s %s",
                cluster.node,
                f"leads (epoch {lease.epoch})" if lease is not None else "follows",
            )
        self.lease = lease
        return lease

    def _check_clock(self, offset_ms: float) -> None:
        if clock_is_off(offset_ms) and not self._warned_clock:
            self._warned_clock = True
            log.warning(
                "node %s: this machine's clock is %+.0f ms off the database's; leases are "
                "judged on the database's clock, but run times shown here will be off",
                self._cluster.node,
                offset_ms,
            )

    def run(self, stop: threading.Event, work: Work, wake: Wake | None = None) -> None:
        """Step every ``interval`` and work after each step and whenever ``wake``
        returns early (a change was notified), until ``stop`` is set; then stop cleanly.
        """
        interval = self.times.interval
        try:
            while not stop.is_set():
                lease = self.step()
                stepped = self._clock.monotonic()
                while not stop.is_set():
                    try:
                        work(lease)
                    except StoreError as error:
                        log.warning("node %s: %s", self._cluster.node, error)
                    left = interval - (self._clock.monotonic() - stepped)
                    if left <= 0:
                        break
                    if wake is None:
                        stop.wait(left)
                        break
                    wake(left)
        finally:
            try:
                self._cluster.stopped()
            except StoreError as error:
                log.warning("node %s could not say it stopped: %s", self._cluster.node, error)
