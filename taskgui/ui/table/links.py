"""The table's "run after" texts: "waiting for A (3)" and the tooltip naming the tasks
a row runs after and before.

Names are read from the model's rows when a cell or tooltip is drawn, so a rename
shows at once and nothing is kept in step. The tasks that run after a row are found
by a pass over the rows, done only for a tooltip (when a person hovers), never per
paint. Every text here is plain text (the model wraps tooltips as such).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

from taskgui.core.dependency_text import name_of, upstream_text, waiting_for
from taskgui.core.states import TaskState, WaitReason
from taskgui.core.task import TaskId
from taskgui.ui.plain_text import isolated
from taskgui.ui.table.row_entry import RowEntry

MAX_LISTED = 10  # downstream tasks named in a tooltip; the rest are counted


Rows = Callable[[], Mapping[TaskId, RowEntry]]


class _Names(Mapping[TaskId, str]):
    """Task id -> name as set into a sentence (``isolated``), read from the rows (no copy)."""

    def __init__(self, rows: Rows) -> None:
        self._rows = rows

    def __getitem__(self, task_id: TaskId) -> str:
        return isolated(self._rows()[task_id].snapshot.spec.name)

    def __iter__(self) -> Iterator[TaskId]:
        return iter(self._rows())

    def __len__(self) -> int:
        return len(self._rows())


class TaskLinks:
    """The "run after" words for the table's columns; ``rows`` gives the model's rows
    as they are now (a reset replaces the table)."""

    def __init__(self, rows: Rows) -> None:
        self._rows = rows
        self.names = _Names(rows)

    def waits_upstream(self, entry: RowEntry) -> bool:
        status = entry.snapshot.status
        return status.waiting is WaitReason.UPSTREAM and status.state is not TaskState.RUNNING

    def waiting(self, entry: RowEntry) -> str:
        """``waiting for A (3), C (5)``."""
        return waiting_for(entry.snapshot, self.names)

    def tooltip(self, entry: RowEntry) -> str | None:
        """``Runs after: ...`` and ``Runs before: ...``, or None for a task with neither."""
        spec = entry.snapshot.spec
        lines = []
        if spec.after:
            lines.append(f"Runs {upstream_text(spec, self.names)}")
        followers = [
            other.snapshot.spec.id
            for other in self._rows().values()
            if any(edge.task_id == spec.id for edge in other.snapshot.spec.after)
        ]
        if followers:
            followers.sort()
            named = ", ".join(name_of(task_id, self.names) for task_id in followers[:MAX_LISTED])
            more = len(followers) - MAX_LISTED
            lines.append(f"Runs before: {named}" + (f" and {more} more" if more > 0 else ""))
        return "\n".join(lines) or None
