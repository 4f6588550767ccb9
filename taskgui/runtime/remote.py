"""Following a schedule that another process runs (``taskgui daemon``), or nodes share.

When the scheduler lock of a database is held and no window answers for it, the window
must not start a second scheduler; on a shared (PostgreSQL) schedule the nodes run it.
Either way the window shows the same live view from a ``RemoteScheduler``, a
``LiveScheduleClient`` as ``SchedulerService`` is (the window cannot tell them apart,
but for ``runs_here``), and behaves like the CLI:

* **Reads** come from the database, on the follower's own thread (``follow_worker``),
  never the GUI's: woken by the store's change feed (SQLite: a file watcher on the
  database and its -wal; PostgreSQL: LISTEN), with a slow safety poll, it reads what
  changed, and only that (``FollowedStore``), and this object emits it on the GUI
  thread: ``task_added`` / ``task_changed`` / ``task_removed``, ``run_finished`` for a
  run that ended, and ``retry_scheduled`` / ``task_exhausted`` for a failed one (so
  notifications work the same). A run in progress shows what it printed so far as
  ``run_output`` whenever the owner has written it (see ``runtime.live_output``).
* **Changes** are requests in the database's requests table, which the owner performs
  with ``Operations.perform`` and answers; the answer is checked on the next looks
  (faster while one is open) and a refusal, or no answer within ``ANSWER_TIMEOUT``,
  is reported through ``error_occurred``. New tasks are inserted here and announced
  with an ``added`` request, as the CLI does. On a shared schedule the composition
  root passes ``change``, the CLI's own way (``cli.shared_changes``: a request to the
  leading node, or, with none, this process leads for a moment), run on the thread.
* **History** of a task is read on the thread too: ``history`` answers from what was
  read last and asks again, and ``history_read`` says when the answer is in.

It also watches who runs it: when the owner stops (the lock let go; no node leads),
``owner_changed("")`` says nobody runs the schedule any more (and, on a file, changes
are refused until someone does). And the file: when the path no longer names the
database it has open (deleted or replaced), it stops following and says so with
``store_lost``, rather than show a schedule nobody runs. While the database cannot be
read, ``store_unreachable`` says why, and ``store_reachable`` when it can be again.

``threaded=False`` (tests, benchmarks): ``poll`` looks once on the calling thread, and
changes are made there; QtCore only.

Signals: those of ``ScheduleSignals``, and
    nodes_changed(object): the nodes of a shared schedule (a list of ``NodeInfo``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from datetime import datetime
from functools import partial
from typing import Any

from PySide6.QtCore import QObject, Signal

from taskgui.core.clock import Clock
from taskgui.core.conditions import SystemConditions
from taskgui.core.defaults import REQUEST_TIMEOUT
from taskgui.core.errors import TaskguiError, TaskNotFoundError
from taskgui.core.events import RetryScheduled, TaskExhausted
from taskgui.core.nodes import NodeInfo
from taskgui.core.operation import Op
from taskgui.core.states import TaskState
from taskgui.core.status import RunRecord, RunResult, RunTicket, TaskSnapshot
from taskgui.core.task import TaskId, TaskSpec
from taskgui.runtime.follow_reader import FollowReader, Look, verb
from taskgui.runtime.follow_worker import FollowThread, FollowWorker, Job
from taskgui.runtime.schedule_signals import ScheduleSignals
from taskgui.store.errors import StoreError
from taskgui.store.protocols import DEFAULT_HISTORY_LIMIT, FollowableStore, HolderProbe
from taskgui.store.requests import encode_spec
from taskgui.system import process_tree

log = logging.getLogger(__name__)

ANSWER_TIMEOUT = REQUEST_TIMEOUT  # as long as the CLI waits (core.defaults)
# How long a quit waits for the follower's thread (a change in flight waits as long).
STOP_WAIT_MS = int(REQUEST_TIMEOUT * 1000) + 2_000

# A change made the CLI's way on a shared schedule: (op, task id, payload).
Change = Callable[[Op, TaskId, "str | None"], object]


class ScheduleNotRunningError(TaskguiError):
    """Nobody runs the schedule, so a request would never be answered."""


# Who holds the lock, read from /proc (taskgui.system); the name here is for its callers.
describe_owner = process_tree.describe_owner


def holder_text(store: HolderProbe) -> str:
    """Who runs the schedule of ``store`` (``taskgui daemon (pid 7)``), or "" when
    nobody does: the store says which process (SQLite: its lock), /proc what it is."""
    holder = store.schedule_holder()
    return "" if holder is None else describe_owner(holder.pid)


class RemoteScheduler(ScheduleSignals):
    """A schedule run elsewhere, seen and steered through its database."""

    runs_here = False  # see control.client: another process runs it
    nodes_changed = Signal(object)
    _job_requested = Signal(object)

    def __init__(
        self,
        repository: FollowableStore,
        clock: Clock,
        *,
        owner: Callable[[], str] | None = None,
        answer_timeout: float = ANSWER_TIMEOUT,
        change: Change | None = None,
        nodes: Callable[[], Sequence[NodeInfo]] | None = None,
        safety_ms: int | None = None,
        threaded: bool = True,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._threaded = threaded
        self._repository = repository
        self._clock = clock
        self._change = change
        self._safety_ms = safety_ms
        self._reader = FollowReader(
            repository,
            clock,
            owner=owner or (lambda: holder_text(repository)),
            answer_timeout=answer_timeout,
            nodes=nodes,
        )
        self._tasks: dict[TaskId, TaskSnapshot] = {}
        self._last_runs: dict[TaskId, RunRecord] = {}
        self._histories: dict[TaskId, tuple[list[RunRecord], bool]] = {}  # (runs, fresh)
        self._pending = 0
        self._follow: FollowThread | None = None
        self._lost = False
        self.owner = ""
        self.nodes: list[NodeInfo] | None = None  # a shared schedule's, as last read

    # ----------------------------------------------------------------- life

    def conditions_now(self) -> SystemConditions | None:
        """Not known here: the process that runs the schedule reads its own machine."""
        return None

    def start(self) -> None:
        """Read the schedule as it is, then follow it on a thread. Raises StoreError."""
        self._last_runs = self._repository.last_runs()
        first = self._reader.first()
        self.owner = first.owner
        self._tasks = {snapshot.id: snapshot for snapshot in first.changed}
        self.nodes = None if first.nodes is None else list(first.nodes)
        if not self._threaded:  # a test or a benchmark looks with ``poll``
            return
        worker = FollowWorker(self._reader, safety_ms=self._safety_ms)
        worker.looked.connect(self._on_worker_looked)
        worker.answered.connect(self._on_worker_answered)
        worker.failed.connect(self.error_occurred)
        worker.unreachable.connect(self.store_unreachable)  # retried by the worker
        worker.recovered.connect(self.store_reachable)
        self._job_requested.connect(worker.run_job)
        self._follow = FollowThread(worker)
        self._follow.start()

    def shutdown(self, grace: float = 0.0, reason: str = "") -> None:
        """Stop following. The schedule itself runs on in its own process (so neither
        a grace nor a reason applies: no run of it is stopped)."""
        follow, self._follow = self._follow, None
        if follow is not None and not follow.stop(STOP_WAIT_MS):
            log.warning("the follower's thread did not stop in time")
            self._stuck = follow  # a running QThread must never be destroyed
        self.stopped.emit()

    # ---------------------------------------------------------------- reads

    def snapshot(self) -> list[TaskSnapshot]:
        return list(self._tasks.values())

    def first_snapshot(self) -> list[TaskSnapshot]:
        return self.snapshot()  # every one is at hand: none follows in tasks_loaded

    def task(self, task_id: TaskId) -> TaskSnapshot:
        snapshot = self._tasks.get(task_id)
        if snapshot is None:
            raise TaskNotFoundError(task_id)
        return snapshot

    def history(self, task_id: TaskId, limit: int = DEFAULT_HISTORY_LIMIT) -> list[RunRecord]:
        """The task's runs. While following, the history window's read (the default
        ``limit``) answers from the last read and asks again (``history_read`` when
        in); any other (an export's every run) waits for the follower's answer."""
        if self._follow is None:
            return self._reader.history(task_id, limit)
        if limit != DEFAULT_HISTORY_LIMIT:
            every: list[RunRecord] = self._wait_for(lambda r: r.history(task_id, limit))
            return every
        runs, fresh = self._histories.get(task_id, ([], False))
        if fresh:
            self._histories[task_id] = (runs, False)  # the next look asks again
            return runs
        self._run(
            lambda reader: reader.history(task_id, limit),
            lambda answer: self._on_history_read(task_id, answer),
        )
        return runs

    def last_runs(self) -> dict[TaskId, RunRecord]:
        return dict(self._last_runs)

    @property
    def workers(self) -> int:
        """A shared schedule's answering nodes' pools in all; else 0: not stored, unknown."""
        return sum(node.workers for node in self.nodes or () if node.alive)

    @property
    def busy_workers(self) -> int:
        return sum(snapshot.status.running for snapshot in self._tasks.values())

    def running_task_names(self) -> list[str]:
        """The tasks the owner runs now, as last read."""
        return [s.spec.name for s in self._tasks.values() if s.status.running]

    @property
    def pending_requests(self) -> int:
        return self._pending

    def set_workers(self, count: int) -> None:
        raise TaskguiError(
            "the worker count of a schedule run by another process is set when it starts "
            "(taskgui daemon --workers N)"
        )

    # ---------------------------------------------------------- operations

    def add_task(self, spec: TaskSpec) -> TaskSpec:
        """Store the task, then ask the owner to schedule it (as the CLI does). While
        following, the stored task (with its id) arrives as ``task_added``."""
        stored = self.add_tasks([spec])
        return stored[0] if stored else spec

    def add_tasks(self, specs: Sequence[TaskSpec]) -> list[TaskSpec]:
        """Store the tasks in one transaction, then ask the owner to schedule each (a
        node of a shared schedule hears of them by NOTIFY, as from the CLI)."""
        announce = self._change is None and bool(self.owner)
        specs = list(specs)
        added = self._run(lambda reader: reader.add(specs, announce), partial(self._added, specs))
        return [snapshot.spec for snapshot in added] if isinstance(added, list) else specs

    def update_task(self, spec: TaskSpec) -> None:
        self._request(Op.UPDATE, spec.id, encode_spec(spec))

    def cancel(self, task_id: TaskId) -> None:
        self._request(Op.CANCEL, task_id)

    def pause(self, task_id: TaskId, until: datetime | None = None) -> None:
        self._request(Op.PAUSE, task_id, None if until is None else until.isoformat())

    def resume(self, task_id: TaskId) -> None:
        self._request(Op.RESUME, task_id)

    def run_now(self, task_id: TaskId) -> None:
        self._request(Op.RUN_NOW, task_id)

    def retry_now(self, task_id: TaskId) -> None:
        self._request(Op.RETRY_NOW, task_id)

    def delete(self, task_id: TaskId) -> None:
        self._request(Op.DELETE, task_id)

    def _request(self, op: Op, task_id: TaskId, payload: str | None = None) -> None:
        name = self.task(task_id).spec.name
        change = self._change
        if change is not None:
            self._run(
                lambda _reader: change(op, task_id, payload),
                lambda answer: self._on_changed(op, name, answer),
            )
            return
        if not self.owner:
            raise ScheduleNotRunningError(
                "no process runs this schedule now; start taskgui again (or taskgui daemon) "
                "to change it"
            )
        self._run(lambda reader: reader.submit(op, task_id, name, payload), self._on_submitted)

    def _run(self, work: Callable[[FollowReader], Any], done: Callable[[Any], None]) -> Any:
        """``work`` on the follower's thread, then ``done`` with its result here; before
        ``start``, both at once on this thread (and the result returned)."""
        if self._follow is not None:
            self._job_requested.emit(Job(work, done))
            return None
        try:
            result = work(self._reader)
        except (TaskguiError, StoreError) as error:
            result = error
        self._reader.changed_here()
        done(result)
        if isinstance(result, TaskguiError | StoreError):
            raise result
        return result

    def _wait_for(self, work: Callable[[FollowReader], Any]) -> Any:
        """``work``'s result from the follower's thread, waiting for it here."""
        answered = threading.Event()
        box: list[Any] = []

        def record(reader: FollowReader) -> Any:
            try:
                box.append(work(reader))
            finally:
                answered.set()

        self._job_requested.emit(Job(record, lambda _result: None))
        if not answered.wait(STOP_WAIT_MS / 1000) or not box:
            raise StoreError("the database did not answer in time")
        return box[0]

    # ------------------------------------------------------------- answers

    def _on_worker_answered(self, job: Job, result: object) -> None:
        try:
            job.done(result)
        except Exception:  # a slot must never raise into Qt
            log.exception("applying a change's answer failed")

    def _added(self, asked: Sequence[TaskSpec], added: object) -> None:
        if isinstance(added, Exception):
            self.error_occurred.emit(f"Could not add the task: {added}")
            return
        assert isinstance(added, list)
        for snapshot in added:
            if snapshot.id not in self._tasks:
                self._tasks[snapshot.id] = snapshot
                self.task_added.emit(snapshot)
        self._pending = self._reader.pending
        self.tasks_stored.emit(list(zip(asked, added, strict=True)))  # in the order asked

    def _on_submitted(self, answer: object) -> None:
        if isinstance(answer, Exception):
            self.error_occurred.emit(str(answer))
        self._pending += 1

    def _on_changed(self, op: Op, name: str, answer: object) -> None:
        if isinstance(answer, Exception):
            self.error_occurred.emit(f"Could not {verb(op)} “{name}”: {answer}")

    def _on_history_read(self, task_id: TaskId, answer: object) -> None:
        if isinstance(answer, Exception):
            self.error_occurred.emit(f"Could not read the history: {answer}")
            return
        assert isinstance(answer, list)
        self._histories[task_id] = (answer, True)
        self.history_read.emit(task_id)

    # ------------------------------------------------------------- looking

    def poll(self) -> None:
        """Look once now, on this thread (``threaded=False``: tests and benchmarks)."""
        try:
            self._apply(self._reader.look())
        except StoreError as error:
            self.error_occurred.emit(str(error))

    def _on_worker_looked(self, look: Look) -> None:
        try:
            self._apply(look)
        except Exception:  # a slot must never raise into Qt
            log.exception("following the schedule failed")

    def _apply(self, look: Look) -> None:
        """Emit what one look found, in the order a view needs it."""
        if self._lost:
            return
        if look.lost:
            self._lost = True
            message = f"{look.lost}; this window no longer follows it: start taskgui again"
            log.error("%s", message)
            self.error_occurred.emit(message)
            self.store_lost.emit(message)
            return
        if look.owner != self.owner:
            self.owner = look.owner
            self.owner_changed.emit(look.owner)
        tasks = self._tasks
        for task_id in look.removed:
            if tasks.pop(task_id, None) is not None:
                self._last_runs.pop(task_id, None)
                self.task_removed.emit(task_id)
        for snapshot in look.changed:
            before = tasks.get(snapshot.id)
            tasks[snapshot.id] = snapshot
            if before is None:
                self.task_added.emit(snapshot)
            elif before != snapshot:
                self.task_changed.emit(snapshot)
        for record in look.ended:
            self._last_runs[record.task_id] = record
            self._histories.pop(record.task_id, None)
            current = tasks.get(record.task_id)
            if current is not None:
                self._announce_run(current, record)
        for record, output in look.output.values():
            self.run_output.emit(_ticket_of(record), output)
        for problem in look.problems:
            self.error_occurred.emit(problem)
        self._pending = look.pending
        if look.nodes is not None and look.nodes != self.nodes:
            self.nodes = list(look.nodes)
            self.nodes_changed.emit(self.nodes)

    def _announce_run(self, snapshot: TaskSnapshot, record: RunRecord) -> None:
        """A run that ended since the last poll: say so, and what its failure means."""
        outcome = record.outcome
        if outcome is None:
            return
        ticket = _ticket_of(record)
        result = RunResult(exit_code=record.exit_code, error=record.error, output=record.output)
        self.run_finished.emit(ticket, outcome, result)
        if not outcome.is_failure:
            return
        spec = snapshot.spec
        status = snapshot.status
        if snapshot.state is TaskState.RETRYING and status.next_run_at is not None:
            finished = record.finished_at or status.next_run_at
            self.retry_scheduled.emit(
                RetryScheduled(
                    task_id=spec.id,
                    attempt=status.slot_attempt,
                    max_attempts=spec.max_attempts,
                    run_at=status.next_run_at,
                    delay=status.next_run_at - finished,
                )
            )
        elif record.attempt >= spec.max_attempts or not spec.retry.retries:
            self.task_exhausted.emit(
                TaskExhausted(
                    task_id=spec.id, name=spec.name, attempts=record.attempt, outcome=outcome
                ),
                record.error or "",
            )


def _ticket_of(record: RunRecord) -> RunTicket:
    """The run a history row is about, as the signals name runs (the row's id for the
    run id: the owner's own run ids never leave it)."""
    return RunTicket(
        run_id=record.id,
        task_id=record.task_id,
        attempt=record.attempt,
        kind=record.kind,
        scheduled_at=record.scheduled_at,
        dispatched_at=record.started_at or record.scheduled_at,
    )
