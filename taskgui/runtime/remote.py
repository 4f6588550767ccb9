"""Following a schedule that another process runs (``taskgui daemon``).

When the scheduler lock of a database is held and no window answers for it, the window
must not start a second scheduler. It shows the same live view from a
``RemoteScheduler``, a ``LiveScheduleClient`` as ``SchedulerService`` is (the window
cannot tell them apart, but for ``runs_here``), and behaves like the CLI:

* **Reads** come from the database. Every ``POLL_MS`` it asks the store's change feed
  (SQLite: ``PRAGMA data_version``, which changes only when another connection
  commits); then it reads what changed, and only that (``FollowedStore``: the rows
  that differ from the ones it saw are decoded, and of the runs only each task's
  latest finished id is read until one is new), and emits it:
  ``task_added`` / ``task_changed`` / ``task_removed``,
  ``run_finished`` for a run that ended, and ``retry_scheduled`` / ``task_exhausted``
  for a failed one (so notifications work the same). A run in progress shows what it
  printed so far as ``run_output`` whenever the owner has written it (every few
  seconds, see ``runtime.live_output``).
* **Changes** are requests in the database's requests table, which the owner performs
  with ``Operations.perform`` and answers. A request returns at once; the answer is
  checked on the next polls (faster while one is open) and a refusal, or no answer
  within ``ANSWER_TIMEOUT``, is reported through ``error_occurred``. New tasks are
  inserted here and announced with an ``added`` request, as the CLI does.

It also watches the lock: when the owner stops, ``owner_changed("")`` says nobody runs
the schedule any more (and changes are refused until someone does). And the file: when
the path no longer names the database it has open (deleted or replaced), it stops
following and says so with ``store_lost``, rather than show a schedule nobody runs.

QtCore only; the window sees it through the same signals as the real service.

Signals: those of ``ScheduleSignals`` (``owner_changed`` among them).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from PySide6.QtCore import QObject, QTimer

from taskgui.core.clock import Clock
from taskgui.core.conditions import SystemConditions
from taskgui.core.defaults import REQUEST_TIMEOUT
from taskgui.core.errors import TaskguiError, TaskNotFoundError
from taskgui.core.events import RetryScheduled, TaskExhausted
from taskgui.core.operation import Op
from taskgui.core.states import TaskState
from taskgui.core.status import RunRecord, RunResult, RunTicket, TaskSnapshot
from taskgui.core.task import TaskId, TaskSpec
from taskgui.runtime.schedule_signals import ScheduleSignals
from taskgui.store.errors import DatabaseReplacedError, StoreError
from taskgui.store.protocols import FollowableStore, HolderProbe
from taskgui.store.requests import encode_spec
from taskgui.system import process_tree

log = logging.getLogger(__name__)

POLL_MS = 500
FAST_POLL_MS = 100  # while a request waits for its answer
ANSWER_TIMEOUT = REQUEST_TIMEOUT  # as long as the CLI waits (core.defaults)

_VERBS = {
    Op.ADDED: "schedule",
    Op.UPDATE: "change",
    Op.CANCEL: "cancel",
    Op.PAUSE: "pause",
    Op.RESUME: "resume",
    Op.RUN_NOW: "run",
    Op.RETRY_NOW: "retry",
    Op.DELETE: "delete",
}


class ScheduleNotRunningError(TaskguiError):
    """Nobody runs the schedule, so a request would never be answered."""


# Who holds the lock, read from /proc: it lives with the other process helpers in
# taskgui.system.process_tree, and is named here for the callers that know it here.
describe_owner = process_tree.describe_owner


def holder_text(store: HolderProbe) -> str:
    """Who runs the schedule of ``store`` (``taskgui daemon (pid 7)``), or "" when
    nobody does: the store says which process (SQLite: its lock), /proc what it is."""
    holder = store.schedule_holder()
    return "" if holder is None else describe_owner(holder.pid)


@dataclass(frozen=True, slots=True)
class _Request:
    op: Op
    name: str
    deadline: float  # monotonic


class RemoteScheduler(ScheduleSignals):
    """A schedule run elsewhere, seen and steered through its database."""

    runs_here = False  # see control.client: another process runs it

    def __init__(
        self,
        repository: FollowableStore,
        clock: Clock,
        *,
        owner: Callable[[], str] | None = None,
        poll_ms: int = POLL_MS,
        answer_timeout: float = ANSWER_TIMEOUT,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._repository = repository
        self._clock = clock
        self._owner_of = owner or (lambda: holder_text(repository))
        self._answer_timeout = answer_timeout
        self._poll_ms = poll_ms
        self._tasks: dict[TaskId, TaskSnapshot] = {}
        self._marks: Mapping[TaskId, object] = {}  # what the store's rows were
        self._last: dict[TaskId, int] = {}  # each task's latest finished run id
        self._printed: dict[int, str] = {}  # open run (history id) -> output seen so far
        self._pending: dict[int, _Request] = {}
        self._last_error = ""
        self.owner = ""
        self._timer = QTimer(self)
        self._timer.setInterval(poll_ms)
        self._timer.timeout.connect(self._on_timer_timeout)

    # ----------------------------------------------------------------- life

    def conditions_now(self) -> SystemConditions | None:
        """Not known here: the process that runs the schedule reads its own machine."""
        return None

    def start(self) -> None:
        """Read the schedule as it is and start following it. Raises StoreError."""
        self.owner = self._owner_of()
        self._repository.changed()  # what is read next is news from here on
        changes = self._repository.task_changes({})
        self._marks = changes.marks
        self._tasks = {snapshot.id: snapshot for snapshot in changes.changed}
        self._last = self._repository.last_run_ids()
        self._timer.start()

    def shutdown(self, grace: float = 0.0, reason: str = "") -> None:
        """Stop following. The schedule itself runs on in its own process (so neither
        a grace nor a reason applies: no run of it is stopped)."""
        self._timer.stop()
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

    def history(self, task_id: TaskId, limit: int = 100) -> list[RunRecord]:
        return self._repository.runs(task_id, limit)

    def last_runs(self) -> dict[TaskId, RunRecord]:
        return self._repository.last_runs()

    @property
    def workers(self) -> int:
        """Unknown here: the owner's pool size is not stored. 0 says so."""
        return 0

    @property
    def busy_workers(self) -> int:
        return sum(snapshot.status.running for snapshot in self._tasks.values())

    def running_task_names(self) -> list[str]:
        """The tasks the owner runs now, as last read."""
        return [s.spec.name for s in self._tasks.values() if s.status.running]

    @property
    def pending_requests(self) -> int:
        return len(self._pending)

    def set_workers(self, count: int) -> None:
        raise TaskguiError(
            "the worker count of a schedule run by another process is set when it starts "
            "(taskgui daemon --workers N)"
        )

    # ---------------------------------------------------------- operations

    def add_task(self, spec: TaskSpec) -> TaskSpec:
        """Store the task, then ask the owner to schedule it (as the CLI does)."""
        now = self._clock.now()
        stored = self._repository.add_tasks([spec], now)[0]
        if self._owner_of():
            self._submit(Op.ADDED, stored.id, stored.name)
        snapshot = self._repository.get(stored.id)
        self._tasks[stored.id] = snapshot
        self.task_added.emit(snapshot)
        return stored

    def add_tasks(self, specs: Sequence[TaskSpec]) -> list[TaskSpec]:
        """Store the tasks in one transaction, then ask the owner to schedule each."""
        stored = self._repository.add_tasks(specs, self._clock.now()) if specs else []
        owned = bool(self._owner_of())
        for spec in stored:
            if owned:
                self._submit(Op.ADDED, spec.id, spec.name)
            snapshot = self._repository.get(spec.id)
            self._tasks[spec.id] = snapshot
            self.task_added.emit(snapshot)
        return stored

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
        if not self.owner:
            raise ScheduleNotRunningError(
                "no process runs this schedule now; start taskgui again (or taskgui daemon) "
                "to change it"
            )
        self._submit(op, task_id, name, payload)

    def _submit(self, op: Op, task_id: TaskId, name: str, payload: str | None = None) -> None:
        request_id = self._repository.submit_request(op, task_id, payload, self._clock.now())
        deadline = self._clock.monotonic() + self._answer_timeout
        self._pending[request_id] = _Request(op, name, deadline)
        self._timer.setInterval(FAST_POLL_MS)

    # ------------------------------------------------------------- polling

    def poll(self) -> None:
        """Check the owner, the database and open requests now (the timer's work)."""
        owner = self._owner_of()
        if owner != self.owner:
            self.owner = owner
            self.owner_changed.emit(owner)
        if self._repository.changed():
            self._reload()
            self._follow_output()
        if self._pending:
            self._check_answers()
        if not self._pending:
            self._timer.setInterval(self._poll_ms)

    def _on_timer_timeout(self) -> None:
        try:
            self._repository.verify_file()
        except DatabaseReplacedError as error:
            self._timer.stop()
            message = f"{error}; this window no longer follows it: start taskgui again"
            log.error("%s", message)
            self.error_occurred.emit(message)
            self.store_lost.emit(message)
            return
        try:
            self.poll()
            self._last_error = ""
        except StoreError as error:
            message = str(error)
            if message != self._last_error:  # once, not twice a second
                self._last_error = message
                log.error("following the schedule: %s", message)
                self.error_occurred.emit(message)
        except Exception:
            log.exception("following the schedule failed")

    def _reload(self) -> None:
        """Emit what changed since the last look, having read only that."""
        changes = self._repository.task_changes(self._marks)
        self._marks = changes.marks
        tasks = self._tasks
        # Not only changes.removed: a task this window added may be gone before any
        # look at the store saw it.
        for task_id in [task_id for task_id in tasks if task_id not in changes.marks]:
            del tasks[task_id]
            self._last.pop(task_id, None)
            self.task_removed.emit(task_id)
        for snapshot in changes.changed:
            before = tasks.get(snapshot.id)
            tasks[snapshot.id] = snapshot
            if before is None:
                self.task_added.emit(snapshot)
            elif before != snapshot:
                self.task_changed.emit(snapshot)
        latest = self._repository.last_run_ids()
        ended = [run_id for task_id, run_id in latest.items() if self._last.get(task_id) != run_id]
        self._last = latest
        if not ended:
            return
        for record in self._repository.runs_by_id(ended):
            current = tasks.get(record.task_id)
            if current is not None:
                self._announce_run(current, record)

    def _follow_output(self) -> None:
        """Runs in progress whose output so far the owner wrote since the last look."""
        printed: dict[int, str] = {}
        for record in self._repository.open_runs():
            printed[record.id] = record.output
            if record.output and self._printed.get(record.id) != record.output:
                self.run_output.emit(_ticket_of(record), record.output)
        self._printed = printed

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

    def _check_answers(self) -> None:
        now = self._clock.monotonic()
        for request_id, request in list(self._pending.items()):
            done, error = self._repository.request_outcome(request_id)
            verb = _VERBS.get(request.op, request.op.value)
            if done:
                del self._pending[request_id]
                if error:
                    self.error_occurred.emit(f"Could not {verb} “{request.name}”: {error}")
            elif now >= request.deadline:
                del self._pending[request_id]
                self.error_occurred.emit(
                    f"{self.owner or 'The scheduler'} did not answer the request to {verb} "
                    f"“{request.name}”; it stays queued and may still be carried out"
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
