"""A node of a shared schedule, as ``taskgui daemon --db postgresql://...`` runs it.

Three parts on one thread (the Qt event loop's) and one database session:

* the membership loop (``NodeLoop.step`` every third of the lease): heartbeat, take or
  renew the lease, and as leader rescue the runs of nodes that stopped answering;
* the ``Leader``: while this node leads, the engine, which dispatches due runs under
  the lease's fencing token and hears of every run's end;
* the ``Claimer``: claims dispatched runs for this node's free workers and runs them.

Nothing polls for changes: the store's LISTEN/NOTIFY feed wakes the node (a task
added, a run dispatched or ended by another node), the engine's next deadline arms a
timer, and each step looks once more in case a notice was lost with a connection.

Stopping: the node gives the lead up at once (another node takes it without waiting
out the lease), claims nothing more, keeps its heartbeat while its runs finish (so
nobody rescues them), records them, waits (up to ``NEWS_GRACE``) until what it
decided while it led is told (``news``: its outbox rows are its own while it
answers), and only then says it stopped.

Signals:
    stopped(): every claimed run is recorded and the node left the schedule.
    error_occurred(str): a slot failed (logged; the node goes on).

``news`` (``LeaderNews``) carries what the engine decided while this node led (a
run's end wherever it ran, a retry, a task that gave up), from the outbox
(``store.postgres.news``), and what a leader before it decided and did not live to
tell: ``taskgui daemon`` follows it with the same log lines and outside
notifications a file's daemon has.
"""

from __future__ import annotations

import logging
import os
import random
import socket
from collections.abc import Sequence
from datetime import datetime

from PySide6.QtCore import QObject, QSocketNotifier, QTimer, Signal

from taskgui.core.clock import Clock
from taskgui.core.conditions import SystemConditions
from taskgui.core.defaults import DEFAULT_WORKERS, KILL_GRACE, SHUTDOWN_GRACE
from taskgui.runtime.cluster.claimer import Claimer
from taskgui.runtime.cluster.leader import Leader
from taskgui.runtime.cluster.news import LeaderNews
from taskgui.runtime.cluster.node import NodeLoop, NodeTimes
from taskgui.runtime.cluster.stale_reads import Read
from taskgui.runtime.conditions.monitor import ConditionMonitor
from taskgui.runtime.deadline_timer import DeadlineTimer
from taskgui.runtime.guard import service_slot
from taskgui.runtime.pool import WorkerPool
from taskgui.store.errors import SchedulerAlreadyRunningError, StoreError
from taskgui.store.postgres import waiting
from taskgui.store.postgres.cluster import Cluster
from taskgui.store.postgres.news import NewsRows
from taskgui.store.postgres.repository import PostgresRepository
from taskgui.store.postgres.shared_runs import SharedRuns
from taskgui.system.orphans import stop_orphaned_runs

log = logging.getLogger(__name__)

# The commit of a dispatch, its notice to the other nodes and their claim take a few
# milliseconds on a LAN; dispatched this much ahead, a run can start on time anywhere.
DISPATCH_AHEAD = 0.05  # seconds
# How long a stopping node waits for its news to be sent (a webhook's timeout is 10 s)
# before it says it stopped; what is left then is the next leader's to tell.
NEWS_GRACE = 12.0  # seconds


