"""A node's hands: claim dispatched runs for its free workers, run them, record them.

Every node of a shared schedule claims (the leader's too): ``Cluster.claim`` takes the
highest-priority runs nobody holds (``FOR UPDATE SKIP LOCKED``), a run's key free
across every node. Each claimed run's command runs on the node's ``WorkerPool``, as a
single process's runs do (process group, timeout, output tail); its end is written to
its row only while the run is still this node's (a rescue may have closed it), and
the leader reads it from there.

A result that could not be written (the connection broke) is kept and written at the
next claim: the run stays open meanwhile, so nobody retries it early.

Run conditions are judged here, on this machine (``machine``): a claim takes only runs
it meets, and a run whose conditions end while it goes is stopped, as ``stopped``.

Signals:
    run_ended(): a claimed run's end was recorded (the leader may have work).
    idle(): no claimed run is left (after ``stop``: the node may leave).
"""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import datetime

from PySide6.QtCore import QObject, Signal

from taskgui.core.clock import Clock
from taskgui.core.conditions import SystemConditions
from taskgui.core.errors import TaskguiError
from taskgui.core.states import RunOutcome
from taskgui.core.status import RunResult, RunTicket
from taskgui.runtime.cluster.machine import MachineHere
from taskgui.runtime.guard import service_slot
from taskgui.runtime.pool import WorkerPool
from taskgui.runtime.run_env import run_environment
from taskgui.runtime.runner import RunReport
from taskgui.store.errors import StoreError
from taskgui.store.postgres.cluster import ClaimedRun, Cluster
from taskgui.store.postgres.connection import password_left_out
from taskgui.store.postgres.repository import PostgresRepository
from taskgui.store.postgres.shared_runs import SharedRuns

log = logging.getLogger(__name__)


