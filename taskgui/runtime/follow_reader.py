"""The reads and writes of a window that follows a schedule run elsewhere, off the GUI.

``RemoteScheduler`` (``remote``) is what the window sees; this is what it does with
the database, on the follower's own thread (``follow_worker``) once it has started:
a *look* asks the change feed, reads only what changed (``FollowedStore``), the open
runs' output, who runs the schedule, the answers to requests sent, and on a shared
schedule the nodes, and hands all of it back as one frozen ``Look`` for the GUI
thread to apply. No Qt here, so a test can look synchronously.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from taskgui.core.clock import Clock
from taskgui.core.nodes import NodeInfo
from taskgui.core.operation import Op
from taskgui.core.status import RunRecord, TaskSnapshot
from taskgui.core.task import TaskId, TaskSpec
from taskgui.store.errors import DatabaseReplacedError
from taskgui.store.protocols import FollowableStore
from taskgui.store.requests import ADDED_PER_REQUEST, added_ids_payload

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


def verb(op: Op) -> str:
    """What a request does, for a message ("Could not pause ...")."""
    return _VERBS.get(op, op.value)


@dataclass(frozen=True, slots=True, kw_only=True)
class Look:
    """What one look found (empty when the store had no news)."""

    owner: str
    changed: Sequence[TaskSnapshot] = ()  # new or different tasks
    removed: Sequence[TaskId] = ()
    ended: Sequence[RunRecord] = ()  # runs that ended since the last look
    output: Mapping[int, tuple[RunRecord, str]] = field(default_factory=dict)  # new output
    problems: Sequence[str] = ()  # refused or unanswered requests, for a person
    pending: int = 0
    nodes: Sequence[NodeInfo] | None = None  # a shared schedule's, else None
    lost: str = ""  # the store is gone for good (its file was replaced)


@dataclass(frozen=True, slots=True)
class _Request:
    op: Op
    name: str
    deadline: float  # monotonic


class FollowReader:
    """Looks at a followed store and files requests in it; one thread at a time.

    ``owner`` names who runs the schedule ("" for nobody); ``nodes`` lists a shared
    schedule's nodes (None: not a shared schedule).
    """

    def __init__(
        self,
        repository: FollowableStore,
        clock: Clock,
        *,
        owner: Callable[[], str],
        answer_timeout: float,
        nodes: Callable[[], Sequence[NodeInfo]] | None = None,
    ) -> None:
        self.repository = repository
        self._clock = clock
        self._owner = owner
        self._answer_timeout = answer_timeout
        self._nodes = nodes
        self._marks: Mapping[TaskId, object] = {}
        self._tasks: dict[TaskId, TaskSnapshot] = {}
        self._last: dict[TaskId, int] = {}
        self._printed: dict[int, str] = {}
        self._pending: dict[int, _Request] = {}
        self._own_change = False

    @property
    def pending(self) -> int:
        return len(self._pending)

    def first(self) -> Look:
        """Everything as it is now, and the watch started. Raises StoreError."""
        owner = self._owner()
        self.repository.changed()  # what is read next is news from here on
        changes = self.repository.task_changes({})
        self._marks = changes.marks
        self._tasks = {snapshot.id: snapshot for snapshot in changes.changed}
        self._last = self.repository.last_run_ids()
        nodes = None if self._nodes is None else list(self._nodes())
        return Look(owner=owner, changed=list(self._tasks.values()), nodes=nodes)

    def look(self) -> Look:
        """What changed since the last look. Raises StoreError."""
        try:
            self.repository.verify_file()
        except DatabaseReplacedError as error:
            return Look(owner="", lost=str(error))
        owner = self._owner()
        changed: list[TaskSnapshot] = []
        removed: list[TaskId] = []
        ended: list[RunRecord] = []
        output: dict[int, tuple[RunRecord, str]] = {}
        # | not or: the feed is drained either way. A change this process committed
        # is no news to the feed (it reports other connections'), but is to the view.
        if self.repository.changed() | self._own_change:
            self._own_change = False
            changed, removed, ended = self._read_changes()
            output = self._read_output()
        problems = self._check_answers(owner) if self._pending else []
        nodes = None if self._nodes is None else list(self._nodes())
        return Look(
            owner=owner, changed=changed, removed=removed, ended=ended, output=output,
            problems=problems, pending=len(self._pending), nodes=nodes,
        )  # fmt: skip

    def _read_changes(self) -> tuple[list[TaskSnapshot], list[TaskId], list[RunRecord]]:
        changes = self.repository.task_changes(self._marks)
        self._marks = changes.marks
        tasks = self._tasks
        removed = [task_id for task_id in tasks if task_id not in changes.marks]
        for task_id in removed:
            del tasks[task_id]
            self._last.pop(task_id, None)
        for snapshot in changes.changed:
            tasks[snapshot.id] = snapshot
        latest = self.repository.last_run_ids()
        ended = [run_id for task_id, run_id in latest.items() if self._last.get(task_id) != run_id]
        self._last = latest
        records = self.repository.runs_by_id(ended) if ended else []
        return changes.changed, removed, [r for r in records if r.task_id in tasks]

    def _read_output(self) -> dict[int, tuple[RunRecord, str]]:
        printed: dict[int, str] = {}
        news: dict[int, tuple[RunRecord, str]] = {}
        for record in self.repository.open_runs():
            printed[record.id] = record.output
            if record.output and self._printed.get(record.id) != record.output:
                news[record.id] = (record, record.output)
        self._printed = printed
        return news

    # ------------------------------------------------------------ requests

    def changed_here(self) -> None:
        """This process wrote to the store (a change made here): read at the next look."""
        self._own_change = True

    def submit(self, op: Op, task_id: TaskId | None, name: str, payload: str | None = None) -> None:
        """File a request for whoever runs the schedule; its answer is checked by looks."""
        request_id = self.repository.submit_request(op, task_id, payload, self._clock.now())
        deadline = self._clock.monotonic() + self._answer_timeout
        self._pending[request_id] = _Request(op, name, deadline)

    def add(self, specs: Sequence[TaskSpec], announce: bool) -> list[TaskSnapshot]:
        """Store new tasks in one transaction; ``announce``: tell the owner of them, one
        by its id, many in notices of ``ADDED_PER_REQUEST`` (an import of 2,500 filed
        2,500 requests, each waited for at every look; a review)."""
        stored = self.repository.add_tasks(specs, self._clock.now()) if specs else []
        if announce and len(stored) == 1:
            self.submit(Op.ADDED, stored[0].id, stored[0].name)
        elif announce:
            for at in range(0, len(stored), ADDED_PER_REQUEST):
                chunk = [spec.id for spec in stored[at : at + ADDED_PER_REQUEST]]
                name = f"{len(chunk):,} imported tasks"
                self.submit(Op.ADDED, None, name, added_ids_payload(chunk))
        added = [self.repository.get(spec.id) for spec in stored]
        for snapshot in added:  # known here: a look that sees it is not news
            self._tasks[snapshot.id] = snapshot
        return added

    def history(self, task_id: TaskId, limit: int) -> list[RunRecord]:
        return self.repository.runs(task_id, limit)

    def _check_answers(self, owner: str) -> list[str]:
        now = self._clock.monotonic()
        problems = []
        for request_id, request in list(self._pending.items()):
            done, error = self.repository.request_outcome(request_id)
            if done:
                del self._pending[request_id]
                if error:
                    problems.append(f"Could not {verb(request.op)} “{request.name}”: {error}")
            elif now >= request.deadline:
                del self._pending[request_id]
                problems.append(
                    f"{owner or 'The scheduler'} did not answer the request to "
                    f"{verb(request.op)} “{request.name}”; it stays queued and may still be "
                    "carried out"
                )
        return problems
