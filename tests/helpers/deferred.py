"""An in-memory ``TaskSource``, to load an engine lazily without a database."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta

from taskgui.core.engine.deferred import DeferredTasks
from taskgui.core.errors import UnreadableTaskError
from taskgui.core.states import SlotKind, TaskState
from taskgui.core.status import TaskSnapshot
from taskgui.core.task import TaskId

UNREADABLE = "not valid (test)"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class DictSource:
    """Serves stored snapshots by id; ids in ``unreadable`` fail as a bad row would."""

    def __init__(self, snapshots: Iterable[TaskSnapshot], unreadable: Iterable[TaskId] = ()):
        self._snapshots = {snapshot.id: snapshot for snapshot in snapshots}
        self.ids = set(self._snapshots)
        self.unreadable = set(unreadable)
        self.fetched: list[TaskId] = []

    def store(self, snapshots: Iterable[TaskSnapshot]) -> None:
        """What a commit does: these are the rows now."""
        for snapshot in snapshots:
            self._snapshots[snapshot.id] = snapshot
            self.ids.add(snapshot.id)

    def fetch(self, task_id: TaskId) -> TaskSnapshot:
        self.fetched.append(task_id)
        if task_id in self.unreadable or task_id not in self._snapshots:
            raise UnreadableTaskError(task_id, UNREADABLE)
        return self._snapshots[task_id]

    def fetch_many(
        self, task_ids: Sequence[TaskId]
    ) -> tuple[list[TaskSnapshot], list[UnreadableTaskError]]:
        found, errors = [], []
        for task_id in task_ids:
            try:
                found.append(self.fetch(task_id))
            except UnreadableTaskError as error:
                errors.append(error)
        return found, errors


def queued_at_us(snapshot: TaskSnapshot) -> int | None:
    """What the store reads for a deferred task: its run time if it waits in the heap."""
    status = snapshot.status
    at, kind = status.next_run_at, status.slot_kind
    if at is None or kind is None or status.state.is_terminal:
        return None
    if snapshot.spec.paused and kind is not SlotKind.MANUAL:
        return None
    return (at - _EPOCH) // timedelta(microseconds=1)


def deferred(snapshots: Iterable[TaskSnapshot], source: DictSource) -> DeferredTasks:
    ordered = sorted(snapshots, key=lambda snapshot: snapshot.id)
    assert all(snapshot.state is not TaskState.RUNNING for snapshot in ordered)
    return DeferredTasks([(s.id, queued_at_us(s)) for s in ordered], source)