class Claimer(QObject):
    """See the module docstring."""

    run_ended = Signal()
    idle = Signal()
    error_occurred = Signal(str)  # for service_slot

    def __init__(
        self,
        repository: PostgresRepository,
        cluster: Cluster,
        runs: SharedRuns,
        pool: WorkerPool,
        clock: Clock,
        *,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._repository = repository
        # What a command finds as TASKGUI_DB, so that a ``taskgui`` it runs works on this
        # schedule (it read the machine's own file): the DSN with no password, which
        # libpq finds again in ~/.pgpass or PGPASSWORD, as the autostart entry does.
        self._shown_dsn = password_left_out(repository.session.dsn)
        self._cluster = cluster
        self._runs = runs
        self._pool = pool
        self._clock = clock
        self._unsaved: dict[int, tuple[RunOutcome, datetime, RunResult, float | None]] = {}
        self._going: dict[int, ClaimedRun] = {}
        self._cancelled: set[int] = set()
        self.machine = MachineHere()
        self.stopping_because: str | None = None
        pool.run_started.connect(self._on_pool_run_started)
        pool.run_completed.connect(self._on_pool_run_completed)

    @property
    def going(self) -> int:
        return len(self._going) + len(self._unsaved)

    def claim(self) -> None:
        """Write what is unsaved, stop runs called off (their task was cancelled or
        deleted, on whichever node), then claim as many runs as workers are free."""
        self._save()
        for run_id in self._runs.called_off(list(self._going)):
            if run_id not in self._cancelled:
                self._cancelled.add(run_id)
                log.info(
                    "node %s: stopping run %d, its task was cancelled", self._runs.node, run_id
                )
                self._pool.cancel(run_id)
        if self.stopping_because is not None or self._pool.free < 1:
            return
        for run in self._cluster.claim(self._pool.free, self.machine.offers):
            self._start(run)

    def conditions_changed(self, system: SystemConditions) -> None:
        """This machine's state moved: stop the runs whose conditions ended (they end
        as ``stopped``), then claim what it meets now."""
        for run_id in self.machine.changed(system):
            log.info("node %s: stopping run %d, its conditions ended here", self._runs.node, run_id)
            self._pool.cancel(run_id)
        self.claim()

    def stop(self, reason: str) -> None:
        """Claim nothing more; ``idle`` once every claimed run is recorded."""
        self.stopping_because = reason
        if not self._going:
            self._save()
            self.idle.emit()

    def cancel_all(self) -> None:
        self._pool.cancel_all()

    def _start(self, run: ClaimedRun) -> None:
        now = self._clock.now()
        try:
            spec = self._repository.get(run.task_id).spec
        except TaskguiError as error:  # deleted meanwhile, or unreadable: not runnable
            failed = RunResult(error=str(error))
            self._unsaved[run.run_id] = (RunOutcome.FAILED, now, failed, None)
            self._save()
            return
        self._going[run.run_id] = run
        self.machine.started(run.run_id, spec.conditions)
        ticket = RunTicket(
            run_id=run.run_id,
            task_id=run.task_id,
            attempt=run.attempt,
            kind=run.kind,
            scheduled_at=run.scheduled_at,
            dispatched_at=now,
        )
        # Dispatched ahead of its time: the worker starts it then, by this machine's
        # monotonic clock (a node's clock offset shifts it; nodes warns of one > 1 s).
        early = (run.scheduled_at - now).total_seconds()
        self._pool.submit(
            run.run_id,
            spec.command,
            timeout=spec.timeout.total_seconds() if spec.timeout else None,
            extra_env={**run_environment(None, ticket, spec.name), "TASKGUI_DB": self._shown_dsn},
            start_at=self._clock.monotonic() + early if early > 0 else None,
        )

    @service_slot
    def _on_pool_run_started(self, run_id: int, pid: int) -> None:
        if run_id in self._going:
            try:
                self._runs.started(run_id, pid, self._clock.now())
            except StoreError as error:
                log.warning("node %s: %s", self._runs.node, error)

    @service_slot
    def _on_pool_run_completed(self, run_id: int, report: object) -> None:
        assert isinstance(report, RunReport)
        claimed = self._going.pop(run_id, None)
        if claimed is None:
            return
        called_off = run_id in self._cancelled
        self._cancelled.discard(run_id)
        unmet = self.machine.ended(run_id)
        outcome, result = report.outcome, report.result
        if self.stopping_because is not None and outcome is RunOutcome.CANCELLED:
            outcome = RunOutcome.INTERRUPTED  # stopped by the node's stop, not a person
            result = replace(result, error=f"stopped because {self.stopping_because}")
        elif outcome is RunOutcome.CANCELLED and unmet is not None and not called_off:
            outcome = RunOutcome.STOPPED  # its conditions ended: it runs again when they hold
            result = replace(result, error=f"stopped: {unmet}")
        # Its real start, by the runner's clock (this slot may run a while after it).
        took = None if report.began is None else self._clock.monotonic() - report.began
        self._unsaved[run_id] = (outcome, self._clock.now(), result, took)
        if outcome is not RunOutcome.SUCCEEDED:  # a line in the log, as a daemon's runs have
            log.warning(
                "node %s: run %d of task %d (attempt %d) %s: %s",
                self._runs.node,
                run_id,
                claimed.task_id,
                claimed.attempt,
                outcome.value,
                result.error or "no reason given",
            )
        self._save()
        if self.stopping_because is None:
            try:
                self.claim()
            except StoreError as error:
                log.warning("node %s: %s", self._runs.node, error)
        elif not self._going:
            self.idle.emit()

    def _save(self) -> None:
        for run_id, (outcome, at, result, took) in list(self._unsaved.items()):
            try:
                if not self._runs.finish(run_id, outcome, at, result, took=took):
                    log.warning(
                        "node %s: run %d was rescued by another node before it ended here",
                        self._runs.node,
                        run_id,
                    )
            except StoreError as error:
                log.warning("node %s: %s; its end is written later", self._runs.node, error)
                return
            del self._unsaved[run_id]
            self.run_ended.emit()
