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
    """The engine's tasks: loaded entries, plus cold ones fetched on first lookup.

    ``table[task_id]`` loads a cold task (KeyError if unknown; UnreadableTaskError
    if its row cannot be read, leaving it cold). ``get``, ``in``, ``len`` and
    iteration see loaded entries only; ``knows`` and ``total`` count both.

    ``on_load`` sees every entry as it is loaded, so the engine can queue it: a cold
    task is in no queue until it is read.
    """

    __slots__ = ("_cold", "_on_load", "_source")

    def __init__(self, on_load: Callable[[TaskEntry], None]) -> None:
        super().__init__()
        self._cold: ColdTasks | None = None
        self._source: TaskSource | None = None
        self._on_load = on_load

    def __missing__(self, task_id: TaskId) -> TaskEntry:
        cold = self._cold
        pos = None if cold is None else cold.position(task_id)
        if pos is None:
            raise KeyError(task_id)
        assert cold is not None and self._source is not None
        entry = TaskEntry.restored(self._source.fetch(task_id))
        cold.take(pos)
        entry.seq = cold.seq(pos)
        self._release_source_when_done()
        self[task_id] = entry
        self._on_load(entry)
        return entry

    def clear(self) -> None:
        super().clear()
        self._cold = None
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
        self._source = deferred.source if len(cold) else None
        return next_seq

    def knows(self, task_id: object) -> bool:
        return task_id in self or (
            self._cold is not None and self._cold.position(task_id) is not None
        )

    def total(self) -> int:
        return len(self) + self.deferred_count

    @property
    def deferred_count(self) -> int:
        return 0 if self._cold is None else len(self._cold)

    def next_cold_us(self) -> int | None:
        """The earliest run time of a cold task (µs since the epoch); None if none."""
        return None if self._cold is None else self._cold.head_us()

    def drop_deferred(self, task_id: TaskId) -> None:
        """Forget a cold task that could not be read."""
        if self._cold is not None and (pos := self._cold.position(task_id)) is not None:
            self._cold.take(pos)
            self._release_source_when_done()

    def load_these(self, task_ids: Iterable[TaskId]) -> list[UnreadableTaskError]:
        """Load those of ``task_ids`` still cold, in batches; as ``load_deferred``."""
        cold = self._cold
        if cold is None:
            return []
        return self._load(sorted(t for t in task_ids if cold.position(t) is not None))

    def load_due(self, until_ts: float, limit: int | None = None) -> list[UnreadableTaskError]:
        """Load up to ``limit`` cold tasks due at ``until_ts`` (epoch seconds) or
        before, earliest first; as ``load_deferred``."""
        if self._cold is None:
            return []
        return self._load(sorted(self._cold.due_by(until_ts, limit)))

    def load_deferred(self, limit: int | None = None) -> list[UnreadableTaskError]:
        """Load up to ``limit`` cold tasks (all when None), lowest ids first.

        Returns the errors of those that could not be read; they stay cold, for
        the engine to drop.
        """
        if self._cold is None:
            return []
        return self._load(self._cold.lowest(limit))

    def adopt(self, snapshots: Iterable[TaskSnapshot]) -> None:
        """Take tasks read elsewhere (a window's start reads them on a thread of its
        own): those still cold become loaded, as if fetched here; the rest are ignored
        (a cold task's row cannot change while it is cold: any change reads it first)."""
        if self._cold is not None:
            self._restore(snapshots)

    def _load(self, wanted: list[TaskId]) -> list[UnreadableTaskError]:
        if not wanted:
            return []
        assert self._source is not None
        snapshots, errors = self._source.fetch_many(wanted)
        self._restore(snapshots)
        return errors

    def _release_source_when_done(self) -> None:
        if self._cold is not None and not len(self._cold):
            self._cold = None  # and its arrays
            self._source = None  # and with it the store's decoder and its memos

    def _restore(self, snapshots: Iterable[TaskSnapshot]) -> None:
        cold = self._cold
        assert cold is not None
        restored = TaskEntry.restored
        on_load = self._on_load
        for snapshot in snapshots:
            task_id = snapshot.spec.id
            pos = cold.position(task_id)
            if pos is None:  # read twice in one batch, or loaded meanwhile
                continue
            cold.take(pos)
            entry = restored(snapshot)
            entry.seq = cold.seq(pos)
            self[task_id] = entry
            on_load(entry)
        self._release_source_when_done()
