"""Tasks the engine knows by id and next run time only, until one is needed.

A cold start with 100,000 stored tasks cannot afford to decode 100,000 definitions
before the timer is armed: turning rows into Python objects is most of the time. And
a daemon need not hold them afterwards either: most of a large schedule is idle for
hours, and a decoded task costs about a kilobyte. So the store hands the engine, per
task, just its id and (if queued) its next run time, kept in flat arrays
(``ColdTasks``, about 25 bytes a task), and the whole task is fetched from a
``TaskSource`` when something touches it or when it nears its time (``load_due``):
the time queue holds only the tasks read so far, and the engine's deadline is the
earlier of its head and the cold tasks' first run time.

``TaskTable`` is the engine's id -> entry map with that behaviour built in: a plain
dict for every task already loaded (the hot path costs nothing extra), and
``__missing__`` fetches a cold one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from taskgui.core.engine.cold import ColdTasks
from taskgui.core.engine.entry import TaskEntry
from taskgui.core.errors import InvalidTaskError, UnreadableTaskError
from taskgui.core.status import TaskSnapshot
from taskgui.core.task import TaskId


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
    in the time queue, its next run time in integer microseconds since the epoch
    (None otherwise): a ``ColdTasks`` built straight from the store's cursor, or any
    iterable of pairs. None of these tasks may be stored as running, run after other
    tasks or be paused for a while: those are loaded whole (loading sends a running
    one to its retry policy; the index of who runs after whom and the resume heap
    must be complete from the start).
    """

    queued: ColdTasks | Iterable[tuple[TaskId, int | None]]
    source: TaskSource


