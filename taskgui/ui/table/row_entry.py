"""What the task table knows of one task, with what is derived from it cached."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from taskgui.core.states import TaskState
from taskgui.core.status import TaskSnapshot
from taskgui.core.task import TaskId
from taskgui.ui.table.formatting import LastRun

# A sort key not computed yet (None is no good: no key is None, but it reads as one).
UNSET: Any = object()


class RowEntry:
    """One task's row: its latest snapshot and last run, plus caches.

    ``keys`` holds the sort key of each column, computed on first use, so sorting by a
    column a second time reads them back. Every cached field is cleared when the
    snapshot or the last run changes. ``seq`` numbers rows in the order they were
    inserted, which is always their source row order (rows are only ever appended or
    removed): the proxy's key for "unsorted".
    """

    __slots__ = ("haystack", "keys", "last_run", "schedule", "seq", "snapshot")

    def __init__(self, snapshot: TaskSnapshot, last_run: LastRun | None) -> None:
        self.snapshot = snapshot
        self.last_run = last_run
        self.seq = -1  # set when the task becomes a row
        self.keys: list[Any] | None = None  # per column; allocated on first use
        self.schedule: str | None = None
        self.haystack: str | None = None  # casefolded name and command, built on demand

    def update(self, snapshot: TaskSnapshot) -> None:
        if snapshot.spec is not self.snapshot.spec:
            self.schedule = None
            self.haystack = None
        self.snapshot = snapshot
        self.keys = None

    def set_last_run(self, last_run: LastRun, column: int) -> None:
        """Record the last run; ``column`` is the one whose sort key depends on it."""
        self.last_run = last_run
        if self.keys is not None:
            self.keys[column] = UNSET

    def search_text(self) -> str:
        """Casefolded name and command line, for text search (cached)."""
        haystack = self.haystack
        if haystack is None:
            spec = self.snapshot.spec
            haystack = self.haystack = f"{spec.name}\0{spec.command.line}".casefold()
        return haystack

    def effective_last_run(self) -> LastRun | None:
        """The recorded last run, or what the engine's status says of it."""
        if self.last_run is not None:
            return self.last_run
        status = self.snapshot.status
        if status.last_outcome is None:
            return None
        return LastRun(outcome=status.last_outcome, finished_at=status.last_run_at)


def found_states(
    entries: Mapping[TaskId, RowEntry], task_ids: Iterable[TaskId], needle: str
) -> list[tuple[TaskId, TaskState]]:
    """(id, state) of each of ``task_ids`` whose search text holds ``needle``; the
    cached text is read inline, as this runs over every task per keystroke."""
    found: list[tuple[TaskId, TaskState]] = []
    for task_id in task_ids:
        entry = entries.get(task_id)
        if entry is None:
            continue
        haystack = entry.haystack
        if haystack is None:
            haystack = entry.search_text()
        if needle in haystack:
            found.append((task_id, entry.snapshot.status.state))
    return found
