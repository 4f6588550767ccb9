"""The scheduler service: the engine, the store and the pool, driven by one timer.

It owns the engine and the repository and lives on one thread. It arms a single
``DeadlineTimer`` for the engine's earliest deadline and re-arms it whenever the head
may have changed (a task added, cancelled, finished, rescheduled); it never polls.
On each wake it asks the engine what is due, **commits** the dispatch, then lets the
worker pool start the runs. A finished run is committed (with its result) in the same
transaction as whatever its freed worker is given next, so before its task is queued
again. Requests from other processes (the CLI) arrive through the store's request
queue, read when its change feed says another process committed (``inbox.py``), which
wakes the service (``feed_watch.py``) instead of a timer.

It knows the store only by its protocol (``store.protocols.ScheduleStore``): SQLite,
memory or PostgreSQL alike, each answering for its own upkeep (WAL checkpoints on a
thread of their own, ``checkpoints.py``; the file check below).

Under a backlog, ``queue_per_worker`` runs a worker beyond the free ones wait in the
pool's queue, committed, for the next worker that finishes (``dispatch_loop.py``). When
a worker is free, a deadline's runs are dispatched ``dispatch_ahead`` before it
and start at it on their own worker thread (see ``taskgui.runtime.ahead``); until its
command starts, such a run can be taken back as if never dispatched (``take_back.py``).

What a running command prints reaches views as ``run_output`` (the tail so far, at
most twice a second while it prints; ``history`` gives it for the open run too) and
the database every few seconds (see ``live_output``).

Slots never raise: a failing store operation is reported through ``error_occurred``
and dispatching stops until the store works again; anything else is reported the same
way (``runtime.guard``), and a task the engine fails on is set aside, not the schedule.
One failure is not retried: the database path no longer naming the file that is open
(deleted or replaced, or its -wal or -shm; see ``store.file_identity``), checked with
``verify_file`` on every wake (one ``stat``) and every request check (three). Then what
the open file holds is kept, and the schedule stops for good with ``store_lost``.

After a sleep, the runs due at once meet the wake-up policies first (``wake_up.py``).
Signals: those of ``ScheduleSignals``, ``wake_asked`` (``wake_up.py``), and
    loaded(): the start's reading is done (soon after ``start``; see hydration.py):
        every task due soon is in memory, and every task once a view asked for them.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Sequence
from datetime import datetime, timedelta

from PySide6.QtCore import QObject, QTimer, Signal

from taskgui.control.operations import Operations
from taskgui.control.recovery import Recovery, recover
from taskgui.core.clock import Clock
from taskgui.core.conditions import SystemConditions
from taskgui.core.defaults import DEFAULT_WORKERS, KILL_GRACE, SHUTDOWN_GRACE
from taskgui.core.engine.engine import Engine
from taskgui.core.errors import TaskguiError
from taskgui.core.events import Event
from taskgui.core.operation import Op
from taskgui.core.status import RunRecord, TaskSnapshot
from taskgui.core.task import TaskId, TaskSpec
from taskgui.runtime.ahead import DispatchAhead
from taskgui.runtime.checkpoints import BackgroundCheckpoints
from taskgui.runtime.conditions.monitor import ConditionMonitor
from taskgui.runtime.deadline_timer import DeadlineTimer
from taskgui.runtime.feed_watch import FeedWatch
from taskgui.runtime.guard import service_slot
from taskgui.runtime.hydration import READ_AHEAD, Hydration
from taskgui.runtime.inbox import RequestInbox, next_turn
from taskgui.runtime.live_output import OUTPUT_SAVE_MS, LiveOutput
from taskgui.runtime.pool import WorkerPool
from taskgui.runtime.store_health import StoreHealth
from taskgui.runtime.take_back import TakeBack
from taskgui.runtime.view_start import ViewStart
from taskgui.runtime.wake_up import WakeUp
from taskgui.store.errors import StoreError
from taskgui.store.protocols import ScheduleStore
from taskgui.store.requests import Request
from taskgui.system.orphans import stop_orphaned_runs

log = logging.getLogger(__name__)

STORE_RETRY_MS = 5_000
# Enough for the commit and an idle worker thread's wake-up with room to spare, and
# short enough that nothing a person does in between could tell the difference.
DISPATCH_AHEAD = 0.005  # seconds


class SchedulerService(WakeUp):
    """Runs the schedule. See the module docstring."""

    loaded = Signal()
    runs_here = True  # see control.client

    def __init__(
        self,
        repository: ScheduleStore,
        clock: Clock,
        *,
        workers: int = DEFAULT_WORKERS,
        queue_per_worker: int = 0,
        kill_grace: float = KILL_GRACE,
        rng: random.Random | None = None,
        dispatch_ahead: float = DISPATCH_AHEAD,
        output_save_ms: int = OUTPUT_SAVE_MS,
        read_ahead: timedelta = READ_AHEAD,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._repository = repository
        self._health = StoreHealth(
            repository,
            clock,
            self,
            pause=self._pause_dispatching,
            retry=lambda: QTimer.singleShot(STORE_RETRY_MS, self._on_store_retry),
            halt=self._halt,
        )
        # Named in every command's environment (TASKGUI_DB), for the command to know.
        self._database = repository.location
        self._clock = clock
        self._rng = rng
        self._engine = Engine(rng=rng)
        self._ops = Operations(self._engine, repository)
        self._pool = WorkerPool(
            workers, clock.monotonic, kill_grace=kill_grace, queue_per_worker=queue_per_worker
        )
        self._pool.setParent(self)
        self._pool.runs_reported.connect(self._on_pool_runs_reported)
        self._pool.run_output.connect(self._on_pool_run_output)
        self._ahead = DispatchAhead(clock, dispatch_ahead)
        self._timer = DeadlineTimer(clock, self, lead=dispatch_ahead)
        self._timer.approaching.connect(self._on_timer_approaching)
        self._timer.fired.connect(self._on_timer_fired)
        self._timer.clock_jumped.connect(self._on_timer_clock_jumped)
        self._hydration = Hydration(
            self._engine,
            clock=clock,
            publish=self._publish,
            failed=self._health.failed,
            loaded=self.loaded.emit,
            read=self._rearm,
            ahead=read_ahead,
            parent=self,
        )
        # A view's start: the tasks read so far, the rest streamed in from a thread.
        self._view_start = ViewStart(repository, lambda: self._engine, self._hydration, self)
        self._view_start.loaded.connect(self.tasks_loaded)
        self._taken = TakeBack(self._engine, self._pool, self._commit_taken_back)
        self._output = LiveOutput(repository, save_ms=output_save_ms, parent=self)
        self._inbox_more = next_turn(self, self._on_inbox_more)  # a burst's next slice
        self._inbox = RequestInbox(
            repository,
            clock,
            # Looked up at each request, not bound now (tests wrap it).
            perform=lambda request, now: self._perform_request(request, now),  # noqa: PLW0108
            failed=self._health.failed,
            performed=self._dispatch,
            later=self._inbox_more.start,
        )
        # Woken by the change feed (or its slow safety poll), not a 250 ms timer.
        self._feed_watch = FeedWatch(repository, self._on_feed_woken, parent=self)
        self._checkpoints: BackgroundCheckpoints | None = None
        self._stopping = False
        self._stop_reason = ""
        self._running = False
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

    @property
    def feed_watch(self) -> FeedWatch:
        """What wakes the service for other processes' requests (tests, benchmarks)."""
        return self._feed_watch

    def start(self) -> Recovery:
        """Load the schedule (recovering from a crash) and start dispatching."""
        recovery = recover(self._repository, self._engine, self._clock.now())
        for run in recovery.interrupted:
            log.warning("run %s of task %s was interrupted; retrying", run.id, run.task_id)
        stop_orphaned_runs(recovery.interrupted, database=self._database)
        self._running = True
        self._hydration.start()
        self._start_checkpoints()
        self._feed_watch.start()
        self._inbox.start()
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

    def _look_at_idle(self) -> None:
        if self._conditions is not None:  # read the idle time when it could hold
            self._conditions.look_at_idle_in(self._engine.idle_check_in())

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
        self._view_start.stop()
        self._feed_watch.stop()
        self._taken.queued_runs()  # they have not started: the next start runs them
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
        self._taken.waiting_runs()
        going = self._pool.busy - len(self._taken.ignored)
        if going > 0:
            log.warning("stopping %d run(s) still going at shutdown", going)
            self._pool.cancel_all()

    def _start_checkpoints(self) -> None:
        """Fold the store's log back on a thread of its own, if it keeps one: this
        thread's deadlines then never wait for a checkpoint's copying and fsync, and
        a busy schedule never keeps the log from being folded back (wal_checkpoints)."""
        opener = self._repository.take_over_checkpoints()
        if opener is not None and self._checkpoints is None:
            self._checkpoints = BackgroundCheckpoints(opener)
            self.destroyed.connect(self._checkpoints.stop)
            self._checkpoints.start()

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

    def first_snapshot(self) -> list[TaskSnapshot]:
        """The tasks read so far; the rest follow in ``tasks_loaded`` (view_start.py)."""
        return self._view_start.first_snapshot()

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
        return self._pool.working  # a run queued for a worker has none yet

    def set_workers(self, count: int) -> None:
        self._pool.resize(count)
        self._dispatch()

    # --------------------------------------------------------- operations

    def add_task(self, spec: TaskSpec) -> TaskSpec:
        """Store and schedule a new task; returns it with its id. Raises TaskguiError."""
        self._health.refuse_if_lost()
        now = self._clock.now()
        (stored,), events = self._ops.add([spec], now)
        self._publish(events)
        self._dispatch()
        return stored

    def add_tasks(self, specs: Sequence[TaskSpec]) -> list[TaskSpec]:
        self._health.refuse_if_lost()
        now = self._clock.now()
        stored, events = self._ops.add(specs, now)
        self._publish(events)
        self._dispatch()
        return stored

    def update_task(self, spec: TaskSpec) -> None:
        self._health.refuse_if_lost()
        if self._taken.before(Op.UPDATE, spec.id):
            self._change(self._ops.update(spec, self._clock.now()))

    def cancel(self, task_id: TaskId) -> None:
        self._health.refuse_if_lost()
        if self._taken.before(Op.CANCEL, task_id):
            self._change(self._ops.cancel(task_id, self._clock.now()))

    def pause(self, task_id: TaskId, until: datetime | None = None) -> None:
        """Pause a task; ``until``: for a while (it resumes by itself then)."""
        self._health.refuse_if_lost()
        if self._taken.before(Op.PAUSE, task_id):
            self._change(self._ops.pause(task_id, self._clock.now(), until))

    def resume(self, task_id: TaskId) -> None:
        self._health.refuse_if_lost()
        self._change(self._ops.resume(task_id, self._clock.now()))

    def run_now(self, task_id: TaskId) -> None:
        self._health.refuse_if_lost()
        self._change(self._ops.run_now(task_id, self._clock.now()))

    def retry_now(self, task_id: TaskId) -> None:
        self._health.refuse_if_lost()
        self._change(self._ops.retry_now(task_id, self._clock.now()))

    def delete(self, task_id: TaskId) -> None:
        self._health.refuse_if_lost()
        if self._taken.before(Op.DELETE, task_id):
            self._change(self._ops.delete(task_id, self._clock.now()))

    def _change(self, events: list[Event]) -> None:
        self._publish(events)
        self._dispatch()

    # ------------------------------------------------------------- requests

    @service_slot
    def _on_feed_woken(self) -> None:
        if self._health.file_is_ours(companions=True):
            self._inbox.check()

    @service_slot
    def _on_inbox_more(self) -> None:  # not while stopping: the next start answers them
        if not self._stopping and self._health.file_is_ours(companions=True):
            self._inbox.perform_open()

    def _perform_request(self, request: Request, now: datetime) -> str | None:
        """Carry out one request; return the error for its sender, or None."""
        task_id = request.task_id
        try:
            if task_id is not None and not self._taken.before(request.op, task_id):
                return "the database could not be written; try again"
            events = self._ops.perform(request.op, task_id, request.payload, now)
            if request.op is Op.ADDED:
                self._repository.apply(events, now)
            self._publish(events)
        except TaskguiError as failure:
            return str(failure)
        return None

    # -------------------------------------------------------------- helpers

    def _pause_dispatching(self) -> None:
        self._timer.disarm()
        self._hydration.stop()  # the retry loads the rest along with the rebuild

    def _halt(self) -> None:
        """The store is lost: stop everything that could write to it."""
        self._timer.disarm()
        self._hydration.stop()
        self._view_start.stop()
        self._feed_watch.stop()
        if self._checkpoints is not None:
            self._checkpoints.stop()
        self._output.stop_saving()

    @service_slot
    def _on_store_retry(self) -> None:
        if self._health.lost is not None:
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
        self._taken.engine = engine
        self._health.healthy = True
        self._ahead.forget()
        self._hydration.engine = engine
        if self._hydration.everything:  # a view follows: every task is re-sent below
            if not self._hydration.complete():
                return  # the store failed again; another retry is on its way
        else:
            self._hydration.start()  # no view here: the tasks due soon, as at a start
        for snapshot in engine.snapshots(load_deferred=False):
            self.task_changed.emit(snapshot)
        self._dispatch()
