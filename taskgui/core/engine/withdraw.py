"""The withdraw record: how to take back a dispatch whose command never started.

A run dispatched ahead of its time may be overtaken by a more urgent task, and one
still waiting at shutdown is taken back rather than left open. For each run
dispatched but not started, the record keeps the fields of the task's entry before
and after the dispatch, and the definition it was dispatched under: the dispatch can
be undone only while the entry is still exactly as the dispatch left it.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter

from taskgui.core.engine.entry import TaskEntry
from taskgui.core.status import RunId
from taskgui.core.task import TaskSpec

# What a dispatch changes in an entry, to restore it.
_FIELDS = (
    "attempt",
    "slot_kind",
    "slot_at",
    "slot_scheduled",
    "slot_attempt",
    "seq",
    "deferred_at",
)
Fields = tuple[object, ...]
capture: Callable[[TaskEntry], Fields] = attrgetter(*_FIELDS)


# (the entry's fields before the dispatch, after it, the definition dispatched): a
# plain tuple, as every dispatch makes one and a frozen dataclass costs 3x to build.
_Record = tuple[Fields, Fields, TaskSpec]


class WithdrawRecords:
    """One record per run dispatched and not yet started (see the module docstring)."""

    __slots__ = ("_records",)

    def __init__(self) -> None:
        self._records: dict[RunId, _Record] = {}

    def clear(self) -> None:
        self._records.clear()

    def record(self, run_id: RunId, before: Fields, entry: TaskEntry) -> None:
        """The run was dispatched: ``before`` was the entry's ``capture`` beforehand,
        and ``entry`` is as the dispatch left it."""
        self._records[run_id] = (before, capture(entry), entry.spec)

    def forget(self, run_id: RunId) -> None:
        """The run started or ended: it can no longer be taken back."""
        self._records.pop(run_id, None)

    def can_withdraw(self, run_id: RunId, entry: TaskEntry | None) -> bool:
        """Whether the run is recorded and its task's entry unchanged since the
        dispatch (not cancelled, edited, paused, resumed or rescheduled)."""
        found = self._records.get(run_id)
        return (
            found is not None
            and entry is not None
            and entry.terminal is None
            and entry.spec is found[2]
            and capture(entry) == found[1]
        )

    def restore(self, run_id: RunId, entry: TaskEntry) -> None:
        """Put the entry's fields back as they were before the dispatch, and forget
        the record. KeyError if the run is not recorded."""
        found = self._records.pop(run_id)
        for name, value in zip(_FIELDS, found[0], strict=True):
            setattr(entry, name, value)