class ClusterNodeService(QObject):
    """See the module docstring."""

    stopped = Signal()
    error_occurred = Signal(str)

    def __init__(
        self,
        repository: PostgresRepository,
        clock: Clock,
        *,
        node: str,
        version: str,
        workers: int = DEFAULT_WORKERS,
        tags: Sequence[str] = (),
        times: NodeTimes | None = None,
        kill_grace: float = KILL_GRACE,
        rng: random.Random | None = None,
        dispatch_ahead: float = DISPATCH_AHEAD,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._repository = repository
        self._clock = clock
        self.node = node
        session = repository.session
        self.cluster = Cluster(session, node, tags)
        self._runs = SharedRuns(session, node)
        self.times = times or NodeTimes()
        self.loop = NodeLoop(
            self.cluster, clock, version=version, workers=workers, times=self.times
        )
        self.pool = WorkerPool(workers, clock.monotonic, kill_grace=kill_grace, parent=self)
        # What this node's engine decides while it leads, for the log and the relay.
        self.news = LeaderNews(repository, self)
        self._news_rows = NewsRows(session, node)
        self._told: list[int] = []  # told, their rows not yet deleted (the store failed)
        self.news.told.connect(self._on_news_told)
        self.leader = Leader(
            repository,
            self._runs,
            dead_after=self.times.silence,
            rng=rng,
            tell=self.news.tell,
        )
        self.claimer = Claimer(repository, self.cluster, self._runs, self.pool, clock, parent=self)
        self.claimer.run_ended.connect(self._on_claimer_run_ended)
        self.claimer.idle.connect(self._on_claimer_idle)
        self._steps = QTimer(self)
        self._steps.setInterval(max(1, int(self.times.interval * 1000)))
        self._steps.timeout.connect(self._on_steps_timeout)
        self._deadline = DeadlineTimer(clock, self, lead=dispatch_ahead)
        self._deadline.approaching.connect(self._on_deadline_approaching)
        self._deadline.fired.connect(self._on_deadline_fired)
        self._deadline.clock_jumped.connect(self._on_deadline_fired)
        self._notifier: QSocketNotifier | None = None
        self._conditions: ConditionMonitor | None = None
        self._started = False
        self._offers_owed = False  # what this machine offers, not yet in the store
        self._stopping = False
        self._done = False
        self._waited_for_news = False

    def start(self) -> int:
        """Join the schedule; return how many of this node's own runs a previous
        process of it left open (closed as interrupted, retried by their policy).

        SchedulerAlreadyRunningError while another process answers as this node: it
        would close that process's runs as its own leftovers (and stop their commands),
        and the two would take the lead from each other. Every node on a machine is
        ``user@host`` unless named, so a second ``taskgui daemon`` meets this at once.
        """
        self._refuse_a_live_twin()
        interrupted = self._runs.interrupt_own(self._clock.now())
        for run in interrupted:
            log.warning("run %s of task %s was interrupted; retrying", run.id, run.task_id)
        # What the leader rescued from this node's previous process may still run
        # here beside its retry on another node: stopped too, but not counted (it was
        # closed, and retried or given up on, by the rescue).
        stop_orphaned_runs([*interrupted, *self._runs.rescued_from_last_process()])
        self.loop.step()
        self._listen()
        self._steps.start()
        self._started = True
        self._work()
        if self._conditions is not None:
            self._conditions.start()
        return len(interrupted)

    def _refuse_a_live_twin(self) -> None:
        twin = self.cluster.live_twin(self.times.silence)
        if twin is None:
            return
        host, pid, ago = twin
        if host == socket.gethostname() and (pid == os.getpid() or not _alive(pid)):
            return  # a process of this machine that is gone (killed): its runs are ours
        raise SchedulerAlreadyRunningError(
            f"node {self.node} is already running (pid {pid} on {host}, heard from "
            f"{ago:.0f} s ago); stop it, or start this one with another name: --node NAME",
            pid=pid,
        )

    def watch_conditions(self, monitor: ConditionMonitor) -> None:
        """Judge run conditions by this machine's power, network and idle state (until
        the first reading, which comes once the node started, a run with conditions is
        left for other nodes)."""
        self._conditions = monitor
        monitor.setParent(self)
        monitor.conditions_changed.connect(self._on_conditions_changed)
        # Read from start() on: a first reading before it made the claimer take runs,
        # which start() then closed as this node's leftovers ("interrupted", retried).
        if self._started:
            monitor.start()

    def shutdown(self, grace: float = SHUTDOWN_GRACE, reason: str = "taskgui stopped") -> None:
        """Leave the schedule: see the module docstring."""
        if self._stopping:
            return
        self._stopping = True
        self.loop.may_lead = False
        self.leader.drop()
        self._deadline.disarm()
        try:
            self.cluster.resign()
        except StoreError as error:
            log.warning("node %s could not give the lead up: %s", self.node, error)
        QTimer.singleShot(int(grace * 1000), self.claimer.cancel_all)
        self.claimer.stop(reason)

    # ---------------------------------------------------------------- slots

    def _work(self, ahead: datetime | None = None) -> None:
        if self._done:
            return
        if not self._stopping:
            lease = self.loop.lease
            deadline = self.leader.work(lease, self._clock.now(), ahead)
            if self.leader.perform_requests(lease, self._clock.now()):
                deadline = self.leader.work(lease, self._clock.now())
            self._deadline.arm(deadline)
        try:
            self.claimer.claim()
        except StoreError as error:
            log.warning("node %s: %s", self.node, error)

    def _listen(self) -> None:
        """Wake on the feed's socket; again after the feed connected anew."""
        try:
            descriptor = self._repository.fileno()
        except StoreError as error:
            log.warning("node %s: %s", self.node, error)
            descriptor = None
        current = self._notifier
        if current is not None and descriptor is not None and current.socket() == descriptor:
            return
        if current is not None:
            current.setEnabled(False)
            current.deleteLater()
            self._notifier = None
        if descriptor is not None:
            notifier = QSocketNotifier(descriptor, QSocketNotifier.Type.Read, self)
            notifier.activated.connect(self._on_notifier_activated)
            self._notifier = notifier

    @service_slot
    def _on_steps_timeout(self) -> None:
        lease = self.loop.step()
        if not self._stopping:
            self.leader.tell_orphans(lease)
        self._forget_told()
        self._publish_offers()
        self.leader.stale.everything()  # once a step: in case a notice went missing
        try:
            self._repository.changed()  # drains; a broken feed connects again
            self._repository.changed_tables()  # all read again anyway
            self._look_at_idle()
        except StoreError as error:
            log.warning("node %s: %s", self.node, error)
        self._listen()
        self._work()

    def _look_at_idle(self) -> None:
        """Read the idle time when a waiting run's idle condition could hold (the
        user's idleness moves no signal)."""
        if self._conditions is not None:
            machine = self.claimer.machine
            self._conditions.look_at_idle_in(machine.idle_look_in(self._runs.idle_wanted()))

    @service_slot
    def _on_conditions_changed(self, system: SystemConditions) -> None:
        try:  # while the node stops too: it claims nothing more, and stops what it must
            self.claimer.conditions_changed(system)
        except StoreError as error:
            log.warning("node %s: %s", self.node, error)
        self._offers_owed = True
        self._publish_offers()

    def _publish_offers(self) -> None:
        """Say what this machine offers, for the leader's give-up and a window's
        reasons; owed, and tried again at each step, until the store took it."""
        if not self._offers_owed:
            return
        self.leader.stale.mark(Read.WAITING)  # a write of ours: the feed omits it
        try:
            waiting.publish(self._repository.session, self.node, self.claimer.machine.system)
        except StoreError as error:
            log.warning("node %s: %s", self.node, error)
            return
        self._offers_owed = False

    @service_slot
    def _on_notifier_activated(self, *_: object) -> None:
        try:
            changed = self._repository.changed()
            self.leader.stale.heard(self._repository.changed_tables())
        except StoreError as error:
            log.warning("node %s: %s", self.node, error)
            changed = True
            self.leader.stale.everything()
        if changed:
            self._work()

    @service_slot
    def _on_deadline_approaching(self, *_: object) -> None:
        """Dispatch the deadline's runs ahead: the commit, the notice and the claim
        happen before it, and the claiming node's worker starts each run at its time."""
        engine = self.leader.engine
        self._work(ahead=None if engine is None else engine.next_deadline())

    @service_slot
    def _on_deadline_fired(self, *_: object) -> None:
        self._work()

    @service_slot
    def _on_claimer_run_ended(self) -> None:
        self.leader.stale.mark(Read.ENDED)  # recorded by this node: the feed omits it
        if not self._stopping:
            QTimer.singleShot(0, self._on_deadline_fired)  # after the slot that ended it

    @service_slot
    def _on_news_told(self, ids: list[int]) -> None:
        self._told += ids
        self._forget_told()

    def _forget_told(self) -> None:
        """Delete the told rows (again at the next step if the store failed: while
        this node answers, nobody else tells them)."""
        if not self._told:
            return
        try:
            self._news_rows.told(self._told)
        except StoreError as error:
            log.warning("node %s: %s", self.node, error)
            return
        self._told = []

    @service_slot
    def _on_claimer_idle(self) -> None:
        if self._done:
            return
        if self.news.pending and not self._waited_for_news:
            self._waited_for_news = True
            self.news.drained.connect(self._on_claimer_idle)
            QTimer.singleShot(int(NEWS_GRACE * 1000), self._on_claimer_idle)
            return
        self._done = True
        self._forget_told()
        self._steps.stop()
        try:
            self.cluster.stopped()
        except StoreError as error:
            log.warning("node %s could not say it stopped: %s", self.node, error)
        self.stopped.emit()


def _alive(pid: int) -> bool:
    """Whether a process of this machine with that pid exists (signal 0 asks only)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's: it exists
        return True
    return True
