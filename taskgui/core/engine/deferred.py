"""Tasks the engine knows by id and next run time only, until one is first needed.

A cold start with 100,000 stored tasks cannot afford to decode 100,000 definitions
before the timer is armed: turning rows into Python objects is most of the time. So
the store hands the engine, per task, just its id and (if queued) its next run time;
the time heap is built from those, and the whole task is fetched from a
``TaskSource`` the first time anything touches it. The scheduler hydrates the rest
in the background soon after it starts.

``TaskTable`` is the engine's id -> entry map with that behaviour built in: a plain
dict for every task already loaded (the hot path costs nothing extra), and
``__missing__`` fetches a deferred one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Protocol

from taskgui.core.engine.entry import TaskEntry
from taskgui.core.errors import InvalidTaskError, UnreadableTaskError
from taskgui.core.status import TaskSnapshot
from taskgui.core.task import TaskId

# A queued deferred task's place in the time heap: (run at, in epoch seconds; seq).
TimeItem = tuple[TaskId, tuple[float, int]]


class TaskSource(Protocol):
    """Where deferred tasks are fetched from (the store)."""

    def fetch(self, task_id: TaskId) -> TaskSnapshot:
        """The stored task. UnreadableTaskError (after setting the row aside) if it
        cannot be decoded or is gone."""
        ...

    def fetch_many(
        self, task_ids: Sequence[TaskId]
    ) -> tuple[list[TaskSnapshot], list[UnreadableTaskError]]:
        """The stored tasks among ``task_ids`` (ascending), and one error per id that
        could not be read."""
        ...


@dataclass(frozen=True, slots=True)
class DeferredTasks:
    """What the store gives the engine instead of whole tasks.

    ``queued`` holds, in ascending id order, each task's id and, when the task waits
    in the time heap, its next run time in integer microseconds since the epoch
    (None otherwise). None of these tasks may be stored as running: those are
    loaded whole, because loading sends them to their retry policy.
    """

    queued: Sequence[tuple[TaskId, int | None]]
    source: TaskSource


class TaskTable(dict[TaskId, TaskEntry]):
    """The engine's tasks: loaded entries, plus deferred ones fetched on first lookup.

    ``table[task_id]`` loads a deferred task (KeyError if unknown; UnreadableTaskError
    if its row cannot be read, leaving it deferred). ``get``, ``in``, ``len`` and
    iteration see loaded entries only; ``knows`` and ``total`` count both.

    The store's guess at whether a deferred task is queued, and when, comes from a
    few raw columns; ``on_load`` sees every entry as it is loaded, so the engine can
    put its heap right where the decoded task says otherwise.
    """

    __slots__ = ("_deferred", "_on_load", "_source")

    def __init__(self, on_load: Callable[[TaskEntry, bool], None]) -> None:
        super().__init__()
        self._deferred: dict[TaskId, tuple[int, int | None]] = {}  # id -> (seq, at µs)
        self._source: TaskSource | None = None
        self._on_load = on_load  # (entry, whether the store guessed it queued)

    def __missing__(self, task_id: TaskId) -> TaskEntry:
        seq, at = self._deferred[task_id]
        assert self._source is not None
        entry = TaskEntry.restored(self._source.fetch(task_id))
        del self._deferred[task_id]
        self._release_source_when_done()
        entry.seq = seq
        self[task_id] = entry
        self._on_load(entry, at is not None)
        return entry

    def clear(self) -> None:
        super().clear()
        self._deferred.clear()
        self._source = None

    def defer(self, deferred: DeferredTasks, first_seq: int) -> tuple[list[TimeItem], int]:
        """Take on ``deferred``; return their time-heap items and the next free seq.

        Every task gets a seq in id order, the order a full load gives them, so
        ties between equal run times break the same way either way.
        """
        queued = deferred.queued
        items = [
            (task_id, (at / 1_000_000, first_seq + offset))
            for offset, (task_id, at) in enumerate(queued)
            if at is not None
        ]
        table = {task_id: (first_seq + offset, at) for offset, (task_id, at) in enumerate(queued)}
        if len(table) != len(queued) or not table.keys().isdisjoint(self):
            raise InvalidTaskError("a stored task id appears twice")
        self._deferred = table
        self._source = deferred.source
        return items, first_seq + len(queued)

    def knows(self, task_id: object) -> bool:
        return task_id in self or task_id in self._deferred

    def total(self) -> int:
        return len(self) + len(self._deferred)

    @property
    def deferred_count(self) -> int:
        return len(self._deferred)

    def deferred_run_at_us(self, task_id: TaskId) -> int | None:
        """A deferred task's next run time (µs since the epoch); None if not deferred."""
        found = self._deferred.get(task_id)
        return None if found is None else found[1]

    def drop_deferred(self, task_id: TaskId) -> None:
        """Forget a deferred task that could not be read."""
        del self._deferred[task_id]
        self._release_source_when_done()

    def load_these(self, task_ids: Iterable[TaskId]) -> list[UnreadableTaskError]:
        """Load those of ``task_ids`` still deferred, in batches; as ``load_deferred``."""
        wanted = sorted(task_id for task_id in task_ids if task_id in self._deferred)
        if not wanted:
            return []
        assert self._source is not None
        snapshots, errors = self._source.fetch_many(wanted)
        self._restore(snapshots)
        return errors

    def load_deferred(self, limit: int | None = None) -> list[UnreadableTaskError]:
        """Load up to ``limit`` deferred tasks (all when None), lowest ids first.

        Returns the errors of those that could not be read; they stay deferred, for
        the engine to drop.
        """
        if not self._deferred:
            return []
        assert self._source is not None
        wanted = list(islice(self._deferred, limit))
        snapshots, errors = self._source.fetch_many(wanted)
        self._restore(snapshots)
        return errors

    def _release_source_when_done(self) -> None:
        if not self._deferred:
            self._source = None  # and with it the store's decoder and its memos
            # A dict keeps its table when emptied by pops: about 84 bytes a task once
            # a cold start of a large schedule has loaded everything.
            self._deferred = {}

    def _restore(self, snapshots: Iterable[TaskSnapshot]) -> None:
        deferred = self._deferred
        restored = TaskEntry.restored
        on_load = self._on_load
        for snapshot in snapshots:
            task_id = snapshot.spec.id
            seq, at = deferred.pop(task_id)
            entry = restored(snapshot)
            entry.seq = seq
            self[task_id] = entry
            on_load(entry, at is not None)
        self._release_source_when_done()
