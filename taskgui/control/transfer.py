"""Export and import against the repository: history for the export, and the writes.

The pure parts (the file format, the crontab, deciding what to add or skip) live in
``core``; this module reads what to export from a repository and writes an import
plan into one.

Atomicity. Tasks to add go into the repository in **one** ``add_tasks`` call, which is
one transaction: all of them or none (the plan was validated completely before). With
replace, the tasks being replaced are deleted in a second transaction, through the
engine, *after* the add: if that second write fails, no definition is lost (both the
old and the new tasks exist) and ``PartialImportError`` names the old ids to delete by
hand. The repository protocol has no single transaction spanning an insert and a
delete; making replace fully atomic would need one.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from taskgui.control.operations import Operations
from taskgui.core.errors import TaskguiError
from taskgui.core.events import Event
from taskgui.core.status import RunRecord
from taskgui.core.task import TaskId, TaskSpec
from taskgui.core.transfer.export_file import build_document
from taskgui.core.transfer.plan import ImportPlan
from taskgui.store.protocols import TaskRepository

# Every run a task still has: the repository prunes to its history limit anyway.
ALL_RUNS = 2**31 - 1


class PartialImportError(TaskguiError):
    """The imported tasks were added, but some tasks they replace could not be deleted."""

    def __init__(self, added: Sequence[TaskSpec], not_deleted: Sequence[TaskId], cause: str):
        ids = " ".join(str(task_id) for task_id in not_deleted)
        super().__init__(
            f"the {len(added)} imported task(s) were added, but the task(s) they replace "
            f"could not be deleted ({cause}); delete them with 'taskgui delete ID' "
            f"(ids: {ids})"
        )
        self.added = list(added)
        self.not_deleted = list(not_deleted)


def export_document(
    repository: TaskRepository, now: datetime, *, with_history: bool = False
) -> dict[str, Any]:
    """Every decodable task's definition; with history, every run each task still has.

    Quarantined tasks (rows that cannot be decoded) are not in it; the caller can say
    so with ``repository.quarantined()``.
    """
    snapshots = repository.list_tasks()
    runs: dict[TaskId, list[RunRecord]] | None = None
    if with_history:
        runs = {snapshot.id: repository.runs(snapshot.id, ALL_RUNS) for snapshot in snapshots}
    return build_document(snapshots, now, runs)


def replace_planned(ops: Operations, plan: ImportPlan, now: datetime) -> list[TaskSpec]:
    """Add the plan's tasks (one transaction), then delete the replaced ones (another).

    ``ops`` must hold the whole schedule (the caller holds the scheduler lock and has
    loaded the engine), so deleting goes through the engine like any delete: a run of
    a replaced task that is still going is asked to stop.
    """
    stored, _ = ops.add(plan.to_add, now) if plan.to_add else ([], [])
    events: list[Event] = []
    doomed = [task_id for task_id in plan.delete_ids if task_id in ops.engine]
    for task_id in doomed:
        events.extend(ops.engine.remove(task_id))
    try:
        ops.repository.apply(events, now)
    except TaskguiError as error:
        raise PartialImportError(stored, doomed, str(error)) from error
    return stored
