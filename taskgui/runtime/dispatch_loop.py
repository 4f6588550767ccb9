"""The scheduler service's dispatch loop: timer -> due -> commit -> pool, and back.

On each wake of the ``DeadlineTimer`` the loop asks the engine what is due,
**commits** the dispatch, then lets the worker pool start the runs (behind a gate that
opens only once the commit succeeded; the runs given to workers that runs' ends freed
are handed over after the commit instead, so that each of those wakes once). The
workers' reports are taken a wake-up's worth at a time (group commit). A finished run
is committed (with its result) in the same transaction as whatever its freed worker
is given next, so before its task is queued again.

Under a backlog (``queue_per_worker``), runs a worker beyond the free ones are
dispatched and committed too, and wait in the pool's queue: a worker that finishes
takes the next at once instead of waiting for this thread to hear of its end. They
show as waiting for a worker until they start, make way for a more urgent task
(``take_back.py``), and after a crash are recorded and dispatched again
(``control.recovery``). ``SchedulerService`` builds the
parts and adds the public face (life, reads, operations, requests); this class is the
loop between the engine and the pool.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta

from taskgui.core.clock import Clock
from taskgui.core.engine.engine import Engine
from taskgui.core.events import Event, RunDispatched
from taskgui.core.states import RunOutcome
from taskgui.core.status import RunId, RunResult
from taskgui.core.wake import WAKE_JUMP
from taskgui.runtime.ahead import DispatchAhead
from taskgui.runtime.deadline_timer import DeadlineTimer
from taskgui.runtime.guard import service_slot
from taskgui.runtime.live_output import LiveOutput
from taskgui.runtime.pool import PoolReport, WorkerPool
from taskgui.runtime.publishing import publish
from taskgui.runtime.run_end import run_end_failed, timed_by_monotonic
from taskgui.runtime.run_env import run_environment
from taskgui.runtime.runner import RunReport
from taskgui.runtime.schedule_signals import ScheduleSignals
from taskgui.runtime.store_health import StoreHealth
from taskgui.runtime.take_back import TakeBack
from taskgui.store.errors import StoreError
from taskgui.store.protocols import ScheduleStore

log = logging.getLogger("taskgui.runtime.service")


class DispatchLoop(ScheduleSignals):
    """See the module docstring; the parts are set by ``SchedulerService``."""

    _repository: ScheduleStore
    _database: str | None
    _clock: Clock
    _engine: Engine
    _pool: WorkerPool
    _ahead: DispatchAhead
    _timer: DeadlineTimer
    _taken: TakeBack
    _output: LiveOutput
    _health: StoreHealth
    _running: bool
    _stopping: bool
    _stop_reason: str

    def _finish_shutdown(self) -> None:
        raise NotImplementedError  # SchedulerService's

    # ------------------------------------------------------------- dispatch

    def _dispatch(
        self,
        ahead: tuple[datetime, float] | None = None,
        done: Sequence[Event] = (),
        results: dict[RunId, RunResult] | None = None,
        pids: dict[RunId, int] | None = None,
    ) -> None:
        """Start whatever is due, as far as workers allow, then re-arm the timer.

        ``ahead``: (deadline, its monotonic time) to dispatch what is due at that
        deadline now, to start then. ``done``: the events of a finished run (and
        ``results`` its result), committed in the same transaction as the dispatch;
        ``pids``: of runs whose processes started, written in it too.
        """
        if self._health.lost is not None:  # written nowhere: the file the path named is gone
            self._publish(done, results)
            return
        dispatching = self._running and not self._stopping and self._health.healthy
        if not dispatching and not done and not pids:
            return
        now = self._clock.now()
        events = list(done)
        dispatched: list[RunDispatched] = []
        # Commit before acting: the runs are handed over behind a closed gate, so the
        # worker threads wake while the dispatch is committed; nothing starts until
        # the commit has succeeded and the gate opens (and not before its start time).
        gate = threading.Event()
        # After runs ended, workers wait for this very dispatch: hand the new runs over
        # once committed, with no gate, so that each worker wakes once, not twice.
        after_commit: list[RunDispatched] = []
        try:
            if dispatching:
                at, start_at = ahead or self._ahead.moment(now)
                # Workers that ended wait for this very dispatch: their runs go after it.
                later = after_commit if done and start_at is None else None
                events += self._due(at, start_at, gate, dispatched, later)
                # A more urgent task waiting while a less urgent run waits for its start
                # time or in the pool's queue: that one makes way (take_back.py); a
                # queued one's place is free at once, for the next best due task.
                for _ in range(2 * self._pool.size + 1):
                    way = self._taken.make_way()
                    if not way:
                        break
                    events += way
                    more = self._due(at, start_at, gate, dispatched, later)
                    events += more
                    if not any(isinstance(event, RunDispatched) for event in more):
                        break
            self._repository.apply(events, now, results, pids)
        except BaseException as error:
            # Not on disk (or not surely): nothing handed over may start, and no
            # worker may wait for a gate that never opens.
            for event in dispatched:
                self._pool.cancel(event.run.run_id)
                self._taken.abandon(event.run.run_id)  # never happened: not recorded
            gate.set()
            if not isinstance(error, StoreError):
                raise
            self._health.failed(error)
            self._publish(done, results)
            return
        gate.set()
        for event in after_commit:
            self._start_run(event, None, None)
        if ahead is not None and self._health.healthy:
            self._ahead.hold(*ahead)
        self._publish(events, results)
        if dispatching and self._health.healthy:
            self._timer.arm(self._engine.next_deadline())
            self._look_at_idle()

    def _due(
        self,
        at: datetime,
        start_at: float | None,
        gate: threading.Event,
        dispatched: list[RunDispatched],
        later: list[RunDispatched] | None,
    ) -> list[Event]:
        """What is due at ``at`` for the free workers (and, unless dispatching ahead,
        the room in the pool's queue beyond them); the runs are handed over behind
        ``gate`` (into ``dispatched``), or kept in ``later`` to hand over after the
        commit."""
        pool = self._pool
        free, room = pool.free, (0 if start_at is not None else pool.queue_room)
        if later:  # not handed over yet, so not counted by the pool
            room -= max(0, len(later) - free)
            free = max(0, free - len(later))
        try:
            new = self._engine.due(at, free, max(0, room))
        except StoreError as error:  # a deferred task could not be read
            self._health.failed(error)
            return []
        runs = [event for event in new if isinstance(event, RunDispatched)]
        if later is not None:
            later += runs
        else:
            for event in runs:
                self._start_run(event, gate, start_at)
            dispatched += runs
        return new

    def _commit_taken_back(self, events: list[Event]) -> bool:
        """Commit and publish runs taken back (see take_back.py); False if the store
        failed (the store still says started: retried instead)."""
        if self._health.lost is None:
            try:
                self._repository.apply(events, self._clock.now())
            except StoreError as error:
                self._health.failed(error)
                return False
        self._publish(events)
        return True

    def _calm_wake(self) -> None:
        """The computer woke: a hook for the wake-up policies (``wake_up.py``)."""
        self._dispatch()

    def _look_at_idle(self) -> None:
        """After a dispatch: a hook for reading the idle time when a task waiting on it
        could start (the service follows run conditions; see ``watch_conditions``)."""

    def _rearm(self) -> None:
        """After tasks were read: a decoded task can move the head of the schedule."""
        if self._running and self._health.healthy and not self._stopping:
            self._timer.arm(self._engine.next_deadline())

    def _start_run(
        self, event: RunDispatched, gate: threading.Event | None, start_at: float | None
    ) -> None:
        ticket = event.run
        spec = self._engine.spec(ticket.task_id)
        self._pool.submit(
            ticket.run_id,
            spec.command,
            timeout=spec.timeout.total_seconds() if spec.timeout else None,
            extra_env=run_environment(self._database, ticket, spec.name),
            gate=gate,
            start_at=start_at,
            rank=-spec.priority,
            queued=event.queued,
        )
        if start_at is not None or event.queued:
            self._taken.hold(ticket.run_id, spec.priority, queued=event.queued)

    @service_slot
    def _on_timer_approaching(self, target: float) -> None:
        """Dispatch the deadline's runs ahead when that cannot change who runs.

        Not when a due task already waits for a worker: then workers are the limit,
        and each one is given the best due task the moment it frees. Returning without
        re-arming lets the timer go on and fire at the deadline.
        """
        if not self._health.file_is_ours(companions=False):
            return
        deadline = self._engine.next_deadline()
        if deadline is None or not self._pool.free or self._engine.has_ready():
            return
        start_at = self._ahead.start_time(deadline, target)
        if start_at is not None:
            self._dispatch(ahead=(deadline, start_at))

    @service_slot
    def _on_timer_fired(self) -> None:
        if self._health.file_is_ours(companions=False):
            self._dispatch()

    @service_slot
    def _on_timer_clock_jumped(self, seconds: float) -> None:
        if not self._health.file_is_ours(companions=False):
            return
        log.warning("the wall clock jumped by %.1f s; re-planning the schedule", seconds)
        self._ahead.forget()
        if seconds >= WAKE_JUMP.total_seconds():  # asleep (monotonic time stood still)
            self._calm_wake()
        else:
            self._dispatch()
        if not self._timer.armed:
            self._timer.arm(self._engine.next_deadline())

    @service_slot
    def _on_pool_runs_reported(self, reports: object) -> None:
        """Every start and end the workers reported since the last wake-up, at once.

        Group commit: the results of all the runs that ended, the pids of all that
        started and whatever their freed workers are given next go to the store in
        one transaction (``_dispatch``), not one or more per run. Still commit before
        acting: each result is on disk before its task can be dispatched again, since
        that dispatch is in the same transaction; and each new run is on disk before
        its process starts (the gate).
        """
        assert isinstance(reports, list)
        done: list[Event] = []
        results: dict[RunId, RunResult] = {}
        pids: dict[RunId, int] = {}
        for item in reports:
            assert isinstance(item, PoolReport)
            if item.pid is not None:
                started = self._run_started(item.run_id, item.at)
                if started is not None:
                    pids[item.run_id] = item.pid
                    done += started
            elif isinstance(item.report, RunReport):
                ended = self._run_ended(item.run_id, item.report)
                if ended is not None:
                    done += ended[0]
                    results[item.run_id] = ended[1]
        self._dispatch(done=done, results=results, pids=pids)
        if self._stopping and not self._pool.busy:
            self._finish_shutdown()

    def _run_started(self, run_id: RunId, at: float) -> list[Event] | None:
        """A run's process exists; None if its pid is not to be recorded, else what to
        commit with it.

        The pid is written with the rest of the wake-up's transaction: after a crash
        the next start stops the run's processes by this pid, and until it is on disk
        by the mark every one of them carries (``stop_orphaned_runs``), so a crash
        in between still leaves nothing running beside the retry. A queued run's task
        was stored as waiting for a worker: it is stored as running from then on (a
        crash after this start is an interrupted attempt, not a run given back).
        """
        was_queued = run_id in self._taken.queued
        self._taken.started(run_id)
        ticket = self._engine.running_runs.get(run_id)
        if ticket is None:
            return None
        # Heard of with the next end, or up to START_REPORT_MS later: started at ``at``.
        late = timedelta(seconds=max(0.0, self._clock.monotonic() - at))
        events = self._engine.started(run_id, self._clock.now() - late)
        if was_queued:
            self.run_started.emit(ticket)
            return events  # committed and published with the wake-up's transaction
        self._publish(events)
        self.run_started.emit(ticket)
        return []

    @service_slot
    def _on_pool_run_output(self, run_id: int, text: str) -> None:
        ticket = self._engine.running_runs.get(run_id)
        if ticket is None or run_id in self._taken.ignored:
            return
        self._output.printed(run_id, text)
        self.run_output.emit(ticket, text)

    def _run_ended(self, run_id: RunId, report: RunReport) -> tuple[list[Event], RunResult] | None:
        """The engine's events for a run that ended and the result to record; None for
        one taken back before it started anything (nothing to record; its worker is
        free)."""
        self._output.ended(run_id)
        queued = self._taken.queued_until_taken(run_id)
        if self._taken.ended(run_id):
            return None
        outcome, result = report.outcome, report.result
        started: datetime | None = None
        if queued and report.began is not None:  # when it really started (RunResult)
            began = timedelta(seconds=max(0.0, self._clock.monotonic() - report.began))
            started = self._clock.now() - began
            result = RunResult(
                exit_code=result.exit_code,
                error=result.error,
                output=result.output,
                started_at=started,
            )
        if self._stopping and outcome is RunOutcome.CANCELLED:
            outcome = RunOutcome.INTERRUPTED  # stopped by shutdown, not by a person
            result = replace(result, error=f"stopped because {self._stop_reason}")
        elif outcome is RunOutcome.CANCELLED:
            condition = self._engine.stop_reason(run_id)
            if condition is not None:  # its conditions ended: it runs again when they hold
                outcome = RunOutcome.STOPPED
                result = replace(result, error=f"stopped: {condition}")
        now = self._clock.now()
        ticket = self._engine.running_runs.get(run_id)
        try:
            events = timed_by_monotonic(
                self._engine.finished(run_id, outcome, now), report.duration, started
            )
        except Exception as error:
            events = run_end_failed(self._engine, ticket, outcome, now, error)
        return events, result

    def _publish(
        self, events: Sequence[Event], results: dict[RunId, RunResult] | None = None
    ) -> None:
        publish(self, events, results, self._pool.cancel)
