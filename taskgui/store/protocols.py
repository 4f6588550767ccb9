"""The store's contracts: what the scheduler and its clients need from storage.

Three protocols, one per job, and ``ScheduleStore`` for a backend that offers all
three (SQLite and memory today; PostgreSQL beside them):

* ``TaskRepository``: task definitions, their scheduling state and run history.
* ``RequestQueue``: requests from other processes (the CLI, a second window) to the
  one process that runs the schedule, and their answers.
* ``ChangeFeed``: "another process changed something, look again", so nobody polls
  the tasks themselves: SQLite's ``PRAGMA data_version``, PostgreSQL's LISTEN/NOTIFY.

Code above the store knows only these protocols (never a backend's class), and one
contract suite runs against every backend, so they keep each other honest.

The scheduler writes through ``apply``: it hands over the engine's events, and the
repository persists them in one transaction *before* the scheduler acts on them
(commit before acting): a dispatched run is on disk before its process starts, and a
run's result is on disk before its task is queued again.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from taskgui.core.engine.deferred import DeferredTasks
from taskgui.core.errors import InvalidTaskError
from taskgui.core.events import Event
from taskgui.core.output_cap import OUTPUT_CAP_BYTES, cap_text
from taskgui.core.states import TaskState, WaitReason
from taskgui.core.status import RunId, RunRecord, RunResult, TaskSnapshot
from taskgui.core.task import TaskId, TaskSpec
from taskgui.store.requests import RequestRow

DEFAULT_HISTORY_LIMIT = 100
# Said of every run found open at a start, whether its task has an attempt left or not
# (the task's state says which): "it will be retried" was written beside "gave up".
INTERRUPTED_ERROR = "taskgui stopped while this ran (it was killed, crashed or lost power)"
# A run queued for a worker (RunDispatched.queued) that taskgui stopped before it
# started: recovery dispatches it again as a new attempt (control.recovery).
NEVER_STARTED_ERROR = "taskgui stopped before this run started; it runs again"


@dataclass(frozen=True, slots=True)
class QuarantinedTask:
    """A stored task that could not be decoded; kept on disk, left out of the schedule."""

    task_id: TaskId
    error: str


@dataclass(frozen=True, slots=True)
class LoadResult:
    tasks: list[TaskSnapshot]
    quarantined: list[QuarantinedTask]


@dataclass(frozen=True, slots=True)
class StartLoad:
    """What a scheduler starts from: some tasks whole, the rest deferred.

    ``tasks`` always holds the tasks stored as running (loading sends them to their
    retry policy); a store that can read the rest more cheaply later hands them over
    as ``deferred`` (see ``taskgui.core.engine.deferred``), else they are in ``tasks`` too.
    ``quarantined`` is what was set aside so far; deferred rows are judged when read.
    """

    tasks: list[TaskSnapshot]
    deferred: DeferredTasks | None
    quarantined: list[QuarantinedTask]


class TaskRepository(Protocol):
    """Storage of task definitions, their scheduling state and their run history."""

    # How many finished runs each task keeps, and as many records of missed occurrences.
    history_limit: int

    def add_tasks(self, specs: Sequence[TaskSpec], now: datetime) -> list[TaskSpec]:
        """Store new tasks with their initial status in one transaction; return them
        with their ids. All or nothing."""
        ...

    def apply(
        self,
        events: Sequence[Event],
        now: datetime,
        results: Mapping[RunId, RunResult] | None = None,
        pids: Mapping[RunId, int] | None = None,
    ) -> None:
        """Persist engine events in one transaction. ``TaskAdded`` is ignored (stored by
        ``add_tasks``); ``results`` carries what the runner saw of finished runs;
        ``pids`` which process runs each open run (as ``record_run_pid``, written
        first, in the same transaction: the scheduler's group commit)."""
        ...

    def load(self, now: datetime) -> LoadResult:
        """Every decodable task; rows that cannot be decoded are quarantined (at ``now``)."""
        ...

    def load_for_start(self, now: datetime) -> StartLoad:
        """What ``Engine.load`` needs to start scheduling, as cheaply as the store can."""
        ...

    def get(self, task_id: TaskId) -> TaskSnapshot:
        """One task; TaskNotFoundError when it does not exist."""
        ...

    def list_tasks(self, state: TaskState | None = None) -> list[TaskSnapshot]: ...

    def linked_tasks(self, spec: TaskSpec) -> list[TaskSnapshot]:
        """The tasks ``spec`` runs after and those that run after it, readable and not
        set aside (as ``list_tasks`` has them), in id order: what a view of that one
        task names (``show``), read without reading every task."""
        ...

    def runs(self, task_id: TaskId, limit: int = DEFAULT_HISTORY_LIMIT) -> list[RunRecord]:
        """The task's runs, newest first."""
        ...

    def record_run_pid(self, run_id: RunId, pid: int) -> None:
        """Remember which process runs an open run (to stop it after a crash)."""
        ...

    def record_run_output(self, run_id: RunId, output: str) -> None:
        """Keep what an open run printed so far (capped), for other processes to show
        and for a crash to keep; a run that has ended is left as it is."""
        ...

    def last_runs(self) -> dict[TaskId, RunRecord]:
        """Each task's most recent finished run (for a view's "last result" column)."""
        ...

    def wait_reasons(self, task_ids: Collection[TaskId] | None = None) -> dict[TaskId, WaitReason]:
        """Why each due task waits, as the process running the schedule last stored it
        (a snapshot read back carries no wait reason: that is the runner's live state);
        ``task_ids``: of those tasks only (a view of one task reads no other's)."""
        ...

    def interrupt_open_runs(self, now: datetime) -> list[RunRecord]:
        """Close every run a previous process left in progress as ``interrupted``."""
        ...

    def quarantined(self) -> list[QuarantinedTask]: ...

    def close(self) -> None: ...


class RequestQueue(Protocol):
    """Requests to the process that runs the schedule, answered in order.

    Another process (the CLI, a window following a daemon) files a request and waits
    for its answer; the process running the schedule reads the open ones, performs
    each and answers it (``None``: done; else the error for its sender). Rows are
    returned raw: judge each with ``requests.read_request``, since anything that can
    write the store may have written anything into them.
    """

    def submit_request(
        self, op: str, task_id: TaskId | None, payload: str | None, now: datetime
    ) -> int:
        """File a request (committed at once); return its id."""
        ...

    def open_requests(self) -> list[RequestRow]:
        """The requests not yet answered, oldest first, as stored."""
        ...

    def complete_request(self, request_id: int, error: str | None, now: datetime) -> None:
        """Answer a request: ``error`` None when it was carried out."""
        ...

    def request_outcome(self, request_id: int) -> tuple[bool, str | None]:
        """(answered, error) of a request this process filed."""
        ...


class ChangeFeed(Protocol):
    """Tells whether another process committed a change since the last look.

    Never blocks and never reads the tasks themselves: a process that follows the
    schedule reloads only when told. For an event loop to sleep until then, a feed
    offers one way to be woken: ``fileno``, a descriptor that becomes readable when a
    change may have arrived (a PostgreSQL connection that LISTENs; memory: a pipe) and
    is drained by ``changed``; or ``watch_paths``, files that every commit writes
    (SQLite: the database and its -wal), for a file watcher. Either may also wake for
    a commit of one's own (then ``changed`` says False); neither replaces asking.
    """

    def changed(self) -> bool:
        """True if another process committed since the previous call. The first call
        starts the watch (PostgreSQL LISTENs from then; a commit before it may go
        unreported), and a server's notice may arrive a moment after its commit."""
        ...

    def fileno(self) -> int | None: ...

    def watch_paths(self) -> tuple[str, ...]:
        """Files a commit by another process writes (empty: use ``fileno``)."""
        ...


@dataclass(frozen=True, slots=True)
class TaskChanges:
    """What changed in the tasks since a follower last looked (see ``FollowedStore``).

    ``changed``: new or different tasks, each with the wait reason the process running
    the schedule stored laid over it; ``removed``: ids gone (deleted or set aside);
    ``marks``: opaque, to pass to the next ``task_changes`` call.
    """

    changed: list[TaskSnapshot]
    removed: list[TaskId]
    marks: Mapping[TaskId, object]


class FollowedStore(Protocol):
    """Reads for a process that follows a schedule another one runs: only what changed.

    A follower is told by its ``ChangeFeed`` *that* something changed, not what; these
    let it read what did without decoding every task and run again.
    """

    def task_changes(self, marks: Mapping[TaskId, object]) -> TaskChanges:
        """The tasks that differ from ``marks`` (those of the previous answer; {} for
        every task), in id order."""
        ...

    def last_run_ids(self) -> dict[TaskId, int]:
        """The id of each task's most recent finished run (cheap: no run is decoded)."""
        ...

    def runs_by_id(self, run_ids: Collection[int]) -> list[RunRecord]:
        """Those runs, in id order; ids no longer stored are left out."""
        ...

    def open_runs(self) -> list[RunRecord]:
        """The runs in progress, with their output so far, as last written."""
        ...


class Checkpointer(Protocol):
    """Folds a store's write-ahead log back into it, on a thread of its own."""

    def checkpoint(self) -> tuple[int, int]: ...

    def close(self) -> None: ...


class StoreUpkeep(Protocol):
    """What the one process running the schedule looks after, beyond reads and writes.

    A file can be deleted or replaced under an open connection (SQLite), a server has
    no such failure (PostgreSQL), memory has neither; each backend answers for itself,
    so the service never asks which backend it has.
    """

    # How a command's TASKGUI_DB names this store, for a taskgui the command starts to
    # open the same one; None when nothing outside this process can open it.
    location: str | None

    def take_over_checkpoints(self) -> Callable[[], Checkpointer] | None:
        """Stop checkpointing inside commits, and return what opens a ``Checkpointer``
        for the caller to run on a thread of its own; None if the store needs none."""
        ...

    def verify_file(self, *, companions: bool = True) -> None:
        """Raise DatabaseReplacedError if the store's name no longer leads to what this
        connection has open (``companions``: its side files too). Cheap: every wake."""
        ...

    def save_what_is_open(self, now: datetime) -> str:
        """After ``verify_file`` failed: keep what this connection still reads, and
        say what was done (for the person's message)."""
        ...


# A batch of a stream of every task: decoded tasks, and the ids of rows that could not
# be decoded (for the owner to read again through its own connection: see task_stream).
TaskBatch = tuple[list[TaskSnapshot], list[TaskId]]


class TaskStreams(Protocol):
    """Every stored task, read off the schedule's thread (a window's start)."""

    def task_stream(self) -> Callable[[], Iterator[TaskBatch]] | None:
        """What reads every task, in id order and in batches, on a connection of its
        own: to be called on a thread of its own, handing over plain data only. None
        if the store offers none (the owner then reads them itself, a chunk a turn)."""
        ...


class ScheduleStore(TaskRepository, RequestQueue, ChangeFeed, StoreUpkeep, TaskStreams, Protocol):
    """A backend that can hold a schedule shared by several processes."""


@dataclass(frozen=True, slots=True)
class ScheduleHolder:
    """The process that runs a schedule: its ``pid``, or None when it did not say."""

    pid: int | None


class HolderProbe(Protocol):
    """Who runs the schedule of this store now, for a follower to name (and to notice
    when nobody does any more, so it can offer to run it itself).

    SQLite answers from its scheduler lock file; a backend with nothing to ask says
    None. Never blocks for long: one look, no waiting for the holder.
    """

    def schedule_holder(self) -> ScheduleHolder | None:
        """The holder now, or None when no process runs the schedule."""
        ...


class FollowableStore(ScheduleStore, FollowedStore, HolderProbe, Protocol):
    """A shared schedule that a window in another process can follow cheaply."""


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def storable_text(text: str) -> str:
    """``text`` with any lone surrogate replaced by U+FFFD, so SQLite can store it.

    A runner that decodes output with ``errors="surrogateescape"`` hands over lone
    surrogates for bytes that are not UTF-8; sqlite3 cannot bind them and would fail
    the whole transaction, losing the run's result. One bad byte is not worth that.
    """
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _LONE_SURROGATE.sub("\ufffd", text)
    return text


def cap_output(text: str, limit: int = OUTPUT_CAP_BYTES) -> str:
    """Keep the tail of ``text`` within ``limit`` bytes of UTF-8, the marker that says
    how much was cut included (``core.output_cap``, the one cap and marker), made
    storable first (see storable_text)."""
    return cap_text(storable_text(text), limit)


def unstorable_text_error(spec: TaskSpec) -> InvalidTaskError | None:
    """The error to refuse ``spec`` with if SQLite could not store its text, else None.

    The name and the concurrency key are stored as they are; a lone surrogate in them
    (say, from ``os.fsdecode`` of a file name that is not UTF-8) cannot be. The JSON
    columns escape such characters and are fine.
    """
    for what, value in (("name", spec.name), ("concurrency key", spec.concurrency_key)):
        if value is None or value.isascii():
            continue
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            shown = value.encode("utf-8", "backslashreplace").decode("utf-8")
            return InvalidTaskError(
                f'the task\'s {what} "{shown}" holds characters that cannot be saved '
                f"(bytes that are not UTF-8, shown as \\u escapes); retype the {what}"
            )
    return None


def check_storable(spec: TaskSpec) -> None:
    """Raise InvalidTaskError if SQLite could not store ``spec``'s text."""
    error = unstorable_text_error(spec)
    if error is not None:
        raise error


__all__ = ["RunRecord"]  # re-exported: it moved to core, where views can reach it
