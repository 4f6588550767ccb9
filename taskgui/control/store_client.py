"""Changing a schedule from a process that does not run it: here, or by request.

A change must reach whoever runs the schedule, so the two never disagree about a
task. When nobody runs it, this process takes the scheduler lock, recovers the
schedule as a start would (runs left open become interrupted, their orphaned
processes are stopped) and performs the change here through ``Operations`` (engine
decides, store commits). When another process holds the lock (a daemon, a window),
the change is filed in the store's request queue and this process waits for that
one to perform and answer it. Written once, for ``taskgui pause`` and friends and
for ``taskgui import --replace`` alike.

New tasks are inserted here in any case and a running scheduler is told of each
("added" is idempotent): insert first, look at the lock second, so a scheduler that
starts in between loads the rows, and one already running gets the requests.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, TypeVar

from taskgui.control.operations import Operations
from taskgui.control.recovery import recover
from taskgui.core import defaults
from taskgui.core.clock import Clock
from taskgui.core.conditions import SystemConditions
from taskgui.core.engine.engine import Engine
from taskgui.core.errors import TaskguiError
from taskgui.core.operation import Op
from taskgui.core.status import TaskSnapshot
from taskgui.core.task import TaskId, TaskSpec
from taskgui.store.errors import SchedulerAlreadyRunningError
from taskgui.store.protocols import ScheduleStore
from taskgui.store.requests import ADDED_PER_REQUEST, added_ids_payload, encode_spec
from taskgui.system.orphans import stop_orphaned_runs

T = TypeVar("T")

REQUEST_TIMEOUT = defaults.REQUEST_TIMEOUT  # seconds to wait for the answer to a request
REQUEST_POLL = 0.02  # seconds between looks at it


class ScheduleLock(Protocol):
    """The one-scheduler-per-store lock (``store.sqlite.lock.SchedulerLock``)."""

    def acquire(self) -> None:
        """Take it; SchedulerAlreadyRunningError when another process holds it."""
        ...

    def release(self) -> None: ...


class RequestFailedError(TaskguiError):
    """The process running the schedule refused a request, or did not answer it."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StoreClient:
    """A ``ScheduleClient`` over a store, for a process that does not run the schedule.

    ``running`` says whether another process runs the schedule now (its lock is
    held); ``holder`` names it for a message ("process 1234"); ``place`` names the
    schedule ("/home/me/tasks.sqlite3"). ``sleep`` waits between looks at an answer.
    """

    store: ScheduleStore
    lock: ScheduleLock
    clock: Clock
    running: Callable[[], bool]
    holder: Callable[[], str]
    place: str
    sleep: Callable[[float], None]
    timeout: float = REQUEST_TIMEOUT
    poll: float = REQUEST_POLL
    # How this process picks the schedule up under the lock: by default as a start
    # would (``recover``); a shared schedule carries other nodes' runs on instead.
    recovering: Callable[[Engine, datetime], None] | None = None

    @property
    def runs_here(self) -> bool:
        """True when nobody else runs it: a change is then performed in this process."""
        return not self.running()

    def task(self, task_id: TaskId) -> TaskSnapshot:
        return self.store.get(task_id)

    # --------------------------------------------------------------- adding

    def add_task(self, spec: TaskSpec) -> TaskSpec:
        return self.add_tasks([spec])[0]

    def add_tasks(self, specs: Sequence[TaskSpec]) -> list[TaskSpec]:
        """Insert (one transaction), then tell a running scheduler of each."""
        now = self.clock.now()
        stored = self.store.add_tasks(specs, now) if specs else []
        if stored and self.running():
            self.announce(stored)
        return stored

    def announce(self, stored: Sequence[TaskSpec]) -> None:
        """Ask the process running the schedule to schedule tasks inserted here: one
        task by its id, many in requests of ``ADDED_PER_REQUEST`` ids each."""
        now = self.clock.now()
        if len(stored) == 1:
            self.store.submit_request(Op.ADDED, stored[0].id, None, now)
            return
        ids = [spec.id for spec in stored]
        chunks = [ids[at : at + ADDED_PER_REQUEST] for at in range(0, len(ids), ADDED_PER_REQUEST)]
        first = self.store.submit_request(Op.ADDED, None, added_ids_payload(chunks[0]), now)
        if self._refused_as_naming_no_task(first):
            # A scheduler from before batched notices (a daemon left running through an
            # upgrade) refuses them: it is told of each task on its own, as it was.
            for task_id in ids:
                self.store.submit_request(Op.ADDED, task_id, None, now)
            return
        for chunk in chunks[1:]:
            self.store.submit_request(Op.ADDED, None, added_ids_payload(chunk), now)

    def _refused_as_naming_no_task(self, request_id: int) -> bool:
        """Whether the scheduler answered ``request_id`` "names no task" within the
        timeout (no answer by then: a busy one; the notices wait for it, never expiring)."""
        answer = self._answer(request_id)
        return answer is not None and answer[1] is not None and "names no task" in answer[1]

    def _answer(self, request_id: int) -> tuple[bool, str | None] | None:
        """The request's outcome once answered, waiting up to ``timeout``; None if it
        was not answered by then."""
        deadline = self.clock.monotonic() + self.timeout
        while True:
            outcome = self.store.request_outcome(request_id)
            if outcome[0]:
                return outcome
            if self.clock.monotonic() >= deadline:
                return None
            self.sleep(self.poll)

    # -------------------------------------------------------------- changes

    def update_task(self, spec: TaskSpec) -> None:
        self.change(Op.UPDATE, spec.id, encode_spec(spec))

    def cancel(self, task_id: TaskId) -> None:
        self.change(Op.CANCEL, task_id)

    def pause(self, task_id: TaskId, until: datetime | None = None) -> None:
        self.change(Op.PAUSE, task_id, None if until is None else until.isoformat())

    def resume(self, task_id: TaskId) -> None:
        self.change(Op.RESUME, task_id)

    def run_now(self, task_id: TaskId) -> None:
        self.change(Op.RUN_NOW, task_id)

    def retry_now(self, task_id: TaskId) -> None:
        self.change(Op.RETRY_NOW, task_id)

    def delete(self, task_id: TaskId) -> None:
        self.change(Op.DELETE, task_id)

    def conditions_now(self) -> SystemConditions | None:
        return None  # a command line does not read the machine for conditions

    def change(self, op: Op, task_id: TaskId, payload: str | None = None) -> bool:
        """Perform ``op`` here or have it performed; True if it was done here."""

        def here(operations: Operations, now: datetime) -> bool:
            operations.perform(op, task_id, payload, now)
            return True

        def elsewhere() -> bool:
            self.request(op, task_id, payload)
            return False

        return self.here_or_elsewhere(here=here, elsewhere=elsewhere)

    def here_or_elsewhere(
        self,
        *,
        here: Callable[[Operations, datetime], T],
        elsewhere: Callable[[], T],
    ) -> T:
        """Under the lock: recover, then ``here(operations, now)``. If another process
        holds the lock: ``elsewhere()`` (which files requests with ``request``)."""
        try:
            self.lock.acquire()
        except SchedulerAlreadyRunningError:
            return elsewhere()
        try:
            engine = Engine()
            now = self.clock.now()
            if self.recovering is not None:
                self.recovering(engine, now)
            else:
                recovery = recover(self.store, engine, now)
                stop_orphaned_runs(recovery.interrupted, database=self.store.location)
            return here(Operations(engine, self.store), now)
        finally:
            self.lock.release()

    def request(self, op: Op, task_id: TaskId, payload: str | None = None) -> None:
        """File ``op`` for the process running the schedule and wait for its answer;
        RequestFailedError when it refuses or does not answer within ``timeout``."""
        answer = self._answer(self.store.submit_request(op, task_id, payload, self.clock.now()))
        if answer is None:
            raise RequestFailedError(
                f"the scheduler running {self.place} ({self.holder()}) did not answer "
                f"within {self.timeout:g}s; the request stays queued and may still be "
                f"carried out (check with 'taskgui show {task_id}'), or restart that "
                "process"
            )
        if answer[1]:
            raise RequestFailedError(answer[1])
