"""The scheduler service: the engine, the store and the pool, driven by one timer.

It owns the engine and the repository and lives on one thread. It arms a single
``DeadlineTimer`` for the engine's earliest deadline and re-arms it whenever the head
may have changed (a task added, cancelled, finished, rescheduled); it never polls.
On each wake it asks the engine what is due, **commits** the dispatch, then lets the
worker pool start the runs. A finished run is committed (with its result) in the same
transaction as whatever its freed worker is given next, so before its task is queued
again. Requests from other processes (the CLI) arrive through the database and are
noticed by a cheap ``PRAGMA data_version`` check.

When a worker is free, a deadline's runs are dispatched ``dispatch_ahead`` before it
and start at it on their own worker thread (see ``taskgui.runtime.ahead``). Such a run
shows as running while it waits, but until its command starts it can be taken back
as if never dispatched (``Engine.withdraw``; the store forgets it): by a cancel or
delete of its task (which then leave no run in the history), by a more urgent due
task that finds no free worker (``_make_way``), and at a shutdown that does not wait
for it. A pause, as for any running run, lets it go on.

What a running command prints reaches views as ``run_output`` (the tail so far, at
most twice a second while it prints; ``history`` gives it for the open run too) and
the database every few seconds (see ``live_output``).

Slots never raise: a failing store operation is reported through ``error_occurred``
and dispatching stops until the store works again; anything else is reported the same
way (``runtime.guard``), and a task the engine fails on is set aside, not the schedule.
One failure is not retried: the database path no longer naming the file that is open
(deleted or replaced, or its -wal or -shm; see ``store.file_identity``), checked on
every wake with one ``stat`` and on every request check with three. Then what the open
file holds is kept, and the schedule stops for good with ``store_lost``.

Signals: those of ``ScheduleSignals``, and
    loaded(): every stored task is in memory (soon after ``start``; see hydration.py).
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal

from taskgui.control.operations import Operations
from taskgui.control.recovery import Recovery, recover
from taskgui.core.clock import Clock
from taskgui.core.conditions import SystemConditions
from taskgui.core.defaults import DEFAULT_WORKERS, SHUTDOWN_GRACE
from taskgui.core.engine.engine import Engine
from taskgui.core.errors import TaskguiError, UnreadableTaskError
from taskgui.core.events import (
    Event,
    OccurrencesSkipped,
    RetryScheduled,
    RunCancelRequested,
    RunDispatched,
    RunFinished,
    TaskAdded,
    TaskChanged,
    TaskDropped,
    TaskExhausted,
    TaskRemoved,
)
from taskgui.core.operation import Op
from taskgui.core.states import RunOutcome
from taskgui.core.status import RunId, RunRecord, RunResult, RunTicket, TaskSnapshot
from taskgui.core.task import TaskId, TaskSpec
from taskgui.runtime.ahead import DispatchAhead
from taskgui.runtime.checkpoints import BackgroundCheckpoints
from taskgui.runtime.conditions.monitor import ConditionMonitor
from taskgui.runtime.deadline_timer import DeadlineTimer
from taskgui.runtime.guard import service_slot
from taskgui.runtime.hydration import Hydration
from taskgui.runtime.live_output import OUTPUT_SAVE_MS, LiveOutput
from taskgui.runtime.pool import WorkerPool
from taskgui.runtime.runner import RunReport
from taskgui.runtime.schedule_signals import ScheduleSignals
from taskgui.store.errors import DatabaseReplacedError, StoreError
from taskgui.store.protocols import TaskRepository
from taskgui.store.requests import Request, answer_request
from taskgui.store.sqlite.repository import SqliteRepository
from taskgui.store.sqlite.wal_checkpoints import WalCheckpointer
from taskgui.system.orphans import stop_orphaned_runs
from taskgui.system.process_tree import RUN_MARK, run_mark

log = logging.getLogger(__name__)

REQUEST_CHECK_MS = 250
STORE_RETRY_MS = 5_000
# Enough for the commit and an idle worker thread's wake-up with room to spare, and
# short enough that nothing a person does in between could tell the difference.
DISPATCH_AHEAD = 0.005  # seconds
# A run's wall-clock span that differs from its monotonic duration by more than this
# crossed a clock jump (NTP slews far less: 0.05 %, 1.8 s over an hour-long run).
DURATION_DRIFT = timedelta(seconds=1)


class SchedulerService(ScheduleSignals):
    """Runs the schedule. See the module docstring."""

    loaded = Signal()

    def __init__(
        self,
        repository: TaskRepository,
        clock: Clock,
        *,
        workers: int = DEFAULT_WORKERS,
        kill_grace: float = 5.0,
        rng: random.Random | None = None,
        dispatch_ahead: float = DISPATCH_AHEAD,
        output_save_ms: int = OUTPUT_SAVE_MS,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._repository = repository
        # Named in every command's environment (TASKGUI_DB), for the command to know.
        self._database = (
            str(repository.path.resolve()) if isinstance(repository, SqliteRepository) else None
        )
        self._clock = clock
        self._rng = rng
        self._engine = Engine(rng=rng)
        self._ops = Operations(self._engine, repository)
        self._pool = WorkerPool(workers, clock.monotonic, kill_grace=kill_grace, parent=self)
        self._pool.run_started.connect(self._on_pool_run_started)
        self._pool.run_output.connect(self._on_pool_run_output)
        self._pool.run_completed.connect(self._on_pool_run_completed)
        self._ahead = DispatchAhead(clock, dispatch_ahead)
        self._timer = DeadlineTimer(clock, self, lead=dispatch_ahead)
        self._timer.approaching.connect(self._on_timer_approaching)
        self._timer.fired.connect(self._on_timer_fired)
        self._timer.clock_jumped.connect(self._on_timer_clock_jumped)
        self._hydration = Hydration(
            self._engine,
            clock=clock,
            publish=self._publish,
            failed=self._store_failed,
            loaded=self.loaded.emit,
            read=self._rearm,
            parent=self,
        )
        # Runs handed over with a start time that may not have begun yet (they can
        # still be taken back), and runs whose end the engine must not hear of: taken
        # back, or abandoned when their dispatch could not be committed.
        self._ahead_runs: set[RunId] = set()
        self._ignored_runs: set[RunId] = set()
        self._output = LiveOutput(repository, save_ms=output_save_ms, parent=self)
        self._requests = QTimer(self)
        self._requests.setInterval(REQUEST_CHECK_MS)
        self._requests.timeout.connect(self._on_requests_timeout)
        self._data_version: int | None = None
        self._checkpoints: BackgroundCheckpoints | None = None
        self._stopping = False
        self._stop_reason = ""
        self._healthy = True
        self._running = False
        # Set once the database path lost the open file: the schedule has stopped.
        self._lost: DatabaseReplacedError | None = None
        # The file whose path must go on naming it (see store.file_identity).
        self._file = repository if isinstance(repository, SqliteRepository) else None
        # The machine's state for tasks' run conditions (watch_conditions).
        self._conditions: ConditionMonitor | None = None
        self._system: SystemConditions | None = None

    # ----------------------------------------------------------------- life

    @property
    def engine(self) -> Engine:
        """For tests and the composition root; views use snapshots and signals."""
        return self._engine

    @property
    def pool(self) -> WorkerPool:
        return self._pool

    def start(self) -> Recovery:
        """Load the schedule (recovering from a crash) and start dispatching."""
        recovery = recover(self._repository, self._engine, self._clock.now())
        for run in recovery.interrupted:
            log.warning("run %s of task %s was interrupted; retrying", run.id, run.task_id)
        stop_orphaned_runs(recovery.interrupted, database=self._database)
        self._running = True
        self._hydration.start()
        if isinstance(self._repository, SqliteRepository):
            self._repository.take_over_checkpoints()
            self._start_checkpoints(self._repository.path)
            self._data_version = self._repository.data_version()
            self._requests.start()
            self._perform_requests()
        self._dispatch()
        return recovery

    def conditions_now(self) -> SystemConditions | None:
        """What the machine last reported for run conditions; None before it has."""
        return self._system

    def watch_conditions(self, monitor: ConditionMonitor) -> None:
        """Follow the machine's power, network and idle state for tasks' run conditions.

        Until the first reading arrives, a task with conditions waits ("not read yet");
        a composition root that runs the schedule always calls this.
        """
        self._conditions = monitor
        monitor.setParent(self)
        monitor.conditions_changed.connect(self._on_conditions_changed)
        monitor.start()

    @service_slot
    def _on_conditions_changed(self, system: SystemConditions) -> None:
        self._system = system
        events = self._engine.conditions_changed(system, self._clock.now())
        if self._running:
            self._dispatch(done=events)  # committed (the wait reasons) with what starts
        else:
            self._publish(events)

    def shutdown(self, grace: float = SHUTDOWN_GRACE, reason: str = "taskgui stopped") -> None:
        """Stop dispatching; give running commands ``grace`` seconds, then stop them.

        Runs stopped this way are recorded as interrupted, their error saying
        ``reason`` ("taskgui quit"), and retried at the next start. Emits ``stopped``
        when every run is recorded.
        """
        if self._stopping:
            return
        self._stopping = True
        self._stop_reason = reason
        self._timer.disarm()
        self._hydration.stop()
        self._requests.stop()
        if not self._pool.busy:
            self._finish_shutdown()
            return
        QTimer.singleShot(int(grace * 1000), self._on_shutdown_grace_over)

    def stop_runs_now(self) -> None:
        """While shutting down: stop the runs still going now, not after the grace."""
        if self._stopping:
            self._on_shutdown_grace_over()

    def running_task_names(self) -> list[str]:
        """The names of the tasks with a run going, for a person waiting on them."""
        task_ids = dict.fromkeys(run.task_id for run in self._engine.running_runs.values())
        return [self._engine.snapshot(task_id).spec.name for task_id in task_ids]

    @service_slot
    def _on_shutdown_grace_over(self) -> None:
        self._take_back_waiting_runs()
        going = self._pool.busy - len(self._ignored_runs)
        if going > 0:
            log.warning("stopping %d run(s) still going at shutdown", going)
            self._pool.cancel_all()

    def _take_back_waiting_runs(self) -> None:
        """Runs still waiting for their start time never ran: rather than recording
        them as interrupted, take them back, so the next start runs them as due."""
        self._take_back(sorted(self._ahead_runs))
        self._ahead_runs.clear()

    def _take_back_runs_of(self, task_id: TaskId) -> bool:
        """Before a cancel or delete: a run of the task still waiting for its start
        time never happened, so it leaves no cancelled run in the history. False if
        that could not be committed (reported; the store failure path takes over)."""
        runs = self._engine.running_runs
        return self._take_back(
            [
                run_id
                for run_id in sorted(self._ahead_runs)
                if run_id in runs and runs[run_id].task_id == task_id
            ]
        )

    def _take_back(self, run_ids: Sequence[RunId]) -> bool:
        """Withdraw those of ``run_ids`` that have not begun, and commit that."""
        events = [event for run_id in run_ids for event in self._withdraw(run_id)]
        if not events:
            return True
        if self._lost is not None:
            self._publish(events)
            return True
        try:
            self._repository.apply(events, self._clock.now())
        except StoreError as error:
            self._store_failed(error)  # the store still says started: retried instead
            return False
        self._publish(events)
        return True

    def _finish_shutdown(self) -> None:
        self._running = False
        if self._checkpoints is not None:
            self._checkpoints.stop()
        self.stopped.emit()

    # ---------------------------------------------------------------- reads

    def snapshot(self) -> list[TaskSnapshot]:
        """Every task as it is now: where a view starts before following the signals.

        If the file cannot be read just now, the tasks read so far; the rest follow as
        ``task_changed`` once the store works again (see ``_on_store_retry``)."""
        self._hydration.complete()
        return list(self._engine.snapshots(load_deferred=False))

    def task(self, task_id: TaskId) -> TaskSnapshot:
        return self._engine.snapshot(task_id)

    def history(self, task_id: TaskId, limit: int = 100) -> list[RunRecord]:
        """The task's runs, newest first; a run in progress with its output so far."""
        runs = self._repository.runs(task_id, limit)
        return self._output.lay_over(task_id, runs, self._engine.running_runs)

    def last_runs(self) -> dict[TaskId, RunRecord]:
        """Each task's latest finished run, read once when a view starts."""
        return self._repository.last_runs()

    @property
    def workers(self) -> int:
        return self._pool.size

    @property
    def busy_workers(self) -> int:
        return self._pool.busy

    def set_workers(self, count: int) -> None:
        self._pool.resize(count)
        self._dispatch()

    # --------------------------------------------------------- operations

    def add_task(self, spec: TaskSpec) -> TaskSpec:
        """Store and schedule a new task; returns it with its id. Raises TaskguiError."""
        self._refuse_if_lost()
        now = self._clock.now()
        (stored,), events = self._ops.add([spec], now)
        self._publish(events)
        self._dispatch()
        return stored

    def add_tasks(self, specs: Sequence[TaskSpec]) -> list[TaskSpec]:
        self._refuse_if_lost()
        now = self._clock.now()
        stored, events = self._ops.add(specs, now)
        self._publish(events)
        self._dispatch()
        return stored

    def update_task(self, spec: TaskSpec) -> None:
        self._refuse_if_lost()
        self._change(self._ops.update(spec, self._clock.now()))

    def cancel(self, task_id: TaskId) -> None:
        self._refuse_if_lost()
        if self._take_back_runs_of(task_id):
            self._change(self._ops.cancel(task_id, self._clock.now()))

    def pause(self, task_id: TaskId, until: datetime | None = None) -> None:
        """Pause a task; ``until``: for a while (it resumes by itself then)."""
        self._refuse_if_lost()
        self._change(self._ops.pause(task_id, self._clock.now(), until))

    def resume(self, task_id: TaskId) -> None:
        self._refuse_if_lost()
        self._change(self._ops.resume(task_id, self._clock.now()))

    def run_now(self, task_id: TaskId) -> None:
        self._refuse_if_lost()
        self._change(self._ops.run_now(task_id, self._clock.now()))

    def retry_now(self, task_id: TaskId) -> None:
        self._refuse_if_lost()
        self._change(self._ops.retry_now(task_id, self._clock.now()))

    def delete(self, task_id: TaskId) -> None:
        self._refuse_if_lost()
        if self._take_back_runs_of(task_id):
            self._change(self._ops.delete(task_id, self._clock.now()))

    def _change(self, events: list[Event]) -> None:
        self._publish(events)
        self._dispatch()

    # ------------------------------------------------------------- dispatch

    def _dispatch(
        self,
        ahead: tuple[datetime, float] | None = None,
        done: Sequence[Event] = (),
        results: dict[RunId, RunResult] | None = None,
    ) -> None:
        """Start whatever is due, as far as workers allow, then re-arm the timer.

        ``ahead``: (deadline, its monotonic time) to dispatch what is due at that
        deadline now, to start then. ``done``: the events of a finished run (and
        ``results`` its result), committed in the same transaction as the dispatch.
        """
        if self._lost is not None:  # written nowhere: the file the path named is gone
            self._publish(done, results)
            return
        dispatching = self._running and not self._stopping and self._healthy
        if not dispatching and not done:
            return
        now = self._clock.now()
        events = list(done)
        dispatched: list[RunDispatched] = []
        # Commit before acting: the runs are handed over behind a closed gate, so the
        # worker threads wake while the dispatch is committed; nothing starts until
        # the commit has succeeded and the gate opens (and not before its start time).
        gate = threading.Event()
        try:
            if dispatching:
                at, start_at = ahead or self._ahead.moment(now)
                try:
                    new = self._engine.due(at, self._pool.free)
                except StoreError as error:  # a deferred task could not be read
                    self._store_failed(error)
                    new = []
                events += new
                dispatched = [event for event in new if isinstance(event, RunDispatched)]
                for event in dispatched:
                    self._start_run(event, gate, start_at)
                if start_at is not None:
                    self._ahead_runs.update(event.run.run_id for event in dispatched)
                    events += self._make_way()
            self._repository.apply(events, now, results)
        except BaseException as error:
            # Not on disk (or not surely): nothing handed over may start, and no
            # worker may wait for a gate that never opens.
            for event in dispatched:
                self._pool.cancel(event.run.run_id)
                self._ignored_runs.add(event.run.run_id)  # never happened: not recorded
            gate.set()
            if not isinstance(error, StoreError):
                raise
            self._store_failed(error)
            self._publish(done, results)
            return
        gate.set()
        if ahead is not None and self._healthy:
            self._ahead.hold(*ahead)
        self._publish(events, results)
        if dispatching and self._healthy:
            self._timer.arm(self._engine.next_deadline())
            if self._conditions is not None:  # read the idle time when it could hold
                self._conditions.look_at_idle_in(self._engine.idle_check_in())

    def _rearm(self) -> None:
        """After tasks were read: a decoded task can move the head of the schedule."""
        if self._running and self._healthy and not self._stopping:
            self._timer.arm(self._engine.next_deadline())

    def _start_run(
        self, event: RunDispatched, gate: threading.Event, start_at: float | None
    ) -> None:
        ticket = event.run
        spec = self._engine.snapshot(ticket.task_id).spec
        self._pool.submit(
            ticket.run_id,
            spec.command,
            timeout=spec.timeout.total_seconds() if spec.timeout else None,
            extra_env={
                **({"TASKGUI_DB": self._database} if self._database else {}),
                "TASKGUI_TASK_ID": str(ticket.task_id),
                "TASKGUI_TASK_NAME": spec.name,
                "TASKGUI_ATTEMPT": str(ticket.attempt),
                RUN_MARK: run_mark(
                    self._database,
                    ticket.task_id,
                    ticket.kind.value,
                    ticket.scheduled_at,
                    ticket.attempt,
                ),
            },
            gate=gate,
            start_at=start_at,
        )

    def _make_way(self) -> list[Event]:
        """Take back a run dispatched ahead that a more urgent due task should overtake.

        A run dispatched ahead holds its worker before its time; a more urgent task
        that arrives meanwhile (added, run now) would otherwise wait for that whole
        run. If one waits for a worker, the least urgent run that has not begun is
        taken back, as if never dispatched; its worker, once free, goes through
        ``due`` again, which gives it to the most urgent task. One at a time: each
        freed worker repeats this check.
        """
        urgent = self._engine.ready_priority()
        if urgent is None or not self._ahead_runs:
            return []
        runs = self._engine.running_runs
        held = [  # withdrawable: its task exists and is as it was when dispatched
            (self._engine.snapshot(runs[run_id].task_id).spec.priority, run_id)
            for run_id in self._ahead_runs
            if self._engine.withdrawable(run_id)
        ]
        for priority, run_id in sorted(held):
            if priority >= urgent:
                break
            events = self._withdraw(run_id)
            if events:
                return events
        return []

    def _withdraw(self, run_id: RunId) -> list[Event]:
        """Take back a run whose command has not begun, in the engine and from its
        worker (whose end is then ignored); [] if it has begun or may not be."""
        if not (self._engine.withdrawable(run_id) and self._pool.withdraw(run_id)):
            return []
        self._ahead_runs.discard(run_id)
        self._ignored_runs.add(run_id)
        return self._engine.withdraw(run_id)

    @service_slot
    def _on_timer_approaching(self, target: float) -> None:
        """Dispatch the deadline's runs ahead when that cannot change who runs.

        Not when a due task already waits for a worker: then workers are the limit,
        and each one is given the best due task the moment it frees. Returning without
        re-arming lets the timer go on and fire at the deadline.
        """
        if not self._file_is_ours(companions=False):
            return
        deadline = self._engine.next_deadline()
        if deadline is None or not self._pool.free or self._engine.has_ready():
            return
        start_at = self._ahead.start_time(deadline, target)
        if start_at is not None:
            self._dispatch(ahead=(deadline, start_at))

    @service_slot
    def _on_timer_fired(self) -> None:
        if self._file_is_ours(companions=False):
            self._dispatch()

    @service_slot
    def _on_timer_clock_jumped(self, seconds: float) -> None:
        if not self._file_is_ours(companions=False):
            return
        log.warning("the wall clock jumped by %.1f s; re-planning the schedule", seconds)
        self._ahead.forget()
        self._dispatch()
        if not self._timer.armed:
            self._timer.arm(self._engine.next_deadline())

    @service_slot
    def _on_pool_run_started(self, run_id: int, pid: int) -> None:
        self._ahead_runs.discard(run_id)
        ticket = self._engine.running_runs.get(run_id)
        if ticket is None:
            return
        # Written at once: after a crash, the next start stops the run's processes by
        # this pid before it retries the run. Every moment it waits is a moment in
        # which a crash would leave the command running alongside its own retry.
        try:
            if self._lost is None:
                self._repository.record_run_pid(run_id, pid)
        except StoreError as error:
            self._store_failed(error)
        events = self._engine.started(run_id, self._clock.now())
        self._publish(events)
        self.run_started.emit(ticket)

    @service_slot
    def _on_pool_run_output(self, run_id: int, text: str) -> None:
        ticket = self._engine.running_runs.get(run_id)
        if ticket is None or run_id in self._ignored_runs:
            return
        self._output.printed(run_id, text)
        self.run_output.emit(ticket, text)

    @service_slot
    def _on_pool_run_completed(self, run_id: int, report: object) -> None:
        assert isinstance(report, RunReport)
        self._ahead_runs.discard(run_id)
        self._output.ended(run_id)
        if run_id in self._ignored_runs:  # taken back before it started anything
            self._ignored_runs.discard(run_id)
            if self._stopping:
                if not self._pool.busy:
                    self._finish_shutdown()
            else:
                self._dispatch()  # its worker is free
            return
        outcome, result = report.outcome, report.result
        if self._stopping and outcome is RunOutcome.CANCELLED:
            outcome = RunOutcome.INTERRUPTED  # stopped by shutdown, not by a person
            result = replace(result, error=f"stopped because {self._stop_reason}")
        now = self._clock.now()
        ticket = self._engine.running_runs.get(run_id)
        try:
            events = _timed_by_monotonic(
                self._engine.finished(run_id, outcome, now), report.duration
            )
        except Exception as error:
            events = self._run_end_failed(ticket, outcome, now, error)
        # One commit for the result and for what the freed worker is given next.
        self._dispatch(done=events, results={run_id: result})
        if self._stopping and not self._pool.busy:
            self._finish_shutdown()

    def _run_end_failed(
        self, ticket: RunTicket | None, outcome: RunOutcome, now: datetime, error: Exception
    ) -> list[Event]:
        """The engine failed on the end of a run (a bug, or a value that slipped past
        validation): the run is recorded as ended all the same, and its task set aside
        (kept on disk, out of the schedule from now on, reported), so that one task's
        fault neither leaves a run "running" for ever nor stops the others."""
        if ticket is None:
            raise error  # not a run the engine knew: nothing of a task's to set aside
        reason = f"handling the end of its run failed ({type(error).__name__}: {error})"
        log.debug("the engine failed on the end of run %s", ticket.run_id, exc_info=error)
        events: list[Event] = [RunFinished(ticket, outcome, now)]
        if ticket.task_id in self._engine:
            try:
                removed = self._engine.remove(ticket.task_id)
            except Exception:  # the store sets it aside below; the next start leaves it out
                log.debug("could not forget task %s", ticket.task_id, exc_info=True)
            else:
                events += [event for event in removed if not isinstance(event, TaskRemoved)]
        events.append(TaskDropped(ticket.task_id, reason, unreadable=False))
        return events

    # ------------------------------------------------------------- requests

    @service_slot
    def _on_requests_timeout(self) -> None:
        repository = self._repository
        assert isinstance(repository, SqliteRepository)
        if not self._file_is_ours(companions=True):
            return
        try:
            version = repository.data_version()
        except StoreError as error:
            self._store_failed(error)
            return
        if version != self._data_version:
            self._data_version = version
            self._perform_requests()

    def _start_checkpoints(self, path: Path) -> None:
        """Fold the WAL back into the database on a thread of its own: this thread's
        deadlines then never wait for a checkpoint's copying and fsync, and a busy
        schedule never keeps the WAL from being folded back (see wal_checkpoints.py)."""
        if self._checkpoints is None:
            self._checkpoints = BackgroundCheckpoints(lambda: WalCheckpointer(path))
            self.destroyed.connect(self._checkpoints.stop)
            self._checkpoints.start()

    def _perform_requests(self) -> None:
        repository = self._repository
        assert isinstance(repository, SqliteRepository)
        try:
            pending = repository.open_requests()
        except StoreError as failure:
            self._store_failed(failure)
            return
        for row in pending:  # each answered, whatever the row holds (see answer_request)
            now = self._clock.now()
            problem = answer_request(row, now, self._perform_request)
            try:
                repository.complete_request(row.id, problem, now)
            except StoreError as failure:
                self._store_failed(failure)
                return
        # data_version is not read again here: it changes only for *other*
        # connections' commits, so a new value now means a request filed while these
        # were performed, which the next check must still see.
        if pending:
            self._dispatch()

    def _perform_request(self, request: Request, now: datetime) -> str | None:
        """Carry out one request; return the error for its sender, or None."""
        task_id = request.task_id
        try:
            taking_back = request.op in (Op.CANCEL, Op.DELETE) and task_id is not None
            if taking_back and not self._take_back_runs_of(task_id):  # type: ignore[arg-type]
                return "the database could not be written; try again"
            events = self._ops.perform(request.op, task_id, request.payload, now)
            if request.op is Op.ADDED:
                self._repository.apply(events, now)
            self._publish(events)
        except TaskguiError as failure:
            return str(failure)
        return None

    # -------------------------------------------------------------- helpers

    def _file_is_ours(self, *, companions: bool) -> bool:
        """False (and the schedule stopped) once the path lost the open file."""
        if self._lost is not None:
            return False
        if self._file is None:
            return True
        try:
            self._file.verify_file(companions=companions)
        except DatabaseReplacedError as error:
            self._lose_store(error)
            return False
        return True

    def _refuse_if_lost(self) -> None:
        """A change after the file was lost would be written where nobody reads it."""
        if self._lost is not None:  # a fresh one each time: no traceback piles up
            raise DatabaseReplacedError(str(self._lost), self._lost.path)

    def _lose_store(self, error: DatabaseReplacedError) -> None:
        """Stop for good, and write nothing more: a write would go where nobody reads
        it, or into a log that the file now at the path would take for its own. Runs
        that end from now on are not recorded; the next start retries them."""
        self._healthy = False
        self._timer.disarm()
        self._hydration.stop()
        self._requests.stop()
        if self._checkpoints is not None:  # before the rescue copies what is open
            self._checkpoints.stop()
        self._output.stop_saving()
        kept = self._file.save_what_is_open(self._clock.now()) if self._file else ""
        message = f"{error}; {kept}. The schedule has stopped: start taskgui again"
        self._lost = DatabaseReplacedError(message, error.path)
        log.error("%s", message)
        self.error_occurred.emit(message)
        self.store_lost.emit(message)

    def _store_failed(self, error: StoreError) -> None:
        """Stop dispatching until the store works again; never raise from a slot."""
        if isinstance(error, DatabaseReplacedError) and self._lost is None:
            self._lose_store(error)  # SQLite noticed first (a file not in WAL mode)
            return
        log.error("store error: %s", error)
        self.error_occurred.emit(str(error))
        if self._lost is not None:
            return  # nothing to retry: the file is gone
        if self._healthy:
            self._healthy = False
            self._timer.disarm()
            self._hydration.stop()  # the retry loads the rest along with the rebuild
            QTimer.singleShot(STORE_RETRY_MS, self._on_store_retry)

    @service_slot
    def _on_store_retry(self) -> None:
        if self._lost is not None:
            return
        if self._pool.busy:
            QTimer.singleShot(STORE_RETRY_MS, self._on_store_retry)
            return
        # Rebuild the engine from what is committed: the truth after a failed write.
        try:
            engine = Engine(rng=self._rng)
            if self._system is not None:
                engine.conditions_changed(self._system, self._clock.now())
            recover(self._repository, engine, self._clock.now())
        except StoreError as error:
            log.error("store error: %s", error)
            self.error_occurred.emit(str(error))
            QTimer.singleShot(STORE_RETRY_MS, self._on_store_retry)
            return
        self._engine = engine
        self._ops = Operations(engine, self._repository)
        self._healthy = True
        self._ahead.forget()
        self._hydration.engine = engine
        if not self._hydration.complete():  # every task is re-sent below
            return  # the store failed again; another retry is on its way
        for snapshot in engine.snapshots():
            self.task_changed.emit(snapshot)
        self._dispatch()

    def _publish(
        self, events: Sequence[Event], results: dict[RunId, RunResult] | None = None
    ) -> None:
        for event in events:
            if isinstance(event, TaskChanged):
                self.task_changed.emit(event.task)
            elif isinstance(event, TaskAdded):
                self.task_added.emit(event.task)
            elif isinstance(event, TaskRemoved):
                self.task_removed.emit(event.task_id)
            elif isinstance(event, RunFinished):
                result = (results or {}).get(event.run.run_id, RunResult())
                self.run_finished.emit(event.run, event.outcome, result)
            elif isinstance(event, RetryScheduled):
                self.retry_scheduled.emit(event)
            elif isinstance(event, TaskExhausted):
                error = next(iter((results or {}).values()), RunResult()).error or ""
                self.task_exhausted.emit(event, error)
            elif isinstance(event, OccurrencesSkipped):
                self.occurrences_skipped.emit(event)
            elif isinstance(event, RunCancelRequested):
                self._pool.cancel(event.run.run_id)
            elif isinstance(event, TaskDropped):
                message = (
                    str(UnreadableTaskError(event.task_id, event.reason))
                    if event.unreadable
                    else f"task {event.task_id} was set aside (kept in the database, left "
                    f"out of the schedule) because {event.reason}"
                )
                log.error("%s", message)
                self.error_occurred.emit(message)
                self.task_removed.emit(event.task_id)  # a view may show it: it is gone


def _timed_by_monotonic(events: list[Event], duration: float) -> list[Event]:
    """A run's record spans its monotonic ``duration``, whatever the wall clock did.

    The history shows a run's duration as finished minus started, two wall-clock
    readings; a clock jump between them (a correction, a person setting the time)
    would show a run of seconds as three hours. When the two disagree by more than
    ``DURATION_DRIFT``, the record's end becomes its start plus the duration the
    runner measured on the monotonic clock. Only the record: the engine has already
    planned what comes next from the wall clock's now, as everything else is.
    """
    measured = timedelta(seconds=duration)
    return [
        replace(event, finished_at=event.run.dispatched_at + measured)
        if isinstance(event, RunFinished)
        # dispatched_at: when the run was released to start (see ahead.py)
        and abs(event.finished_at - event.run.dispatched_at - measured) > DURATION_DRIFT
        else event
        for event in events
    ]