class TaskTable(dict[TaskId, TaskEntry]):
    """The engine's tasks: loaded entries, plus deferred ones fetched on first lookup.

    Deferred tasks are of two kinds: *cold* ones, never read since the start (in the
    ``ColdTasks`` arrays, in no queue), and *returned* ones, read, run and put back
    (``give_back``: the entry dropped, the time queue's key kept, the run time noted).
    ``table[task_id]`` loads either (KeyError if unknown; UnreadableTaskError if its
    row cannot be read, leaving it deferred). ``get``, ``in``, ``len`` and iteration
    see loaded entries only; ``knows`` and ``total`` count every task.

    ``on_load`` sees every entry as it is loaded, so the engine can queue it (or put
    its kept key right, for a returned task).
    """

    __slots__ = ("_cold", "_on_load", "_returned", "_source")

    def __init__(self, on_load: Callable[[TaskEntry], None]) -> None:
        super().__init__()
        self._cold: ColdTasks | None = None
        self._returned: dict[TaskId, int | None] = {}  # id -> run at (µs) or None
        # Kept once given: giving tasks back needs it, and what it holds is small.
        self._source: TaskSource | None = None
        self._on_load = on_load

    def __missing__(self, task_id: TaskId) -> TaskEntry:
        if not self.is_deferred(task_id):
            raise KeyError(task_id)
        assert self._source is not None
        entry = TaskEntry.restored(self._source.fetch(task_id))
        self._take(task_id, entry)
        self[task_id] = entry
        self._on_load(entry)
        return entry

    def clear(self) -> None:
        super().clear()
        self._cold = None
        self._returned = {}
        self._source = None

    def defer(self, deferred: DeferredTasks, first_seq: int) -> int:
        """Take on ``deferred``; return the next free seq.

        Every task gets a seq in id order, the order a full load gives them, so
        ties between equal run times break the same way either way.
        """
        queued = deferred.queued
        cold = queued if isinstance(queued, ColdTasks) else ColdTasks(queued)
        next_seq = cold.number_from(first_seq)
        if any(cold.position(task_id) is not None for task_id in self):
            raise InvalidTaskError("a stored task id appears twice")
        self._cold = cold if len(cold) else None
        self._source = deferred.source
        return next_seq

    def is_deferred(self, task_id: object) -> bool:
        """Known by id and run time only (cold or returned)."""
        if task_id in self._returned:
            return True
        return self._cold is not None and self._cold.position(task_id) is not None

    def is_returned(self, task_id: TaskId) -> bool:
        return task_id in self._returned

    def returned_run_at_us(self, task_id: TaskId) -> int | None:
        """A returned task's run time (µs since the epoch), as its time-queue key has it."""
        return self._returned.get(task_id)

    @property
    def returned_count(self) -> int:
        return len(self._returned)

    def knows(self, task_id: object) -> bool:
        return task_id in self or self.is_deferred(task_id)

    def total(self) -> int:
        return len(self) + self.deferred_count

    @property
    def deferred_count(self) -> int:
        return len(self._returned) + (0 if self._cold is None else len(self._cold))

    @property
    def can_give_back(self) -> bool:
        """Whether a loaded task can be given back: only with a store to read it from."""
        return self._source is not None

    def give_back(self, entry: TaskEntry, run_at_us: int | None) -> None:
        """Drop a loaded entry, keeping the task as returned: its row in the store is
        what the entry says (the caller committed every change), and the time queue
        keeps its key (``run_at_us``, None if it is in no queue)."""
        task_id = entry.spec.id
        del self[task_id]
        self._returned[task_id] = run_at_us

    def next_cold_us(self) -> int | None:
        """The earliest run time of a cold task (µs since the epoch); None if none."""
        return None if self._cold is None else self._cold.head_us()

    def drop_deferred(self, task_id: TaskId) -> None:
        """Forget a deferred task that could not be read."""
        if self._returned.pop(task_id, _ABSENT) is not _ABSENT:
            return
        if self._cold is not None and (pos := self._cold.position(task_id)) is not None:
            self._cold.take(pos)
            self._release_cold_when_done()

    def load_these(self, task_ids: Iterable[TaskId]) -> list[UnreadableTaskError]:
        """Load those of ``task_ids`` still deferred, in batches; as ``load_deferred``."""
        return self._load(sorted(t for t in task_ids if self.is_deferred(t)))

    def load_due(self, until_ts: float, limit: int | None = None) -> list[UnreadableTaskError]:
        """Load up to ``limit`` cold tasks due at ``until_ts`` (epoch seconds) or
        before, earliest first; as ``load_deferred``. (Returned ones are in the time
        queue: the engine finds those there.)"""
        if self._cold is None:
            return []
        return self._load(sorted(self._cold.due_by(until_ts, limit)))

    def load_deferred(self, limit: int | None = None) -> list[UnreadableTaskError]:
        """Load up to ``limit`` deferred tasks (all when None), lowest ids first.

        Returns the errors of those that could not be read; they stay deferred, for
        the engine to drop.
        """
        wanted = [] if self._cold is None else self._cold.lowest(limit)
        if self._returned and (limit is None or len(wanted) < limit):
            wanted = sorted([*wanted, *self._returned])[:limit]
        return self._load(wanted)

    def adopt(self, snapshots: Iterable[TaskSnapshot]) -> None:
        """Take tasks read elsewhere (a window's start reads them on a thread of its
        own): those still deferred become loaded, as if fetched here; the rest are
        ignored (a deferred task's row cannot change meanwhile: any change reads it
        first)."""
        if self.deferred_count:
            self._restore(snapshots)

    def _load(self, wanted: list[TaskId]) -> list[UnreadableTaskError]:
        if not wanted:
            return []
        assert self._source is not None
        snapshots, errors = self._source.fetch_many(wanted)
        self._restore(snapshots)
        return errors

    def _take(self, task_id: TaskId, entry: TaskEntry) -> None:
        """The task is being loaded: it is deferred no more. A cold one's seq is its
        place in the arrays; a returned one's is set by ``on_load`` from its key."""
        if self._returned.pop(task_id, _ABSENT) is not _ABSENT:
            return
        cold = self._cold
        assert cold is not None
        pos = cold.position(task_id)
        assert pos is not None
        cold.take(pos)
        entry.seq = cold.seq(pos)
        self._release_cold_when_done()

    def _release_cold_when_done(self) -> None:
        if self._cold is not None and not len(self._cold):
            self._cold = None  # and its arrays

    def _restore(self, snapshots: Iterable[TaskSnapshot]) -> None:
        restored = TaskEntry.restored
        on_load = self._on_load
        for snapshot in snapshots:
            task_id = snapshot.spec.id
            if not self.is_deferred(task_id):  # read twice in one batch, or loaded meanwhile
                continue
            entry = restored(snapshot)
            self._take(task_id, entry)
            self[task_id] = entry
            on_load(entry)


_ABSENT = object()
